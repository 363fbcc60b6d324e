// How a COMP node is timed with the roofline on: by the roofline when it gives
// num_ops, by its measured duration_micros when it gives none (what converters
// of real traces write), and the report counts each kind.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace orrery
