// The `orrery` command line. Every subcommand owns its flags (CLI11); the
// libraries take plain option structs. Logging goes through glog to stderr;
// stdout carries only what a command prints as its result (the report).
#include <glog/logging.h>

#include <csignal>
#include <cstdio>
#include <string>

#include "apps/cli.h"
#include "apps/commands.h"

namespace {

// Every top-level command. A new one (gen, sweep, report, ...) is one
// Add*Command function in its own file and one line here.
using AddCommand = void (*)(orrery::cli::Commands*, CLI::App*);
constexpr AddCommand kCommands[] = {
    orrery::cli::AddRunCommand,     orrery::cli::AddTraceCommands, orrery::cli::AddTopologyCommands,
    orrery::cli::AddPluginsCommands, orrery::cli::AddPeerCommand,   orrery::cli::AddGenCommand,
    orrery::cli::AddPlotCommand,    orrery::cli::AddSweepCommand,  orrery::cli::AddSearchCommand,
    orrery::cli::AddReportCommand,
};

}  // namespace

int main(int argc, char** argv) {
  FLAGS_logtostderr = true;  // no log files
  google::InitGoogleLogging(argv[0]);
  google::InstallFailureSignalHandler();  // a stack trace on a crash ...
  std::signal(SIGTERM, SIG_DFL);           // ... but `kill` stops `orrery peer` quietly

  CLI::App app("Orrery: a simulator of distributed deep-learning training that reads ASTRA-sim inputs", "orrery");
  app.set_version_flag("--version", std::string("orrery ") + ORRERY_VERSION);
  app.footer("'orrery COMMAND --help' lists a command's flags. Exit codes: 0 success, 2 bad input, 1 environment.");
  std::string verbose = "0";
  orrery::cli::Commands commands(&app, &verbose);
  for (AddCommand add : kCommands) add(&commands, &app);
  commands.Finish();

  if (argc < 2) {
    std::fputs(app.help().c_str(), stderr);
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    const CLI::App* where = &app;
    while (!where->get_subcommands().empty()) where = where->get_subcommands().front();
    return orrery::cli::Fail(orrery::Status::Invalid(std::string(e.what()) + " (in '" + orrery::cli::FullName(where) +
                                                     "'; '" + orrery::cli::FullName(where) + " --help' shows its usage)"));
  }
  auto action = commands.Resolve();
  if (!action.ok()) return orrery::cli::Fail(action.status());
  auto level = orrery::cli::IntFlag("--verbose", verbose, 0, 9);
  if (!level.ok()) return orrery::cli::Fail(level.status());
  FLAGS_v = static_cast<int>(level.value());
  return action.value()();
}
