// The plugin loader: a good plugin works end to end; every bad one is refused
// with one clear sentence.
#include <gtest/gtest.h>
#include <string>

#include "core/tick.h"
#include "extern/et_io.h"
#include "gen/toy_traces.h"
#include "memory/backend.h"
#include "plugins/loader.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

Result<LoadedPlugin> Load(const std::string& path, BackendRegistry* reg, CollectiveRegistry* algos = nullptr) {
  PluginRegistries r;
  r.network = reg;
  r.collectives = algos;
  return LoadPlugin(path, &r);
}

TEST(PluginLoader, GoodPluginRegistersABackendThatRuns) {
  BackendRegistry reg = DefaultBackends();
  CollectiveRegistry algos;
  auto p = Load(FIXTURE_GOOD_PATH, &reg, &algos);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->name, "fixture");
  EXPECT_EQ(p->version, "0.1");
  EXPECT_EQ(p->network_backends, (std::vector<std::string>{"fixture-fixed"}));
  ASSERT_NE(reg.Find("fixture-fixed"), nullptr);
  // Run a collective through it: every ring step costs 1000 + bytes/1000 ns.
  testing::TempDir d;
  d.Write("network.yml", testing::NetworkYaml("Ring", 4, 50, 500));
  d.Write("system.json", R"({"preferred-dataset-splits": 1, "all-reduce-implementation": ["ring"]})");
  ASSERT_TRUE(WriteSingleCollectiveTraces(4, CollectiveKind::kAllReduce, 4000000, d.File("trace")).ok());
  RunConfig c;
  c.files.workload_prefix = d.File("trace");
  c.files.network = d.File("network.yml");
  c.files.system = d.File("system.json");
  c.run.backend = "fixture-fixed";
  auto r = RunSimulation(c, reg);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->per_npu[0].finished_ns, 10 + 6 * (1000 + 1000000 / 1000 + 10));
}

struct Bad {
  const char* path;
  const char* needle;
};

TEST(PluginLoader, CollectiveAlgorithmFromAPlugin) {
  BackendRegistry reg = DefaultBackends();
  CollectiveRegistry algos;
  auto p = Load(FIXTURE_GOOD_PATH, &reg, &algos);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->collective_algorithms, (std::vector<std::string>{"fixture-exchange"}));
  testing::TempDir d;
  d.Write("network.yml", testing::NetworkYaml("Switch", 8, 50, 500));
  d.Write("system.json", R"({"preferred-dataset-splits": 2, "all-reduce-implementation": ["fixture-exchange"]})");
  ASSERT_TRUE(WriteSingleCollectiveTraces(8, CollectiveKind::kAllReduce, 1 << 20, d.File("trace")).ok());
  RunConfig c;
  c.files.workload_prefix = d.File("trace");
  c.files.network = d.File("network.yml");
  c.files.system = d.File("system.json");
  auto r = RunSimulation(c, reg, &algos);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_FALSE(r->symmetric);  // plugin algorithms are never assumed symmetric
  // Each chunk: all 7 messages of 512 KiB leave at once and arrive together.
  const Tick chunk = static_cast<Tick>(2 * 500 + (512 * 1024) / GiBpsToBytesPerNs(50));
  EXPECT_EQ(r->per_npu[5].finished_ns, 2 * chunk);
  EXPECT_EQ(r->collectives.at(0).algorithm, "ALL_REDUCE:fixture-exchange");
  // Without the plugin the name is an unknown algorithm.
  auto no = RunSimulation(c, reg, nullptr);
  ASSERT_FALSE(no.ok());
  EXPECT_NE(no.status().message().find("\"fixture-exchange\": unknown algorithm"), std::string::npos)
      << no.status().message();
}

TEST(PluginLoader, RefusesEachBadPluginWithASentence) {
  // The bad-ABI fixture declares this build's ABI + 41.
  const std::string bad_abi = "was built for plugin ABI " + std::to_string(ORRERY_PLUGIN_ABI_VERSION + 41) +
                              " but this orrery speaks ABI " + std::to_string(ORRERY_PLUGIN_ABI_VERSION) +
                              "; rebuild the plugin";
  const Bad cases[] = {
      {"/no/such/plugin.so", "no such file"},
      {ORRERY_SOURCE_DIR "/README.md", "cannot be loaded as a shared library"},
      {FIXTURE_NO_SYMBOL_PATH, "not an Orrery plugin (it does not export orrery_plugin_info)"},
      {FIXTURE_BAD_ABI_PATH, bad_abi.c_str()},
      {FIXTURE_THROWS_PATH, "registration threw: boom while registering"},
      {FIXTURE_FAILS_PATH, "registration failed: needs FIXTURE_HOME to be set"},
      {FIXTURE_COLLIDES_PATH, "registers network backend 'analytical', which already exists"},
  };
  for (const auto& c : cases) {
    BackendRegistry reg = DefaultBackends();
    auto p = Load(c.path, &reg);
    ASSERT_FALSE(p.ok()) << c.path;
    EXPECT_NE(p.status().message().find(c.needle), std::string::npos) << p.status().message();
    EXPECT_EQ(reg.Names().size(), 2u);  // nothing half-registered
  }
}

TEST(PluginLoader, CliLoadsRepeatedPluginsAndListsThem) {
  std::string err;
  EXPECT_EQ(testing::RunCli(std::string("plugins list --plugin=") + FIXTURE_GOOD_PATH, &err), 0) << err;
  EXPECT_EQ(testing::RunCli(std::string("run --example=default --plugin=") + FIXTURE_GOOD_PATH +
                                " --plugin=" + FIXTURE_GOOD_PATH,
                            &err),
            2);
  EXPECT_NE(err.find("'fixture-fixed', which already exists"), std::string::npos) << err;
  EXPECT_EQ(testing::RunCli(std::string("run --example=default --network-backend=fixture-fixed --plugin=") +
                                FIXTURE_GOOD_PATH,
                            &err),
            0)
      << err;
  // From the environment, as a configuration would name them.
  EXPECT_EQ(testing::RunCli(std::string("run --example=default --network-backend=fixture-fixed"), &err), 2);
  EXPECT_NE(err.find("valid: analytical, congestion-aware"), std::string::npos) << err;
  EXPECT_EQ(testing::RunCli(std::string("run --example=default --network-backend=fixture-fixed"), &err,
                            std::string("ORRERY_PLUGINS=") + FIXTURE_GOOD_PATH),
            0)
      << err;
}

}  // namespace
}  // namespace orrery

namespace orrery {
namespace {

TEST(CollectiveRegistry, InvalidGraphsAndNameClashesAreRefused) {
  CollectiveRegistry algos;
  std::string err;
  EXPECT_FALSE(algos.Register("ring", "", nullptr, &err));
  EXPECT_NE(err.find("'ring' is built in"), std::string::npos) << err;
  EXPECT_FALSE(algos.Register("inSwitch", "", nullptr, &err));  // the config parser checks plugins first
  EXPECT_NE(err.find("'inSwitch' is built in"), std::string::npos) << err;
  ASSERT_TRUE(algos.Register(
      "stray", "talks to a rank outside the ring",
      [](const CollectiveRequest& q) {
        CustomGraph g(1);
        g[0].kind = CustomOp::kSend;
        g[0].peer = 99;
        g[0].bytes = q.bytes;
        return g;
      },
      &err));
  ASSERT_TRUE(algos.Register(
      "miscounted", "num_deps does not match",
      [](const CollectiveRequest&) {
        CustomGraph g(2);
        g[0].kind = CustomOp::kComp;
        g[0].children = {1};
        g[1].kind = CustomOp::kComp;  // num_deps left at 0
        return g;
      },
      &err));
  EXPECT_FALSE(algos.Register("stray", "", nullptr, &err));
  for (const char* name : {"stray", "miscounted"}) {
    testing::TempDir d;
    d.Write("network.yml", testing::NetworkYaml("Ring", 4, 50, 500));
    d.Write("system.json",
            std::string(R"({"preferred-dataset-splits": 1, "all-reduce-implementation": [")") + name + "\"]}");
    ASSERT_TRUE(WriteSingleCollectiveTraces(4, CollectiveKind::kAllReduce, 4096, d.File("trace")).ok());
    RunConfig c;
    c.files.workload_prefix = d.File("trace");
    c.files.network = d.File("network.yml");
    c.files.system = d.File("system.json");
    auto r = RunSimulation(c, DefaultBackends(), &algos);
    ASSERT_FALSE(r.ok()) << name;
    EXPECT_NE(r.status().message().find(std::string("collective algorithm \"") + name + "\" returned an invalid graph"),
              std::string::npos)
        << r.status().message();
  }
}

}  // namespace
}  // namespace orrery

namespace orrery {
namespace {

TEST(PluginLoader, MemoryBackendFromAPlugin) {
  BackendRegistry reg = DefaultBackends();
  MemoryRegistry mem;
  RegisterBuiltinMemoryBackends(&mem);
  PluginRegistries r;
  r.network = &reg;
  r.memory = &mem;
  auto p = LoadPlugin(FIXTURE_GOOD_PATH, &r);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->memory_backends, (std::vector<std::string>{"fixture-mem"}));
  testing::TempDir d;
  d.Write("network.yml", testing::NetworkYaml("Ring", 2, 50, 500));
  d.Write("system.json", R"({"preferred-dataset-splits": 1})");
  d.Write("mem.yml", "backend: fixture-mem\n");
  testing::WriteTraces(d, 2, [](int) {
    std::vector<ChakraProtoMsg::Node> nodes;
    for (uint64_t id = 1; id <= 3; ++id) {
      nodes.push_back(testing::MakeNode(id, ChakraProtoMsg::MEM_STORE_NODE));
      testing::SetAttr(&nodes.back(), "tensor_size", uint64_t{4096});
    }
    return nodes;
  });
  RunConfig c;
  c.files.workload_prefix = d.File("trace");
  c.files.network = d.File("network.yml");
  c.files.system = d.File("system.json");
  c.files.memory_config = d.File("mem.yml");
  auto run = RunSimulation(c, reg, nullptr, &mem);
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(run->per_npu[1].finished_ns, 3 * 777u);  // MEM nodes share the communication slot: one at a time
}

}  // namespace
}  // namespace orrery
