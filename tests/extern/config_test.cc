#include <gtest/gtest.h>

#include "extern/astra_config.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

TEST(AstraConfig, NetworkYamlReadsEveryDimension) {
  testing::TempDir d;
  d.Write("n.yml",
          "topology: [ Ring, Switch ]\nnpus_count: [ 4, 8 ]\nbandwidth: [ 100, 50.5 ]\nlatency: [ 500, 936.25 ]\n");
  auto n = ReadAstraNetworkYaml(d.File("n.yml"));
  ASSERT_TRUE(n.ok()) << n.status().message();
  ASSERT_EQ(n->dims.size(), 2u);
  EXPECT_EQ(n->TotalNpus(), 32);
  EXPECT_EQ(n->dims[1].block, "Switch");
  EXPECT_DOUBLE_EQ(n->dims[1].latency_ns, 936.25);
}

TEST(AstraConfig, RemoteMemoryModes) {
  testing::TempDir d;
  d.Write("m.json", R"({"memory-type": "PER_NODE_MEMORY_EXPANSION", "num-nodes": 2, "num-npus-per-node": 4,
                         "remote-mem-latency": 500, "remote-mem-bw": 50})");
  auto m = ReadAstraRemoteMemoryJson(d.File("m.json"));
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->kind, RemoteMemoryKind::kPerNode);
  EXPECT_EQ(m->npus_per_node, 4);
  d.Write("bad.json", R"({"memory-type": "POOL"})");
  auto bad = ReadAstraRemoteMemoryJson(d.File("bad.json"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("valid values are NO_MEMORY_EXPANSION"), std::string::npos);
  d.Write("neg.json", R"({"memory-type": "MEMORY_POOL", "remote-mem-latency": 5, "remote-mem-bw": -1})");
  auto neg = ReadAstraRemoteMemoryJson(d.File("neg.json"));
  ASSERT_FALSE(neg.ok());
  EXPECT_NE(neg.status().message().find("neg.json: remote-mem-bw = -1: out of range; allowed: a number >= 0.001"),
            std::string::npos)
      << neg.status().message();
}

TEST(AstraConfig, CommGroupsRejectOutOfRangeAndDuplicates) {
  testing::TempDir d;
  d.Write("g.json", R"({"0": [0, 1, 9]})");
  auto g = ReadCommGroupJson(d.File("g.json"), 8);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("rank 9, outside the network's ranks 0..7"), std::string::npos);
  d.Write("g2.json", R"({"0": [0, 1, 1]})");
  auto g2 = ReadCommGroupJson(d.File("g2.json"), 8);
  ASSERT_FALSE(g2.ok());
  EXPECT_NE(g2.status().message().find("lists rank 1 twice"), std::string::npos);
}

}  // namespace
}  // namespace orrery
