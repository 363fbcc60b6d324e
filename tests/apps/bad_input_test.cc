// Every bad input exits non-zero with one line naming the file and what is wrong.
#include <gtest/gtest.h>

#include <fstream>

#include "extern/et_io.h"
#include "gen/toy_traces.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

using testing::TempDir;

class BadInput : public ::testing::Test {
 protected:
  void SetUp() override {
    d_.Write("network.yml", testing::NetworkYaml("Ring", 4, 50, 500));
    d_.Write("system.json", testing::SystemJson("ring", 4, 10, 1600));
    ASSERT_TRUE(WriteSingleCollectiveTraces(4, CollectiveKind::kAllReduce, 1 << 20, d_.File("trace")).ok());
  }
  // Runs the CLI; expects a failure whose message contains every needle.
  void ExpectError(const std::vector<std::string>& needles, int want_rc = 2) {
    std::string err;
    const int rc = testing::RunCli("run --workload-configuration=" + d_.File("trace") + " --system-configuration=" +
                                       d_.File("system.json") + " --network-configuration=" + d_.File("network.yml"),
                                   &err);
    EXPECT_EQ(rc, want_rc) << err;
    for (const auto& n : needles) EXPECT_NE(err.find(n), std::string::npos) << "missing '" << n << "' in: " << err;
  }
  void WriteNodes(int rank, const std::vector<ChakraProtoMsg::Node>& nodes) {
    EtWriter w;
    ASSERT_TRUE(w.Open(d_.File("trace." + std::to_string(rank) + ".et"), ChakraProtoMsg::GlobalMetadata()).ok());
    for (const auto& n : nodes) ASSERT_TRUE(w.Write(n).ok());
    ASSERT_TRUE(w.Close().ok());
  }
  static ChakraProtoMsg::Node Comp(uint64_t id, std::vector<uint64_t> deps = {}) {
    ChakraProtoMsg::Node n;
    n.set_id(id);
    n.set_type(ChakraProtoMsg::COMP_NODE);
    n.set_duration_micros(1);
    for (auto x : deps) n.add_data_deps(x);
    return n;
  }
  TempDir d_;
};

TEST_F(BadInput, GoodInputRuns) {
  std::string err;
  EXPECT_EQ(testing::RunCli("run --workload-configuration=" + d_.File("trace") + " --system-configuration=" +
                                d_.File("system.json") + " --network-configuration=" + d_.File("network.yml"),
                            &err),
            0)
      << err;
}

TEST_F(BadInput, MissingTraceForARank) {
  std::remove(d_.File("trace.2.et").c_str());
  ExpectError({"trace.2.et", "rank 2", "does not exist", "4 NPUs"});
}

TEST_F(BadInput, MissingTraceForRankZero) {
  std::remove(d_.File("trace.0.et").c_str());
  ExpectError({"trace.0.et", "rank 0", "does not exist", "4 NPUs"});
}

TEST_F(BadInput, MoreTracesThanNpus) {
  ASSERT_TRUE(WriteSingleCollectiveTraces(6, CollectiveKind::kAllReduce, 1 << 20, d_.File("trace")).ok());
  ExpectError({"trace.4.et", "more trace files than the network's 4 NPUs"});
}

TEST_F(BadInput, EmptyTrace) {
  d_.Write("trace.1.et", "");
  ExpectError({"trace.1.et", "empty trace"});
}

TEST_F(BadInput, TruncatedTrace) {
  std::ifstream in(d_.File("trace.3.et"), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  d_.Write("trace.3.et", bytes.substr(0, bytes.size() - 5));
  ExpectError({"trace.3.et", "truncated trace"});
}

TEST_F(BadInput, RandomBytes) {
  std::string junk;
  uint32_t x = 12345;
  for (int i = 0; i < 300; ++i) {
    x = x * 1103515245 + 12345;
    junk.push_back(static_cast<char>(x >> 16));
  }
  d_.Write("trace.0.et", junk);
  ExpectError({"trace.0.et"});
}

TEST_F(BadInput, DependencyOnMissingNode) {
  WriteNodes(1, {Comp(1), Comp(2, {99})});
  ExpectError({"trace.1.et", "node 2", "depends on node 99", "not in the trace"});
}

TEST_F(BadInput, RepeatedNodeIdNamesTheSmallest) {
  WriteNodes(3, {Comp(9), Comp(4), Comp(9), Comp(7), Comp(4)});
  ExpectError({"trace.3.et", "node id 4 appears twice", "rank 3"});
}

TEST_F(BadInput, NodeThatDependsOnItself) {
  WriteNodes(1, {Comp(1), Comp(2, {1, 2})});
  ExpectError({"trace.1.et", "node 2 (rank 1) depends on itself"});
}

TEST_F(BadInput, DependencyCycle) {
  WriteNodes(2, {Comp(1, {3}), Comp(2, {1}), Comp(3, {2})});
  ExpectError({"trace.2.et", "dependency cycle"});
}

TEST_F(BadInput, SendWithoutReceiveIsADeadlockNotAHang) {
  ChakraProtoMsg::Node recv;
  recv.set_id(5);
  recv.set_type(ChakraProtoMsg::COMM_RECV_NODE);
  auto* a = recv.add_attr();
  a->set_name("comm_src");
  a->set_int32_val(3);
  a = recv.add_attr();
  a->set_name("comm_size");
  a->set_uint64_val(1024);
  a = recv.add_attr();
  a->set_name("comm_tag");
  a->set_uint64_val(9);
  WriteNodes(0, {recv});
  for (int r = 1; r < 4; ++r) WriteNodes(r, {});
  ExpectError({"deadlock", "rank 0", "node 5", "COMM_RECV_NODE from rank 3, tag 9", "never sends it"});
}

TEST_F(BadInput, CollectiveOneRankNeverIssuesIsADeadlock) {
  WriteNodes(3, {});  // rank 3 never joins the all-reduce
  ExpectError({"deadlock", "3 rank(s) cannot finish",
               "COMM_COLL_NODE ALL_REDUCE, 1048576 bytes; some rank in its group never issues it",
               "rank 0 waits for 1 message(s) from rank 3"});
}

TEST_F(BadInput, SendWithoutReceiveIsReported) {
  ChakraProtoMsg::Node send;
  send.set_id(8);
  send.set_type(ChakraProtoMsg::COMM_SEND_NODE);
  auto* a = send.add_attr();
  a->set_name("comm_dst");
  a->set_int32_val(1);
  a = send.add_attr();
  a->set_name("comm_size");
  a->set_uint64_val(4096);
  a = send.add_attr();
  a->set_name("comm_tag");
  a->set_uint64_val(5);
  WriteNodes(3, {send});
  for (int r = 0; r < 3; ++r) WriteNodes(r, {});
  ExpectError(
      {"unmatched send(s)", "rank 3 sent 1 message(s) with tag 5 to rank 1, which has no matching COMM_RECV_NODE"});
}

TEST_F(BadInput, UnknownCollectiveType) {
  ChakraProtoMsg::Node c;
  c.set_id(1);
  c.set_type(ChakraProtoMsg::COMM_COLL_NODE);
  auto* a = c.add_attr();
  a->set_name("comm_type");
  a->set_int64_val(42);
  a = c.add_attr();
  a->set_name("comm_size");
  a->set_int64_val(100);
  WriteNodes(1, {c});
  ExpectError({"trace.1.et", "node 1", "comm_type 42", "valid"});
}

TEST_F(BadInput, MalformedYamlNamesLineAndColumn) {
  d_.Write("network.yml", "topology: [ Ring ]\nnpus_count: [ 4\nbandwidth: [ 50 ]\n");
  ExpectError({"network.yml:", "malformed YAML"});
}

TEST_F(BadInput, MalformedJsonNamesLineAndColumn) {
  d_.Write("system.json", "{\n  \"endpoint-delay\": 10,\n  \"local-mem-bw\": ,\n}\n");
  ExpectError({"system.json:3:", "malformed JSON"});
}

TEST_F(BadInput, UnknownKeySuggestsTheRightOne) {
  d_.Write("system.json", testing::SystemJson("ring", 4, 10, 1600, 1, ", \"endpoint-dealy\": 3"));
  ExpectError({"system.json", "unknown key 'endpoint-dealy'", "did you mean 'endpoint-delay'"});
}

TEST_F(BadInput, UnknownNetworkKey) {
  d_.Write("network.yml", testing::NetworkYaml("Ring", 4, 50, 500) + "latnecy: [ 3 ]\n");
  ExpectError({"network.yml", "unknown key 'latnecy'", "did you mean 'latency'"});
}

TEST_F(BadInput, ZeroBandwidth) {
  d_.Write("network.yml", testing::NetworkYaml("Ring", 4, 0, 500));
  ExpectError({"network.yml:3: bandwidth[0] = \"0\": out of range", "allowed: a number >= 0.001 and <= 1e+09"});
}

TEST_F(BadInput, NegativeBandwidth) {
  d_.Write("network.yml", testing::NetworkYaml("Ring", 4, -5, 500));
  ExpectError({"network.yml:3: bandwidth[0] = \"-5\": out of range", "allowed: a number >= 0.001 and <= 1e+09"});
}

// A network of one NPU is one dimension of 1 (a one-rank trace); 0 NPUs, or a
// dimension of 1 beside others, are refused.
TEST_F(BadInput, NpuCountBelowTwo) {
  d_.Write("network.yml", testing::NetworkYaml("Ring", 0, 50, 500));
  ExpectError({"network.yml", "npus_count[0] = 0", "a network needs at least 1 NPU; allowed: an integer >= 1"});
  d_.Write("network.yml", "topology: [ Ring, Ring ]\nnpus_count: [ 2, 1 ]\nbandwidth: [ 5, 5 ]\nlatency: [ 1, 1 ]\n");
  ExpectError({"network.yml", "npus_count[1] = 1", "at least 2 NPUs (drop a dimension of 1"});
  d_.Write("network.yml", testing::NetworkYaml("Ring", 1, 50, 500));
  ExpectError({"trace.1.et: there are more trace files than the network's 1 NPUs"});
}

TEST_F(BadInput, ListLengthsDisagree) {
  d_.Write("network.yml", "topology: [ Ring, Switch ]\nnpus_count: [ 2, 2 ]\nbandwidth: [ 50 ]\nlatency: [ 1, 1 ]\n");
  ExpectError({"network.yml", "list lengths disagree", "bandwidth 1"});
}

TEST_F(BadInput, UnknownBuildingBlock) {
  d_.Write("network.yml", testing::NetworkYaml("Rnig", 4, 50, 500));
  ExpectError(
      {"network.yml:1: topology[0] = \"Rnig\"", "did you mean 'Ring'", "allowed: Ring, FullyConnected, Switch"});
}

TEST_F(BadInput, UnknownAlgorithm) {
  d_.Write("system.json", testing::SystemJson("rnig", 4, 10, 1600));
  ExpectError({"system.json", "\"rnig\"", "unknown algorithm", "did you mean 'ring'"});
}

TEST_F(BadInput, UnknownBackendListsValidOnes) {
  std::string err;
  EXPECT_EQ(testing::RunCli("run --network-backend=ns9 --workload-configuration=" + d_.File("trace") +
                                " --system-configuration=" + d_.File("system.json") +
                                " --network-configuration=" + d_.File("network.yml"),
                            &err),
            2);
  EXPECT_NE(err.find("valid: analytical, congestion-aware"), std::string::npos) << err;
}

TEST_F(BadInput, MisspelledFlagIsAnError) {
  std::string err;
  EXPECT_NE(testing::RunCli("run --workload-configuraton=x", &err), 0);
  EXPECT_NE(err.find("workload-configuraton"), std::string::npos) << err;
}

TEST_F(BadInput, MemoryNodeWithoutRemoteMemory) {
  ChakraProtoMsg::Node m;
  m.set_id(4);
  m.set_type(ChakraProtoMsg::MEM_LOAD_NODE);
  auto* a = m.add_attr();
  a->set_name("tensor_size");
  a->set_uint64_val(4096);
  WriteNodes(2, {m});
  ExpectError({"trace.2.et", "node 4", "MEM_LOAD_NODE", "no remote memory"});
}

}  // namespace
}  // namespace orrery

namespace orrery {
namespace {

TEST(BadInputDims, InvolvedDimLongerThanTheTopology) {
  testing::TempDir d;
  d.Write("network.yml", testing::NetworkYaml("Ring", 4, 50, 500));
  d.Write("system.json", testing::SystemJson("ring", 1, 10, 1600));
  testing::WriteTraces(d, 4, [](int) {
    auto n = testing::CollNode(3, 0, 1024);
    testing::SetAttr(&n, "involved_dim", std::vector<bool>{true, false});
    return std::vector<ChakraProtoMsg::Node>{n};
  });
  auto r = testing::RunIn(d);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("node 3 (rank 0): involved_dim has 2 entries but the network has 1 dimension"),
            std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace orrery
