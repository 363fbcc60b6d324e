// Progress on stderr (workload/progress.h, `orrery run --progress/--quiet`).
#include <gtest/gtest.h>

#include <cstdio>
#include <regex>
#include <sstream>

#include "tests/test_util.h"
#include "workload/progress.h"

namespace orrery {
namespace {

const std::regex kLine(
    R"(progress: simulated [0-9]+\.[0-9]{6} ms, [0-9]+\.[0-9]{2} M events/s, ranks finished [0-9]+/[0-9]+)");

std::string Contents(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string s;
  for (int c; (c = std::fgetc(f)) != EOF;) s += static_cast<char>(c);
  return s;
}

TEST(Progress, LineNamesSimulatedTimeRateAndRanks) {
  // 1,234,567 ns = 1.234567 ms; 2.5e6 events/s = 2.50 M events/s.
  EXPECT_EQ(ProgressMeter::Line(1234567, 2.5e6, 3, 8),
            "progress: simulated 1.234567 ms, 2.50 M events/s, ranks finished 3/8");
}

TEST(Progress, LinesModePrintsEveryUpdateAndALastLine) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    ProgressMeter m(ProgressMeter::Mode::kLines, f, /*delay_s=*/5, /*interval_s=*/0);
    m.Update(1000, 100, 0, 4);
    m.Update(2000, 200, 1, 4);
    m.Finish(3000, 300, 4, 4);
  }
  const std::string out = Contents(f);
  std::fclose(f);
  std::istringstream in(out);
  int lines = 0;
  for (std::string line; std::getline(in, line); ++lines) EXPECT_TRUE(std::regex_match(line, kLine)) << line;
  EXPECT_EQ(lines, 3) << out;  // kLines ignores the start delay
  EXPECT_NE(out.find("ranks finished 4/4\n"), std::string::npos) << out;
  EXPECT_EQ(out.find('\r'), std::string::npos);
}

TEST(Progress, TerminalModeIsSilentForShortRunsAndOffIsSilent) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    ProgressMeter term(ProgressMeter::Mode::kTerminal, f, /*delay_s=*/3600, /*interval_s=*/0);
    term.Update(1000, 100, 0, 4);
    term.Finish(2000, 200, 4, 4);
    ProgressMeter off(ProgressMeter::Mode::kOff, f, 0, 0);
    off.Update(1000, 100, 0, 4);
    off.Finish(2000, 200, 4, 4);
  }
  EXPECT_EQ(Contents(f), "");
  std::fclose(f);
}

TEST(Progress, TerminalModeRewritesOneLineAndClearsIt) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    ProgressMeter m(ProgressMeter::Mode::kTerminal, f, /*delay_s=*/0, /*interval_s=*/0);
    m.Update(1000, 100, 0, 4);
    m.Finish(2000, 200, 4, 4);
  }
  const std::string out = Contents(f);
  std::fclose(f);
  EXPECT_EQ(out.find('\n'), std::string::npos) << out;
  ASSERT_EQ(out.rfind('\r'), out.size() - 1) << out;  // ends back at the start of a cleared line
  const std::string first = out.substr(1, out.find('\r', 1) - 1);
  EXPECT_TRUE(std::regex_match(first, kLine)) << first;
}

TEST(Progress, RunProgressPrintsLinesQuietNoneAndTheReportIsTheSame) {
  std::string out_plain, err_plain, out_progress, err_progress, out_quiet, err_quiet;
  ASSERT_EQ(testing::RunCliCapture("run --example=data-parallel", &out_plain, &err_plain), 0) << err_plain;
  ASSERT_EQ(testing::RunCliCapture("run --example=data-parallel --progress", &out_progress, &err_progress), 0)
      << err_progress;
  ASSERT_EQ(testing::RunCliCapture("run --example=data-parallel --quiet", &out_quiet, &err_quiet), 0) << err_quiet;
  // stderr is not a terminal here: nothing without --progress.
  EXPECT_EQ(err_plain.find("progress:"), std::string::npos) << err_plain;
  EXPECT_EQ(err_quiet.find("progress:"), std::string::npos) << err_quiet;
  std::istringstream in(err_progress);
  int lines = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("progress:", 0) != 0) continue;
    ++lines;
    EXPECT_TRUE(std::regex_match(line, kLine)) << line;
  }
  EXPECT_GE(lines, 1) << err_progress;
  EXPECT_EQ(err_progress.find('\r'), std::string::npos);
  // The last line: every simulated rank finished (a symmetric run simulates one).
  EXPECT_NE(err_progress.find("ranks finished 1/1\n"), std::string::npos) << err_progress;
  EXPECT_EQ(out_progress, out_plain);
  EXPECT_EQ(out_quiet, out_plain);
  EXPECT_NE(out_plain.find("config hash: "), std::string::npos);
}

TEST(Progress, QuietAndProgressTogetherAreRefused) {
  std::string err;
  EXPECT_EQ(testing::RunCli("run --example=default --quiet --progress", &err), 2);
  EXPECT_NE(err.find("--quiet and --progress contradict each other; give one"), std::string::npos) << err;
}

}  // namespace
}  // namespace orrery
