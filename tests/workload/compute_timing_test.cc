// How a COMP node is timed with the roofline on: by the roofline when it gives
// num_ops, by its measured duration_micros when it gives none (what converters
// of real traces write), and the report counts each kind.
#include <gtest/gtest.h>

#include "report/report.h"
#include "run/run.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

using testing::TempDir;

// Per rank: a GPU kernel measured at 5 us (no num_ops), then a roofline kernel
// (1e9 ops over 1e6 bytes: compute-bound at 100 TFLOPS, 10 us), then a CPU op of 2 us.
void WriteMixed(const TempDir& d) {
  d.Write("network.yml", "topology: [ Ring ]\nnpus_count: [ 2 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n");
  d.Write("system.json", R"({"roofline-enabled": 1, "peak-perf": 100, "local-mem-bw": 1000})");
  testing::WriteTraces(d, 2, [](int) {
    auto measured = testing::MakeNode(1, ChakraProtoMsg::COMP_NODE);
    measured.set_duration_micros(5);
    auto roofline = testing::MakeNode(2, ChakraProtoMsg::COMP_NODE);
    testing::SetAttr(&roofline, "num_ops", uint64_t{1000000000});
    testing::SetAttr(&roofline, "tensor_size", uint64_t{1000000});
    roofline.set_duration_micros(999);  // the roofline's, not this
    roofline.add_data_deps(1);
    auto cpu = testing::MakeNode(3, ChakraProtoMsg::COMP_NODE);
    testing::SetAttr(&cpu, "is_cpu_op", uint64_t{1});
    cpu.set_duration_micros(2);
    cpu.add_data_deps(2);
    return std::vector<ChakraProtoMsg::Node>{measured, roofline, cpu};
  });
}

TEST(ComputeTiming, MeasuredKernelsKeepTheirDurationUnderTheRoofline) {
  TempDir d;
  WriteMixed(d);
  auto r = testing::RunIn(d);
  ASSERT_TRUE(r.ok()) << r.status().message();
  for (const auto& n : r->per_npu) {
    EXPECT_EQ(n.finished_ns, 5000u + 10000u + 2000u) << n.rank;
    EXPECT_EQ(n.compute_ns, 15000u) << n.rank;  // GPU compute: the measured and the roofline kernel
  }
  ASSERT_EQ(r->notes.size(), 1u);
  EXPECT_EQ(r->notes[0],
            "compute nodes with the roofline on, over 1 simulated rank(s): 1 GPU node(s) timed by the roofline "
            "(num_ops), 1 by their measured duration_micros (no num_ops), 1 CPU node(s) replayed");
}

// Without the roofline every node replays its duration, as always, and no note is added.
TEST(ComputeTiming, WithoutTheRooflineEveryNodeReplays) {
  TempDir d;
  WriteMixed(d);
  d.Write("system.json", R"({"roofline-enabled": 0})");
  auto r = testing::RunIn(d);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->per_npu[0].finished_ns, 5000u + 999000u + 2000u);
  EXPECT_TRUE(r->notes.empty());
}

// A CPU op while nothing else runs is the `cpu` share, not idle; shown only when some rank has any.
TEST(ComputeTiming, CpuOpsAreNotIdle) {
  TempDir d;
  WriteMixed(d);
  auto r = testing::RunIn(d);
  ASSERT_TRUE(r.ok()) << r.status().message();
  for (const auto& n : r->per_npu) {
    EXPECT_EQ(n.cpu_ns, 2000u) << n.rank;
    EXPECT_EQ(n.idle_ns, 0u) << n.rank;
  }
  const std::string text = FormatReportText(r.value());
  EXPECT_NE(text.find("waiting on peers 0.0%, CPU ops 11.8%, idle 0.0%)"), std::string::npos) << text;
  EXPECT_NE(text.find("     peer_wait           cpu          idle\n"), std::string::npos) << text;
  EXPECT_NE(text.find("            0          2000             0\n"), std::string::npos) << text;
  EXPECT_NE(FormatReportJson(r.value()).find("\"cpu_ns\": 2000,"), std::string::npos);
  EXPECT_EQ(
      FormatReportCsv(r.value()).substr(0, FormatReportCsv(r.value()).find('\n')),
      "rank,finished_ns,compute_ns,comm_ns,exposed_comm_ns,idle_ns,remote_mem_ns,mem_stall_ns,peer_wait_ns,cpu_ns");
  // No CPU op: the report is as it always was.
  testing::WriteTraces(d, 2, [](int) {
    auto n = testing::MakeNode(1, ChakraProtoMsg::COMP_NODE);
    n.set_duration_micros(3);
    return std::vector<ChakraProtoMsg::Node>{n};
  });
  auto plain = testing::RunIn(d);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(FormatReportText(plain.value()).find("cpu"), std::string::npos);
  EXPECT_EQ(FormatReportJson(plain.value()).find("cpu_ns"), std::string::npos);
}

}  // namespace
}  // namespace orrery
