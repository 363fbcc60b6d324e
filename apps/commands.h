// The `orrery` subcommands. Each Add*Command function adds one top-level
// command (and its subcommands) with the flags it owns; main.cc lists them.
#pragma once
#include <string>
#include <vector>

#include "apps/cli.h"
#include "plugins/registry_set.h"

namespace orrery::cli {

void AddRunCommand(Commands* commands, CLI::App* root);
void AddTraceCommands(Commands* commands, CLI::App* root);
void AddTopologyCommands(Commands* commands, CLI::App* root);
void AddPluginsCommands(Commands* commands, CLI::App* root);
void AddPeerCommand(Commands* commands, CLI::App* root);
void AddGenCommand(Commands* commands, CLI::App* root);
void AddPlotCommand(Commands* commands, CLI::App* root);
void AddSweepCommand(Commands* commands, CLI::App* root);
void AddSearchCommand(Commands* commands, CLI::App* root);
void AddReportCommand(Commands* commands, CLI::App* root);

}  // namespace orrery::cli
