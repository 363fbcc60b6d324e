// core/output_file.h: an output is whole or absent, a failed write names the
// file and the reason, and an output that is an input is refused.
#include "core/output_file.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/test_util.h"

namespace orrery {
namespace {

using testing::ReadFileText;
using testing::TempDir;

std::vector<std::string> Names(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// A file-size limit makes every write past it fail as a full disk would
// (EFBIG instead of ENOSPC), for this process only, while it lives.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    getrlimit(RLIMIT_FSIZE, &saved_);
    old_handler_ = std::signal(SIGXFSZ, SIG_IGN);
    rlimit lim = saved_;
    lim.rlim_cur = bytes;
    setrlimit(RLIMIT_FSIZE, &lim);
  }
  ~FileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &saved_);
    std::signal(SIGXFSZ, old_handler_);
  }

 private:
  rlimit saved_{};
  void (*old_handler_)(int) = nullptr;
};

TEST(OutputFile, CommitReplacesTheFileAndAnAbandonedOneLeavesItAsItWas) {
  TempDir d;
  d.Write("out.csv", "old\n");
  {
    auto f = OutputFile::Create(d.File("out.csv"), "--collectives");
    ASSERT_TRUE(f.ok()) << f.status().message();
    ASSERT_TRUE(f->Write("half of a new file").ok());
    EXPECT_EQ(ReadFileText(d.File("out.csv")), "old\n");  // nothing shows before the commit
  }                                                       // destroyed uncommitted: a failed run
  EXPECT_EQ(ReadFileText(d.File("out.csv")), "old\n");
  EXPECT_EQ(Names(d.path()), std::vector<std::string>{"out.csv"});  // the temporary file went too
  ASSERT_TRUE(WriteFileWhole(d.File("out.csv"), "new\n").ok());
  EXPECT_EQ(ReadFileText(d.File("out.csv")), "new\n");
  EXPECT_EQ(Names(d.path()), std::vector<std::string>{"out.csv"});
}

TEST(OutputFile, KeepsTheFilesPermissionsAndWritesThroughASymlink) {
  TempDir d;
  d.Write("real.json", "{}");
  chmod(d.File("real.json").c_str(), 0640);
  std::filesystem::create_symlink(d.File("real.json"), d.File("link.json"));
  ASSERT_TRUE(WriteFileWhole(d.File("link.json"), "[1]").ok());
  EXPECT_TRUE(std::filesystem::is_symlink(d.File("link.json")));
  EXPECT_EQ(ReadFileText(d.File("real.json")), "[1]");
  struct stat st;
  ASSERT_EQ(stat(d.File("real.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
}

// A device cannot be renamed over: it is written in place, and /dev/full's
// "no space" is an error naming the file (exit 1), not a success.
TEST(OutputFile, AFullDeviceIsAnErrorNamingTheFileAndTheReason) {
  auto f = OutputFile::Create("/dev/full", "--timeline");
  ASSERT_TRUE(f.ok()) << f.status().message();
  const Status written = f->Write(std::string(100, 'x'));
  const Status st = written.ok() ? f->Commit() : written;
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.exit_code(), 1);
  EXPECT_EQ(st.message(), "--timeline = \"/dev/full\": writing it failed (No space left on device)");
  EXPECT_TRUE(WriteFileWhole("/dev/null", "gone").ok());
}

// A full disk for a regular file (a file-size limit): the earlier file stays,
// no temporary file is left, and the message says so.
TEST(OutputFile, AWriteThatFailsLeavesTheEarlierFile) {
  TempDir d;
  d.Write("rows.jsonl", "a whole earlier file\n");
  Status st;
  {
    FileSizeLimit limit(4096);
    st = WriteFileWhole(d.File("rows.jsonl"), std::string(3 << 20, 'r'));
  }
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.exit_code(), 1);
  EXPECT_EQ(st.message(), d.File("rows.jsonl") + ": writing it failed (File too large); the file is left as it was");
  EXPECT_EQ(ReadFileText(d.File("rows.jsonl")), "a whole earlier file\n");
  EXPECT_EQ(Names(d.path()), std::vector<std::string>{"rows.jsonl"});
}

// A folder where no file may be created: /sys refuses even root; a folder
// without write permission refuses everyone else.
TEST(OutputFile, AFolderThatRefusesFilesIsAnError) {
  TempDir d;
  std::string dir = "/sys";
  if (geteuid() != 0) {
    dir = d.File("ro");
    std::filesystem::create_directory(dir);
    chmod(dir.c_str(), 0555);
  }
  auto f = OutputFile::Create(dir + "/out.csv", "--links");
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().exit_code(), 1);
  EXPECT_EQ(f.status().message(), "--links = \"" + dir +
                                      "/out.csv\": cannot write it (Permission denied); allowed: a file path in an "
                                      "existing, writable directory");
  auto missing = OutputFile::Create(d.File("no-such-dir/out.csv"), "--links");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().exit_code(), 2);
}

TEST(OutputFile, AnOutputThatIsAnInputIsRefused) {
  TempDir d;
  d.Write("sys.json", "{}");
  std::filesystem::create_hard_link(d.File("sys.json"), d.File("other-name.json"));
  struct Case {
    std::vector<NamedFile> outputs;
    std::string message;  // "" : accepted
  };
  const std::string sys = d.File("sys.json");
  const std::vector<NamedFile> inputs = {{"--system-configuration", sys}, {"--memory-configuration", ""}};
  const Case cases[] = {
      {{{"--collectives", sys}},
       "--collectives = \"" + sys + "\" names the same file as --system-configuration (" + sys +
           "), an input; writing it would destroy that input: give --collectives another path"},
      {{{"--timeline", d.File("other-name.json")}}, "names the same file as --system-configuration"},  // one inode
      {{{"--timeline", d.path() + "/./sys.json"}}, "names the same file as --system-configuration"},
      {{{"--links", d.File("a.csv")},
        {"--collectives", d.path() + "/../" + d.path().substr(d.path().rfind('/') + 1) + "/a.csv"}},
       "another output; one would overwrite the other: give each output its own path"},
      {{{"--links", "/dev/stdout"}, {"--collectives", "/dev/stdout"}}, ""},
      {{{"--links", d.File("new.csv")}}, ""},
  };
  for (const Case& c : cases) {
    const Status st = CheckOutputsAreNotInputs(c.outputs, inputs);
    if (c.message.empty()) {
      EXPECT_TRUE(st.ok()) << st.message();
      continue;
    }
    ASSERT_FALSE(st.ok()) << c.outputs[0].path;
    EXPECT_EQ(st.exit_code(), 2);
    EXPECT_NE(st.message().find(c.message), std::string::npos) << st.message();
  }
  // An input that does not exist (a preset's name, a notation) cannot be lost.
  EXPECT_TRUE(CheckOutputsAreNotInputs({{"--out", d.File("llama")}}, {{"--model", d.File("llama")}}).ok());
}

TEST(OutputFile, TraceFilesOfListsEveryRankOfAPrefix) {
  TempDir d;
  for (const char* name : {"t.0.et", "t.12.et", "t.x.et", "t.comm_groups.json", "tt.1.et"}) d.Write(name, "");
  EXPECT_EQ(TraceFilesOf(d.File("t")), (std::vector<std::string>{d.File("t.0.et"), d.File("t.12.et")}));
}

}  // namespace
}  // namespace orrery
