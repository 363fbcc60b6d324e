// Runs every case in ../shared/conformance/astra-sim/expected.tsv in process
// and compares per-NPU finished times with ASTRA-sim's. Skips when the folder
// is absent.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "run/run.h"

namespace orrery {
namespace {

const std::string kDir = std::string(ORRERY_SHARED_DIR) + "/conformance/astra-sim";

// Cases Orrery does not model yet (see docs/parity.md).
bool KnownGap(const std::string& id) { return false; }

std::vector<std::vector<std::string>> ReadTsv() {
  std::vector<std::vector<std::string>> rows;
  std::ifstream in(kDir + "/expected.tsv");
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    std::vector<std::string> cols;
    std::stringstream ss(line);
    std::string c;
    while (std::getline(ss, c, '\t')) cols.push_back(c);
    if (cols.size() >= 7) rows.push_back(cols);
  }
  return rows;
}

TEST(Conformance, AstraSimExpectedFinishedTimes) {
  if (access((kDir + "/expected.tsv").c_str(), R_OK) != 0) {
    GTEST_SKIP() << "no conformance data at " << kDir << " (the shared/ folder is absent)";
  }
  char cwd[4096];
  ASSERT_NE(getcwd(cwd, sizeof(cwd)), nullptr);
  ASSERT_EQ(chdir(kDir.c_str()), 0);
  const auto rows = ReadTsv();
  ASSERT_GT(rows.size(), 50u);
  int checked = 0;
  for (const auto& r : rows) {
    if (KnownGap(r[0])) continue;
    RunConfig c;
    c.run.backend = r[1];
    c.files.workload_prefix = r[2];
    c.files.network = r[3];
    c.files.system = r[4];
    c.files.remote_memory = r[5];
    auto rep = RunSimulation(c, DefaultBackends());
    ASSERT_TRUE(rep.ok()) << r[0] << ": " << rep.status().message();
    std::vector<uint64_t> want;
    std::stringstream ss(r[6]);
    std::string v;
    while (std::getline(ss, v, ',')) want.push_back(std::stoull(v));
    for (const auto& n : rep->per_npu) {
      const uint64_t expect = want.size() == 1 ? want[0] : want.at(n.rank);
      EXPECT_EQ(n.finished_ns, expect) << r[0] << " rank " << n.rank;
    }
    ++checked;
  }
  ASSERT_EQ(chdir(cwd), 0);
  EXPECT_EQ(checked, static_cast<int>(rows.size()));
}

}  // namespace
}  // namespace orrery
