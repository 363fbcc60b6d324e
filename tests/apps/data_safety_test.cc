// Outputs never destroy data (issue 31): an output flag naming an input is
// refused before anything runs, a failed run changes no file, a write that
// fails (a full disk: /dev/full, a file-size limit) exits 1 naming the file,
// and `run --generate` writes the --system-out it is given.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "tests/test_util.h"

namespace orrery {
namespace {

using testing::ReadFileText;
using testing::RunCli;
using testing::RunCliCapture;
using testing::TempDir;

const char kSystem[] =
    R"({"scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1,
        "preferred-dataset-splits": 4, "all-reduce-implementation": ["ring"], "all-gather-implementation": ["ring"],
        "reduce-scatter-implementation": ["ring"], "all-to-all-implementation": ["ring"],
        "collective-optimization": "localBWAware", "local-mem-bw": 50, "roofline-enabled": 1, "peak-perf": 100})";
const char kModel[] = "name: tiny\nlayers: 2\nhidden: 64\nheads: 4\nvocab: 128\nseq_len: 32\n";
const char kNet[] = "\"Ring(4,50GB/s,500ns)\"";

// d/t.<rank>.et for 4 ranks, d/sys.json, d/model.yml.
void WriteInputs(const TempDir& d) {
  std::string err;
  ASSERT_EQ(RunCli("trace gen-dp --out=" + d.File("t") + " --npus=4 --layers=2", &err), 0) << err;
  d.Write("sys.json", kSystem);
  d.Write("model.yml", kModel);
}

std::string RunArgs(const TempDir& d) {
  return "run --workload-configuration=" + d.File("t") + " --system-configuration=" + d.File("sys.json") +
         " --network-configuration=" + kNet;
}

// Runs orrery with stdout sent to `stdout_path` (RunCli keeps its own).
int RunWithStdout(const std::string& args, const std::string& stdout_path, std::string* err) {
  TempDir d;
  const int rc = std::system(
      (std::string(ORRERY_BIN) + " " + args + " >" + stdout_path + " 2>" + d.File("err")).c_str());
  *err = ReadFileText(d.File("err"));
  return WEXITSTATUS(rc);
}

TEST(DataSafety, AnOutputNamingAnInputIsRefusedBeforeTheRun) {
  TempDir d;
  WriteInputs(d);
  const std::string trace = ReadFileText(d.File("t.1.et")), sys = ReadFileText(d.File("sys.json"));
  const std::string generate = " --generate=\"--model=" + d.File("model.yml") + " --tp=4 --device=a100";
  const std::pair<std::string, std::string> cases[] = {
      {RunArgs(d) + " --collectives=" + d.File("t.1.et"),
       "--collectives = \"" + d.File("t.1.et") + "\" names the same file as --workload-configuration (" +
           d.File("t.1.et") + "), an input; writing it would destroy that input: give --collectives another path"},
      {RunArgs(d) + " --links=" + d.path() + "/./sys.json",
       "--links = \"" + d.path() + "/./sys.json\" names the same file as --system-configuration (" +
           d.File("sys.json") + "), an input"},
      {RunArgs(d) + " --timeline=" + d.File("sys.json"), "--timeline = \"" + d.File("sys.json") + "\" names the same"},
      {RunArgs(d) + " --links=" + d.File("a.csv") + " --collectives=" + d.File("a.csv"),
       "--links = \"" + d.File("a.csv") + "\" names the same file as --collectives (" + d.File("a.csv") +
           "), another output; one would overwrite the other: give each output its own path"},
      {"run --system-configuration=" + d.File("sys.json") + " --network-configuration=" + kNet + generate +
           " --system-out=" + d.File("sys.json") + "\"",
       "--generate's --system-out = \"" + d.File("sys.json") + "\" names the same file as --system-configuration"},
      {"run --system-configuration=" + d.File("sys.json") + " --network-configuration=" + kNet + generate +
           " --system-out=" + d.File("model.yml") + "\"",
       "names the same file as --generate's --model (" + d.File("model.yml") + "), an input"},
      {"trace from-json " + d.File("t.1.et") + " --out=" + d.File("t.1.et"),
       "--out = \"" + d.File("t.1.et") + "\" names the same file as FILE"},
      {"search --model=" + d.File("model.yml") + " --npus=4 --global-batch=4 --network=" + kNet +
           " --system=" + d.File("sys.json") + " --csv=" + d.File("model.yml"),
       "--csv = \"" + d.File("model.yml") + "\" names the same file as --model"},
      {"gen --model=" + d.File("model.yml") + " --tp=4 --device=a100 --system-out=" + d.File("model.yml"),
       "--system-out = \"" + d.File("model.yml") + "\" names the same file as --model"},
  };
  for (const auto& [args, message] : cases) {
    std::string err;
    EXPECT_EQ(RunCli(args, &err), 2) << args << "\n" << err;
    EXPECT_NE(err.find(message), std::string::npos) << args << "\n" << err;
  }
  EXPECT_EQ(ReadFileText(d.File("t.1.et")), trace);
  EXPECT_EQ(ReadFileText(d.File("sys.json")), sys);
  EXPECT_EQ(ReadFileText(d.File("model.yml")), kModel);
}

// Once, a failed run deleted what --collectives or --timeline named.
TEST(DataSafety, AFailedRunLeavesEarlierOutputsAsTheyWere) {
  TempDir d;
  WriteInputs(d);
  d.Write("c.csv", "kept\n");
  d.Write("tl.json", "{\"kept\": true}\n");
  std::string err;
  EXPECT_EQ(RunCli("run --workload-configuration=" + d.File("missing") +
                       " --system-configuration=" + d.File("sys.json") + " --network-configuration=" + kNet +
                       " --collectives=" + d.File("c.csv") + " --timeline=" + d.File("tl.json"),
                   &err),
            2)
      << err;
  EXPECT_EQ(ReadFileText(d.File("c.csv")), "kept\n");
  EXPECT_EQ(ReadFileText(d.File("tl.json")), "{\"kept\": true}\n");
  // Nothing else is left behind either (no temporary files).
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(d.path())) files += e.is_regular_file() ? 1 : 0;
  EXPECT_EQ(files, 4 + 4) << "t.0..3.et, sys.json, model.yml, c.csv, tl.json";
}

TEST(DataSafety, AFullDiskExitsOneNamingTheFile) {
  TempDir d;
  WriteInputs(d);
  const std::pair<std::string, std::string> cases[] = {
      {RunArgs(d) + " --collectives=/dev/full",
       "--collectives = \"/dev/full\": writing it failed (No space left on device)"},
      {RunArgs(d) + " --timeline=/dev/full", "--timeline = \"/dev/full\": writing it failed (No space left on device)"},
      {"trace to-json " + d.File("t.0.et") + " --out=/dev/full",
       "--out = \"/dev/full\": writing it failed (No space left on device)"},
      {"gen --device=a100 --system-out=/dev/full",
       "--system-out = \"/dev/full\": writing it failed (No space left on device)"},
  };
  for (const auto& [args, message] : cases) {
    std::string err;
    EXPECT_EQ(RunCli(args, &err), 1) << args << "\n" << err;
    EXPECT_NE(err.find(message), std::string::npos) << args << "\n" << err;
  }
  // The report itself on a full stdout.
  std::string err;
  EXPECT_EQ(RunWithStdout(RunArgs(d), "/dev/full", &err), 1) << err;
  EXPECT_NE(err.find("stdout: writing the output failed (No space left on device)"), std::string::npos) << err;
  // A device still works as an output.
  std::string out;
  ASSERT_EQ(RunCliCapture("trace to-json " + d.File("t.0.et") + " --out=/dev/stdout", &out, &err), 0) << err;
  EXPECT_EQ(out.rfind("{\"version\"", 0), 0u) << out;
}

// A file-size limit fails writes to regular files as a full disk does: the
// command exits 1 and leaves no partial file.
TEST(DataSafety, AFileThatCannotBeWrittenWholeIsNotLeftHalfWritten) {
  TempDir d;
  WriteInputs(d);
  const std::string limit = "ulimit -f 16; trap '' XFSZ;";  // 8-16 KiB
  std::string err;
  EXPECT_EQ(RunCli("trace gen-dp --out=" + d.File("big") + " --npus=2 --layers=4000", &err, limit), 1) << err;
  EXPECT_NE(err.find(d.File("big.0.et") + ": writing it failed (File too large); no file was left"), std::string::npos)
      << err;
  EXPECT_FALSE(std::filesystem::exists(d.File("big.0.et")));
  ASSERT_EQ(RunCli("trace gen-dp --out=" + d.File("t") + " --npus=4 --layers=200", &err), 0) << err;
  d.Write("tl.json", "earlier\n");
  EXPECT_EQ(RunCli(RunArgs(d) + " --timeline=" + d.File("tl.json"), &err, limit), 1) << err;
  EXPECT_NE(err.find("--timeline = \"" + d.File("tl.json") +
                     "\": writing it failed (File too large); the file is left as it was"),
            std::string::npos)
      << err;
  EXPECT_EQ(ReadFileText(d.File("tl.json")), "earlier\n");
}

// `run --generate` once ignored --system-out; it writes what `orrery gen` writes.
TEST(DataSafety, RunGenerateWritesItsSystemOut) {
  TempDir d;
  WriteInputs(d);
  std::string err;
  ASSERT_EQ(RunCli("run --system-configuration=" + d.File("sys.json") + " --network-configuration=" + kNet +
                       " --generate=\"--model=" + d.File("model.yml") + " --tp=4 --device=a100 --efficiency=0.5" +
                       " --system-out=" + d.File("run.json") + "\"",
                   &err),
            0)
      << err;
  EXPECT_NE(err.find("wrote " + d.File("run.json")), std::string::npos) << err;
  ASSERT_EQ(RunCli("gen --device=a100 --efficiency=0.5 --system-out=" + d.File("gen.json"), &err), 0) << err;
  EXPECT_FALSE(ReadFileText(d.File("run.json")).empty());
  EXPECT_EQ(ReadFileText(d.File("run.json")), ReadFileText(d.File("gen.json")));
}

// A memory file `search` cannot read fails once, before ranking, not in every candidate.
TEST(DataSafety, SearchReadsItsMemoryFilesFirst) {
  TempDir d;
  WriteInputs(d);
  const std::string base = "search --model=" + d.File("model.yml") + " --npus=4 --global-batch=4 --network=" + kNet +
                           " --system=" + d.File("sys.json") + " --top=2";
  for (const char* flag : {"--memory", "--remote-memory"}) {
    std::string out, err;
    EXPECT_EQ(RunCliCapture(base + " " + flag + "=" + d.File("missing"), &out, &err), 2) << err;
    EXPECT_NE(err.find(std::string(flag) + ": " + d.File("missing") + ": cannot open file"), std::string::npos) << err;
    EXPECT_EQ(out, "");
  }
}

}  // namespace
}  // namespace orrery
