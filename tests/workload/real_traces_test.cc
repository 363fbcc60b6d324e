// The real converted Chakra traces of ../shared/chakra-real (README there:
// provenance, what each exercises): each runs, or is refused with the
// documented message. Expected numbers are read from the traces themselves.
#include <gtest/gtest.h>

#include <filesystem>

#include "extern/et_io.h"
#include "run/run.h"
#include "tests/test_util.h"
#include "workload/trace_tools.h"

namespace orrery {
namespace {

using testing::TempDir;

const std::string kReal = std::string(ORRERY_SHARED_DIR) + "/chakra-real";

#define REQUIRE_REAL(sub)                                                                         \
  if (!std::filesystem::exists(kReal + "/" + sub)) {                                              \
    GTEST_SKIP() << kReal << "/" << sub << " is absent: the real-trace fixtures are not checked"; \
  }

// GPU COMP time as the executor replays it: duration_micros in ns, 1 ns for a duration of 0.
struct GpuTime {
  uint64_t ns = 0, kernels = 0, measured_us = 0;
};
GpuTime ReplayedGpu(const std::string& path) {
  GpuTime t;
  EtReader r;
  if (!r.Open(path).ok()) return t;
  ChakraProtoMsg::Node n;
  for (Result<bool> more = r.Next(&n); more.ok() && more.value(); more = r.Next(&n)) {
    if (n.type() != ChakraProtoMsg::COMP_NODE) continue;
    const auto* cpu = FindAttr(n, "is_cpu_op");
    if (cpu && AttrBool(*cpu).value_or(false)) continue;
    ++t.kernels;
    t.measured_us += n.duration_micros();
    t.ns += n.duration_micros() ? n.duration_micros() * 1000 : 1;
  }
  return t;
}

RunConfig OneNpu(const TempDir& d, const std::string& prefix, const std::string& system) {
  d.Write("system.json", system);
  RunConfig c;
  c.files.workload_prefix = prefix;
  c.files.network = "Ring(1,100GB/s,500ns)";
  c.files.system = d.File("system.json");
  return c;
}

std::string Failure(const Result<RunReport>& r) { return r.ok() ? "(ran)" : r.status().message(); }

// linear: 220 GPU kernels measured (9,586 us), no num_ops; operator-tree ctrl_deps.
TEST(RealTraces, LinearKeepsItsMeasuredKernelsUnderTheRoofline) {
  REQUIRE_REAL("linear/linear.0.et");
  TempDir d;
  const std::string prefix = kReal + "/linear/linear";
  const GpuTime gpu = ReplayedGpu(prefix + ".0.et");
  EXPECT_EQ(gpu.kernels, 220u);
  EXPECT_EQ(gpu.measured_us, 9586u);
  RunConfig c = OneNpu(d, prefix, R"({"roofline-enabled": 1, "peak-perf": 100, "local-mem-bw": 1000})");
  EXPECT_EQ(Failure(RunSimulation(c, DefaultBackends())),
            prefix +
                ".0.et: node 9 (rank 0) depends on node 2, which is not in the trace (a ctrl_deps edge; "
                "--ctrl-deps=repair drops control edges that point at no node)");
  c.run.repair_ctrl_deps = true;
  auto r = RunSimulation(c, DefaultBackends());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->per_npu[0].compute_ns, gpu.ns);  // the roofline left every measured kernel its time
  ASSERT_EQ(r->notes.size(), 2u);
  EXPECT_EQ(r->notes[0],
            "compute nodes with the roofline on, over 1 simulated rank(s): 0 GPU node(s) timed by the roofline "
            "(num_ops), 220 by their measured duration_micros (no num_ops), 540 CPU node(s) replayed");
  EXPECT_EQ(r->notes[1].rfind("ctrl_deps: rank 0 dropped ", 0), 0u) << r->notes[1];
  EXPECT_GT(r->per_npu[0].cpu_ns, 0u);
}

// feeder (Chakra's tests/data/chakra.0.et): ctrl_deps operator tree, host-side c10d collectives, GPU NCCL kernels.
TEST(RealTraces, FeederRunsWithRepairAndReplayedHostCollectives) {
  REQUIRE_REAL("feeder/chakra.0.et");
  TempDir d;
  const std::string prefix = kReal + "/feeder/chakra";
  RunConfig c = OneNpu(d, prefix, R"({"preferred-dataset-splits": 1})");
  c.run.repair_ctrl_deps = true;
  EXPECT_EQ(Failure(RunSimulation(c, DefaultBackends())),
            prefix +
                ".0.et: node 432 (rank 0): a host-side collective (COMM_COLL_NODE with is_cpu_op true and "
                "neither comm_type nor comm_size): the CPU call of a collective as converters of early 2024 "
                "wrote it, not the collective; --host-collectives=replay runs such nodes as CPU ops of their "
                "duration (the trace's GPU collective nodes, if any, carry the communication)");
  c.run.replay_host_collectives = true;
  auto r = RunSimulation(c, DefaultBackends());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->per_npu[0].compute_ns, ReplayedGpu(prefix + ".0.et").ns);
  EXPECT_EQ(r->collectives.size(), 7u);  // the GPU NCCL kernels: 2 broadcasts, 5 all-reduces
  std::string notes;
  for (const auto& n : r->notes) notes += n + "\n";
  EXPECT_NE(notes.find("host collectives: 14 COMM_COLL node(s)"), std::string::npos) << notes;
  EXPECT_NE(notes.find("2 rooted collective(s) on the simulated ranks give no 'root'"), std::string::npos) << notes;
  EXPECT_NE(notes.find("ctrl_deps: rank 0 dropped "), std::string::npos) << notes;
}

// c102: the process-group table of a 2-rank job, one rank's file.
TEST(RealTraces, C102ReadsItsProcessGroups) {
  REQUIRE_REAL("c102/c102.0.et");
  TempDir d;
  const std::string file = kReal + "/c102/c102.0.et";
  RunConfig c = OneNpu(d, kReal + "/c102/c102", R"({"preferred-dataset-splits": 1})");
  EXPECT_EQ(Failure(RunSimulation(c, DefaultBackends())),
            file +
                ": node 3 (rank 0): process group \"0\" is every rank (ranks []) of a 2-rank job (group_size 2), "
                "but the network has 1 NPU(s); simulate the whole job: a network of 2 NPUs and every rank's trace");
  // Both ranks (the one file twice) on 2 NPUs: the group is every rank, read from the trace.
  const std::string bytes = testing::ReadFileText(file);
  d.Write("c.0.et", bytes);
  d.Write("c.1.et", bytes);
  c.files.workload_prefix = d.File("c");
  c.files.network = "Ring(2,100GB/s,500ns)";
  auto r = RunSimulation(c, DefaultBackends());
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->notes.size(), 1u);
  EXPECT_EQ(r->notes[0], "communicator groups: 1 from the traces' process-group metadata (" + d.File("c.0.et") +
                             " node 3, the same in every rank's trace)");
  auto inspect = InspectTrace(file);
  ASSERT_TRUE(inspect.ok());
  EXPECT_NE(inspect->find("  \"0\": every rank (group_size 2)\n"), std::string::npos) << inspect.value();
}

// dlrm-hostonly: 8 ranks of host operators; the converter of Feb 2024 wrote the collectives as host calls only.
TEST(RealTraces, DlrmHostOnlyIsRefusedNamingNodeAndRank) {
  REQUIRE_REAL("dlrm-hostonly/dlrm.0.et");
  TempDir d;
  const std::string prefix = kReal + "/dlrm-hostonly/dlrm";
  RunConfig c = OneNpu(d, prefix, R"({"preferred-dataset-splits": 1})");
  c.files.network = "Switch(8,100GB/s,500ns)";
  EXPECT_EQ(Failure(RunSimulation(c, DefaultBackends()))
                .rfind(prefix + ".0.et: node 2747 (rank 0): a host-side "
                                "collective (COMM_COLL_NODE with is_cpu_op",
                       0),
            0u);
  c.run.replay_host_collectives = true;  // then it runs as what it is: host operators only
  auto r = RunSimulation(c, DefaultBackends());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->collectives.empty());
  EXPECT_EQ(r->notes.back(),
            "host collectives: 128 COMM_COLL node(s) with is_cpu_op and neither comm_type nor comm_size ran as CPU "
            "ops of their duration, on 8 simulated rank(s)");
  auto check = CheckTraces(prefix, 3, {});
  ASSERT_TRUE(check.ok());
  EXPECT_EQ(check->problems, 128u);  // 16 host-side collectives in each of the 8 files
}

}  // namespace
}  // namespace orrery
