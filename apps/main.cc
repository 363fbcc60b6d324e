// The `orrery` command line. Every subcommand owns its flags (CLI11); the
// libraries take plain option structs. Logging goes through glog to stderr;
// stdout carries only what a command prints as its result (the report).
#include <glog/logging.h>

#if defined(__linux__)
#include <sys/auxv.h>
#include <unistd.h>
#endif

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "apps/cli.h"
#include "apps/commands.h"

namespace {

// Every top-level command. A new one (gen, sweep, report, ...) is one
// Add*Command function in its own file and one line here.
using AddCommand = void (*)(orrery::cli::Commands*, CLI::App*);
constexpr AddCommand kCommands[] = {
    orrery::cli::AddRunCommand,      orrery::cli::AddTraceCommands, orrery::cli::AddTopologyCommands,
    orrery::cli::AddPluginsCommands, orrery::cli::AddPeerCommand,   orrery::cli::AddGenCommand,
    orrery::cli::AddPlotCommand,     orrery::cli::AddSweepCommand,  orrery::cli::AddSearchCommand,
    orrery::cli::AddReportCommand,
};

// glibc's malloc backs its heap with transparent huge pages when the
// environment has GLIBC_TUNABLES=glibc.malloc.hugetlb=1, which it reads only
// at start: so the process starts itself once more with it. At 16K NPUs the
// per-rank graphs, system state and report records take about 130,000 page
// faults on 4 KiB pages (expensive in a VM) and miss the TLB on every rank
// walk; with huge pages the faults fall to about 7,000 and a 1-D 16K run takes
// about 13 % less time (docs/benchmarks.md, seventh session). Values are
// unaffected (only where memory comes from).
//
// At most one restart: kRestarted, set for the second start, carries the
// user's GLIBC_TUNABLES (or its absence), which the second start puts back
// for the programs it starts (gnuplot). Skipped when GLIBC_TUNABLES already
// names the tunable (the user's choice), when ORRERY_MALLOC_HUGE_PAGES=0, in
// secure mode (setuid: glibc strips tunables), when the dynamic loader was
// run by hand or under valgrind (the running executable is not orrery), and
// when the restart fails (the run goes on as it is). Older glibc ignores the
// tunable; THP "never" makes it a no-op.
constexpr char kRestarted[] = "ORRERY_MALLOC_RESTARTED";

void StartWithHugePageMalloc(char** argv) {
#if defined(__linux__) && defined(__GLIBC__)
  if (const char* before = std::getenv(kRestarted)) {
    // "=" + the user's value, or "-" when there was none.
    const std::string saved = before;
    if (saved.rfind('=', 0) == 0) {
      setenv("GLIBC_TUNABLES", saved.c_str() + 1, 1);
    } else {
      unsetenv("GLIBC_TUNABLES");
    }
    unsetenv(kRestarted);
    return;
  }
  const char* off = std::getenv("ORRERY_MALLOC_HUGE_PAGES");
  if (off && std::strcmp(off, "0") == 0) return;
  if (getauxval(AT_SECURE) != 0 || getauxval(AT_BASE) == 0) return;
  const char* preload = std::getenv("LD_PRELOAD");
  if (preload && std::strstr(preload, "vgpreload")) return;
  const char* t = std::getenv("GLIBC_TUNABLES");
  if (t && std::strstr(t, "glibc.malloc.hugetlb")) return;
  const bool had = t != nullptr;
  const std::string user = had ? t : "";
  // The executable's own path (not /proc/self/exe: the process would be named "exe").
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0) return;
  self[n] = '\0';
  const std::string saved = had ? "=" + user : std::string("-");
  const std::string v = user.empty() ? std::string("glibc.malloc.hugetlb=1") : user + ":glibc.malloc.hugetlb=1";
  if (setenv(kRestarted, saved.c_str(), 1) != 0) return;
  if (setenv("GLIBC_TUNABLES", v.c_str(), 1) != 0) return;
  execv(self, argv);  // returns only on failure: put the environment back
  if (had) {
    setenv("GLIBC_TUNABLES", user.c_str(), 1);
  } else {
    unsetenv("GLIBC_TUNABLES");
  }
  unsetenv(kRestarted);
#else
  (void)argv;
#endif
}

// The report goes to stdout: a failure to write it (a full disk, a closed
// stdout) is an error of the environment, not a success with a lost report.
int FlushStdout(int code) {
  errno = 0;
  if (std::fflush(stdout) == 0 && std::ferror(stdout) == 0) return code;
  const int err = errno;
  const int failed = orrery::cli::Fail(
      orrery::Status::Env(std::string("stdout: writing the output failed") +
                          (err != 0 ? std::string(" (") + std::strerror(err) + ")" : "")));
  return code == 0 ? failed : code;
}

}  // namespace

int main(int argc, char** argv) {
  StartWithHugePageMalloc(argv);
  FLAGS_logtostderr = true;  // no log files
  google::InitGoogleLogging(argv[0]);
  google::InstallFailureSignalHandler();  // a stack trace on a crash ...
  std::signal(SIGTERM, SIG_DFL);          // ... but `kill` stops `orrery peer` quietly

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
                                                     "'; '" + orrery::cli::FullName(where) +
                                                     " --help' shows its usage)"));
  }
  auto action = commands.Resolve();
  if (!action.ok()) return orrery::cli::Fail(action.status());
  auto level = orrery::cli::IntFlag("--verbose", verbose, 0, 9);
  if (!level.ok()) return orrery::cli::Fail(level.status());
  FLAGS_v = static_cast<int>(level.value());
  return FlushStdout(action.value()());
}
