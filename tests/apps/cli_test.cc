// The command line as a user meets it: runs the built binary (ORRERY_BIN) and
// checks --help against the flag tables of docs/cli.md, usage errors (exit 2, one
// `orrery:` line with a did-you-mean), ASTRA-sim's own flags, logging and the
// trace generators over a prefix with stale files.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <chrono>
#include <thread>

#include "gen/toy_traces.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

using testing::TempDir;

struct Cli {
  int rc = -1;
  std::string out, err;
};

using orrery::testing::ReadFileText;

// `env_prefix`: VAR=value words put before the binary (empty: none).
Cli Orrery(const std::string& args, const std::string& env_prefix) {
  TempDir d;
  const std::string cmd = env_prefix + (env_prefix.empty() ? "" : " ") + std::string(ORRERY_BIN) + " " + args + " >" +
                          d.File("out") + " 2>" + d.File("err");
  Cli r;
  const int status = std::system(cmd.c_str());
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = ReadFileText(d.File("out"));
  r.err = ReadFileText(d.File("err"));
  return r;
}

Cli Orrery(const std::string& args) { return Orrery(args, ""); }

bool Has(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

std::set<std::string> FlagsIn(const std::string& text) {
  std::set<std::string> flags;
  static const std::regex kFlag("--[a-z][a-z0-9-]*");
  for (std::sregex_iterator it(text.begin(), text.end(), kFlag), end; it != end; ++it) flags.insert(it->str());
  return flags;
}

// Flags `--help` shows: the first word of each option line, e.g. "-v,--verbose N".
std::set<std::string> HelpFlags(const std::string& help) {
  std::set<std::string> flags;
  std::istringstream in(help);
  for (std::string line; std::getline(in, line);) {
    const size_t start = line.find_first_not_of(' ');
    if (start == std::string::npos || start == 0 || line[start] != '-') continue;
    std::string word = line.substr(start, line.find(' ', start) - start);
    std::stringstream names(word);
    for (std::string n; std::getline(names, n, ',');) {
      if (n.rfind("--", 0) == 0) flags.insert(n);
    }
  }
  flags.erase("--help");
  flags.erase("--verbose");  // every command's, documented once above the tables
  return flags;
}

std::vector<std::string> Cells(std::string row) {
  std::string plain;  // an escaped \| inside a cell is not a cell border
  for (size_t i = 0; i < row.size(); ++i) {
    if (row[i] == '\\' && i + 1 < row.size() && row[i + 1] == '|') {
      plain += '/';
      ++i;
    } else {
      plain += row[i];
    }
  }
  row = plain;
  std::vector<std::string> cells;
  std::stringstream ss(row);
  for (std::string c; std::getline(ss, c, '|');) cells.push_back(c);
  if (!cells.empty()) cells.erase(cells.begin());  // before the first '|'
  return cells;
}

// The flag tables of docs/cli.md: command ("run", "trace gen-dp", ...) -> its flags.
std::map<std::string, std::set<std::string>> DocumentedFlags() {
  std::ifstream in(std::string(ORRERY_SOURCE_DIR) + "/docs/cli.md");
  std::map<std::string, std::set<std::string>> out;
  std::string mode, line;
  int row = 0;
  while (std::getline(in, line)) {
    if (line.rfind("<!-- flags: ", 0) == 0) {
      mode = line.substr(12, line.find(" -->") - 12);
      row = 0;
      continue;
    }
    if (mode.empty()) continue;
    if (line.empty() || line[0] != '|') {
      mode.clear();
      continue;
    }
    if (++row <= 2) continue;  // header and |---|
    const auto cells = Cells(line);
    if (mode == "per command") {
      EXPECT_GE(cells.size(), 3u) << line;
      if (cells.size() < 3) continue;
      std::stringstream words(cells[0]);
      std::string w, name;
      words >> w;  // "`orrery"
      while (words >> w) {
        while (!w.empty() && w.back() == '`') w.pop_back();
        if (w.empty() || !std::all_of(w.begin(), w.end(), [](char c) { return (c >= 'a' && c <= 'z') || c == '-'; }))
          break;
        name += (name.empty() ? "" : " ") + w;
      }
      out[name] = FlagsIn(cells[1]);
    } else {
      auto& f = out[mode.substr(mode.find(' ') + 1)];  // "orrery run" -> "run"
      for (const auto& x : FlagsIn(cells.empty() ? "" : cells[0])) f.insert(x);
    }
  }
  return out;
}

TEST(Cli, EachCommandsHelpListsExactlyTheDocumentedFlags) {
  const auto documented = DocumentedFlags();
  const std::vector<std::string> commands = {"run",
                                             "trace inspect",
                                             "trace check",
                                             "trace to-json",
                                             "trace from-json",
                                             "trace gen-dp",
                                             "trace gen-coll",
                                             "topology generate",
                                             "topology describe",
                                             "plugins list",
                                             "peer",
                                             "plot",
                                             "sweep",
                                             "search",
                                             "report compare"};
  for (const auto& c : commands) {
    ASSERT_TRUE(documented.count(c)) << "docs/cli.md has no flag table row for 'orrery " << c << "'";
  }
  EXPECT_EQ(documented.size(), commands.size());
  EXPECT_GE(documented.at("run").size(), 20u);  // the parser found the whole run table
  for (const auto& [command, flags] : documented) {
    const Cli help = Orrery(command + " --help");
    EXPECT_EQ(help.rc, 0) << command << ": " << help.err;
    EXPECT_EQ(HelpFlags(help.out), flags) << "orrery " << command << " --help disagrees with docs/cli.md:\n"
                                          << help.out;
  }
}

TEST(Cli, RunHelpIsGroupedAndOwnsItsFlags) {
  const Cli help = Orrery("run --help");
  EXPECT_EQ(help.rc, 0);
  for (const char* group :
       {"Inputs:", "Network backend:", "Memory:", "Output:", "Run control:", "ASTRA-sim compatibility"}) {
    EXPECT_TRUE(Has(help.out, group)) << group << " missing in:\n" << help.out;
  }
  EXPECT_FALSE(Has(help.out, "--npus"));
  EXPECT_FALSE(Has(help.out, "--listen"));
  EXPECT_TRUE(Has(help.out, "--workload-configuration"));
}

TEST(Cli, TopLevelHelpAndVersion) {
  for (const char* flag : {"--help", "-h"}) {
    const Cli help = Orrery(flag);
    EXPECT_EQ(help.rc, 0) << flag;
    for (const char* c : {"run", "trace", "topology", "plugins", "peer"}) EXPECT_TRUE(Has(help.out, c)) << c;
  }
  const Cli v = Orrery("--version");
  EXPECT_EQ(v.rc, 0);
  EXPECT_EQ(v.out, std::string("orrery ") + ORRERY_VERSION + "\n");
  EXPECT_EQ(Orrery("").rc, 2);  // no command: usage on stderr
  const Cli run = Orrery("run");
  EXPECT_EQ(run.rc, 2);
  EXPECT_TRUE(Has(run.err, "'orrery run' needs --workload-configuration")) << run.err;
}

TEST(Cli, UnknownFlagSaysDidYouMean) {
  const Cli r = Orrery("run --example=default --iteratons=2");
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err.rfind("orrery: ", 0), 0u) << r.err;
  EXPECT_TRUE(Has(r.err, "unknown flag '--iteratons=2' for 'orrery run' (did you mean '--iterations'?)")) << r.err;
  EXPECT_TRUE(r.out.empty());
  const Cli c = Orrery("trace gne-dp --out=/nonexistent/x");
  EXPECT_EQ(c.rc, 2);
  EXPECT_TRUE(Has(c.err, "unknown command 'gne-dp' for 'orrery trace' (did you mean 'gen-dp'?)")) << c.err;
}

TEST(Cli, FlagOfAnotherCommandIsAnError) {
  const Cli r = Orrery("run --example=default --npus=4");
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(Has(r.err, "orrery: '--npus' is a flag of 'orrery trace gen-")) << r.err;
  EXPECT_TRUE(Has(r.err, "not of 'orrery run'")) << r.err;
  const Cli t = Orrery("trace gen-coll --out=/nonexistent/x --iterations=2");
  EXPECT_EQ(t.rc, 2);
  EXPECT_TRUE(Has(t.err, "'--iterations' is a flag of 'orrery run', not of 'orrery trace gen-coll'")) << t.err;
  const Cli p = Orrery("peer --connections=1 --report-format=json");
  EXPECT_EQ(p.rc, 2);
  EXPECT_TRUE(Has(p.err, "'--report-format' is a flag of 'orrery run'")) << p.err;
}

TEST(Cli, MalformedValuesAreRefusedByTheCheckedParser) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"run --example=default --iterations=0", "--iterations = \"0\": out of range"},
      {"run --example=default --iterations=abc", "--iterations = \"abc\""},
      {"run --example=default --iterations=2.5", "--iterations = \"2.5\""},
      {"run --example=default --remote-timeout-ms=-5", "--remote-timeout-ms = \"-5\": out of range"},
      {"run --example=default --remote-timeout-ms -5", "--remote-timeout-ms = \"-5\": out of range"},
      {"run --example=default --injection-scale=nan", "--injection-scale = \"nan\""},
      {"run --example=default --num-queues-per-dim=0", "--num-queues-per-dim = \"0\""},
      {"run --example=default --report-format=jsn",
       "--report-format = \"jsn\": valid: text, json, csv (did you mean 'json'?)"},
      {"trace gen-dp --out=/nonexistent/x --npus=8x", "--npus = \"8x\""},
      {"trace gen-coll --out=/nonexistent/x --collective=ALL_REDUSE", "did you mean 'ALL_REDUCE'?"},
      {"topology describe \"Ring(4,50GB/s,500ns)\" --bytes=1GB", "--bytes = \"1GB\""},
      {"peer --connections=-1", "--connections = \"-1\""},
      {"peer --listen=127.0.0.1:abc", "--listen = \"127.0.0.1:abc\": port = \"abc\": not an integer"},
      {"peer --listen=127.0.0.1:70000", "port = \"70000\": out of range"},
      {"peer --listen=localhost", "--listen = \"localhost\": expected HOST:PORT or unix:/path"},
      {"run --example=default --network-backend=remote --remote-endpoint=127.0.0.1:0",
       "--remote-endpoint = \"127.0.0.1:0\": port = \"0\": out of range"},
      {"run --example=default -v x", "--verbose = \"x\""},
      {"run --example=default --iterations", "--iterations"},
  };
  for (const auto& [args, needle] : cases) {
    const Cli r = Orrery(args);
    EXPECT_EQ(r.rc, 2) << args << ": " << r.err;
    EXPECT_EQ(r.err.rfind("orrery: ", 0), 0u) << args << ": " << r.err;
    EXPECT_TRUE(Has(r.err, needle)) << args << ": missing '" << needle << "' in: " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << ": one line expected: " << r.err;
  }
}

TEST(Cli, StrayPositionalArgumentsAreErrors) {
  const Cli r = Orrery("run --example=default stray");
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(Has(r.err, "unexpected argument(s) 'stray' for 'orrery run'")) << r.err;
  const Cli t = Orrery("trace inspect a.et b.et");
  EXPECT_EQ(t.rc, 2);
  EXPECT_TRUE(Has(t.err, "unexpected argument(s) 'b.et' for 'orrery trace inspect'")) << t.err;
  const Cli g = Orrery("trace gen-dp /tmp/x --npus=2");
  EXPECT_EQ(g.rc, 2);
  EXPECT_TRUE(Has(g.err, "'/tmp/x'")) << g.err;
}

TEST(Cli, ExampleTogetherWithInputFilesIsAnError) {
  for (const char* flag :
       {"--workload-configuration=x", "--network-configuration x.yml", "--remote-memory-configuration=m.json"}) {
    const Cli r = Orrery(std::string("run --example=default ") + flag);
    EXPECT_EQ(r.rc, 2) << flag;
    EXPECT_TRUE(Has(r.err, "--example=default runs embedded inputs; it cannot be combined with --")) << r.err;
    EXPECT_TRUE(r.out.empty());
  }
}

TEST(Cli, AstraSimFlagsRunUnchangedWithANoteEach) {
  const Cli r = Orrery(
      "run --example=default --logging-configuration=log.toml --logging-folder log --num-queues-per-dim=2 "
      "--compute-scale 1 --comm-scale=2 --injection-scale=1 --rendezvous-protocol");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(Has(r.out, "finished: 117780 ns")) << r.out;  // ASTRA-sim's number for the default example
  for (const char* flag : {"--logging-configuration", "--logging-folder", "--num-queues-per-dim", "--compute-scale",
                           "--comm-scale", "--rendezvous-protocol"}) {
    EXPECT_TRUE(Has(r.err, std::string("orrery: note: ") + flag + " has no effect")) << flag << " in: " << r.err;
  }
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 6) << r.err;
  EXPECT_FALSE(Has(r.err, "--injection-scale")) << r.err;  // honoured, so no note
}

// ASTRA-sim: communication_delay = (int)(endpoint-delay * injection-scale).
TEST(Cli, InjectionScaleMultipliesEndpointDelay) {
  TempDir d;
  d.Write("network.yml", testing::NetworkYaml("Ring", 4, 50, 500));
  ASSERT_TRUE(WriteSingleCollectiveTraces(4, CollectiveKind::kAllReduce, 1 << 20, d.File("trace")).ok());
  auto finished = [&](int endpoint_delay, const std::string& scale) {
    d.Write("system.json", testing::SystemJson("ring", 4, endpoint_delay, 1600));
    const Cli r = Orrery("run --workload-configuration=" + d.File("trace") +
                         " --system-configuration=" + d.File("system.json") +
                         " --network-configuration=" + d.File("network.yml") + " --injection-scale=" + scale);
    EXPECT_EQ(r.rc, 0) << r.err;
    const size_t at = r.out.find("finished: ");
    return at == std::string::npos ? std::string("none") : r.out.substr(at, r.out.find('\n', at) - at);
  };
  EXPECT_EQ(finished(10, "3"), finished(30, "1"));
  EXPECT_EQ(finished(10, "2.57"), finished(25, "1"));  // 25.7 truncated to 25
  EXPECT_NE(finished(10, "1"), finished(30, "1"));     // the delay shows in the result at all
  // Without an endpoint-delay key ASTRA-sim's default 10 ns stays unscaled.
  d.Write("system.json",
          R"({"preferred-dataset-splits": 4, "local-mem-bw": 1600, "all-reduce-implementation": ["ring"]})");
  const std::string args = "run --workload-configuration=" + d.File("trace") +
                           " --system-configuration=" + d.File("system.json") +
                           " --network-configuration=" + d.File("network.yml");
  const Cli unscaled = Orrery(args), scaled = Orrery(args + " --injection-scale=3");
  EXPECT_EQ(unscaled.rc, 0) << unscaled.err;
  EXPECT_EQ(scaled.out, unscaled.out);
}

TEST(Cli, VerboseLogsMilestonesOnStderrOnly) {
  const Cli quiet = Orrery("run --example=default");
  EXPECT_EQ(quiet.rc, 0);
  EXPECT_EQ(quiet.err, "");
  const Cli v = Orrery("run --example=default -v 1");
  EXPECT_EQ(v.rc, 0) << v.err;
  EXPECT_EQ(v.out, quiet.out);
  EXPECT_TRUE(Has(v.err, "t=0 ns rank 0: issued ALL_REDUCE node 0 (1048576 bytes")) << v.err;
  EXPECT_TRUE(Has(v.err, "t=117780 ns rank 0: finished ALL_REDUCE node 0")) << v.err;
}

TEST(Cli, TraceGenRemovesStaleHigherRankFiles) {
  TempDir d;
  const std::string prefix = d.File("job");
  ASSERT_EQ(Orrery("trace gen-coll --npus=12 --out=" + prefix).rc, 0);
  d.Write("job.summary.et", "not a rank");
  d.Write("job.007.et", "not a rank");
  d.Write("jobs.9.et", "another prefix");
  const Cli r = Orrery("trace gen-dp --npus=4 --layers=2 --out " + prefix);
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(Has(r.err, "orrery: note: removed 8 stale trace file(s) of an earlier run with more ranks: " + prefix +
                             ".4.et .. " + prefix + ".11.et"))
      << r.err;
  for (int k = 0; k < 12; ++k) {
    EXPECT_EQ(std::filesystem::exists(prefix + "." + std::to_string(k) + ".et"), k < 4) << k;
  }
  for (const char* kept : {"job.summary.et", "job.007.et", "jobs.9.et"})
    EXPECT_TRUE(std::filesystem::exists(d.File(kept)));
  const Cli again = Orrery("trace gen-coll --npus=4 --out=" + prefix);
  EXPECT_EQ(again.rc, 0);
  EXPECT_EQ(again.err, "");  // nothing stale: nothing said
}

}  // namespace
}  // namespace orrery

namespace orrery {
namespace {

// Invariants abort through glog: the check, its message and a stack trace.
TEST(CliDeathTest, OrreryCheckAbortsThroughGlogWithAStackTrace) {
  EXPECT_DEATH(ORRERY_CHECK(1 + 1 == 3, "arithmetic"), "check '1 \\+ 1 == 3' failed: arithmetic(.|\n)*stack trace");
}

// apps/main.cc starts the binary once more with glibc's huge-page malloc
// tunable. A peer stays up, so the environment it was started with the
// second time can be read from /proc (execv keeps the process id): the
// variables named in `names`, "(unset)" for one that is not there.
#if defined(__linux__) && defined(__GLIBC__)
std::vector<std::string> EnvironOfPeer(const std::string& env_args, const std::vector<std::string>& names) {
  TempDir d;
  const std::string sock = d.File("peer.sock");
  const std::string cmd = "env -u GLIBC_TUNABLES -u ORRERY_MALLOC_HUGE_PAGES -u ORRERY_MALLOC_RESTARTED " + env_args +
                          " " + std::string(ORRERY_BIN) + " peer --listen=unix:" + sock +
                          " >/dev/null 2>&1 & echo $! >" + d.File("pid");
  if (std::system(cmd.c_str()) != 0) return {"(no shell)"};
  const int pid = std::stoi(ReadFileText(d.File("pid")));
  // The peer listens only after main() has run (and restarted, if it does).
  for (int i = 0; i < 2000 && !std::filesystem::exists(sock); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::string environ = ReadFileText("/proc/" + std::to_string(pid) + "/environ");
  kill(pid, SIGTERM);
  if (!std::filesystem::exists(sock)) return {"(peer never listened)"};
  std::replace(environ.begin(), environ.end(), '\0', '\n');
  std::vector<std::string> values(names.size(), "(unset)");
  std::istringstream in(environ);
  for (std::string line; std::getline(in, line);) {
    for (size_t k = 0; k < names.size(); ++k) {
      if (line.rfind(names[k] + "=", 0) == 0) values[k] = line.substr(names[k].size() + 1);
    }
  }
  return values;
}

TEST(Cli, RestartsOnceWithHugePageMalloc) {
  const std::vector<std::string> names = {"GLIBC_TUNABLES", "ORRERY_MALLOC_RESTARTED"};
  // Restarted with the tunable; the marker says there was no GLIBC_TUNABLES
  // before (the second start puts that back for the programs it starts).
  EXPECT_EQ(EnvironOfPeer("", names), (std::vector<std::string>{"glibc.malloc.hugetlb=1", "-"}));
  // The user's other tunables are kept in the marker. (glibc cuts the string
  // /proc shows for GLIBC_TUNABLES at the first ':' when it parses it, so the
  // appended value itself cannot be seen there.)
  EXPECT_EQ(EnvironOfPeer("GLIBC_TUNABLES=glibc.malloc.tcache_count=0", names)[1], "=glibc.malloc.tcache_count=0");
  // The user's own choice of this tunable is left alone: no restart.
  EXPECT_EQ(EnvironOfPeer("GLIBC_TUNABLES=glibc.malloc.hugetlb=0", names),
            (std::vector<std::string>{"glibc.malloc.hugetlb=0", "(unset)"}));
  EXPECT_EQ(EnvironOfPeer("ORRERY_MALLOC_HUGE_PAGES=0", names), (std::vector<std::string>{"(unset)", "(unset)"}));
  // A marker already there (an earlier restart, or glibc stripping the
  // tunable in secure mode) stops any further restart.
  EXPECT_EQ(EnvironOfPeer("ORRERY_MALLOC_RESTARTED=-", names), (std::vector<std::string>{"(unset)", "-"}));
}
#endif

// Where memory comes from changes no value: the same report either way.
TEST(Cli, HugePageMallocChangesNoValue) {
  const std::string args = "run --example=data-parallel --symmetry=off --report-format=json";
  const Cli with = Orrery(args);
  const Cli without = Orrery(args, "ORRERY_MALLOC_HUGE_PAGES=0");
  ASSERT_EQ(with.rc, 0) << with.err;
  ASSERT_EQ(without.rc, 0) << without.err;
  EXPECT_NE(with.out.find("\"finished_ns\""), std::string::npos);
  EXPECT_EQ(with.out, without.out);
}

}  // namespace
}  // namespace orrery
