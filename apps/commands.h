// The `orrery` subcommands. Each Add*Command function adds one top-level
// command (and its subcommands) with the flags it owns; main.cc lists them.
#pragma once
#include <string>
#include <vector>

#include "apps/cli.h"
#include "memory/backend.h"
#include "plugins/loader.h"

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

// Plugins named in ORRERY_PLUGINS (a.so:b.so) followed by `flags` (--plugin, repeatable).
std::vector<std::string> PluginPaths(const std::vector<std::string>& flags);
// Loads every plugin into the registries; fills `loaded` when given.
Status LoadPlugins(const std::vector<std::string>& paths, const PluginRegistries& regs,
                   std::vector<LoadedPlugin>* loaded = nullptr);

}  // namespace orrery::cli
