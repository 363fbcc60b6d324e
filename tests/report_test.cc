#include <gtest/gtest.h>

#include "apps/examples.h"
#include "apps/trace_tools.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

TEST(Report, SameInputsGiveByteIdenticalReports) {
  testing::TempDir d;
  RunConfig c;
  ASSERT_TRUE(WriteExample("data-parallel", d.path(), &c).ok());
  c.backend = "congestion-aware";
  auto a = RunSimulation(c, DefaultBackends());
  auto b = RunSimulation(c, DefaultBackends());
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(FormatReportJson(a.value()), FormatReportJson(b.value()));
  EXPECT_EQ(FormatReportText(a.value()), FormatReportText(b.value()));
}

TEST(Report, ComputeOverlapsCommunication) {
  // Data-parallel loop: backward compute overlaps the previous layer's all-reduce,
  // so exposed communication is less than total communication.
  testing::TempDir d;
  RunConfig c;
  ASSERT_TRUE(WriteExample("data-parallel", d.path(), &c).ok());
  auto r = RunSimulation(c, DefaultBackends());
  ASSERT_TRUE(r.ok()) << r.status().message();
  const auto& n = r->per_npu[0];
  EXPECT_EQ(n.compute_ns, 4 * 500000u + 4 * 1000000u);
  EXPECT_EQ(n.exposed_comm_ns, n.finished_ns - n.compute_ns);
  EXPECT_LT(n.exposed_comm_ns, n.comm_ns);
  EXPECT_EQ(r->collectives.size(), 4u);
  const std::string json = FormatReportJson(r.value());
  EXPECT_NE(json.find("\"exposed_comm_ns\""), std::string::npos);
}

TEST(Report, IterationsRepeatTheGraph) {
  testing::TempDir d;
  RunConfig c;
  ASSERT_TRUE(WriteExample("default", d.path(), &c).ok());
  auto one = RunSimulation(c, DefaultBackends());
  c.iterations = 3;
  auto three = RunSimulation(c, DefaultBackends());
  ASSERT_TRUE(one.ok() && three.ok());
  EXPECT_EQ(three->per_npu[0].finished_ns, 3 * one->per_npu[0].finished_ns);
}

}  // namespace
}  // namespace orrery
