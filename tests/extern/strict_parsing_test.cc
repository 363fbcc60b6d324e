// Strict parsing (issue 9, parts 2 and 8): one test per rule, each asserting on
// the message — the file, the line (YAML) or key path (JSON), the key, the value
// and what is allowed. Expected texts follow core/parse's format and the ranges
// in core/limits.h (README, "Input formats" > "Ranges").
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <thread>

#include "extern/astra_config.h"
#include "extern/et_io.h"
#include "extern/json_util.h"
#include "network/notation.h"
#include "tests/test_util.h"
#include "workload/graph.h"

namespace orrery {
namespace {

using testing::TempDir;
const std::string kBw = "allowed: a number >= 0.001 and <= 1e+09";
const std::string kNpus = "allowed: an integer >= 2 and <= 67108864";

// Reads `text` as a network YAML (n.yml) and returns the error message.
std::string NetError(const std::string& text) {
  TempDir d;
  d.Write("n.yml", text);
  auto r = ReadAstraNetworkYaml(d.File("n.yml"));
  EXPECT_FALSE(r.ok()) << text;
  return r.ok() ? "" : r.status().message();
}
std::string AstraNet(const std::string& npus, const std::string& bw, const std::string& lat) {
  return "topology: [ Ring ]\nnpus_count: [ " + npus + " ]\nbandwidth: [ " + bw + " ]\nlatency: [ " + lat + " ]\n";
}
std::string SysError(const std::string& json) {
  TempDir d;
  d.Write("sys.json", json);
  auto r = ReadAstraSystemJson(d.File("sys.json"));
  EXPECT_FALSE(r.ok()) << json;
  return r.ok() ? "" : r.status().message();
}
std::string MemJsonError(const std::string& json) {
  TempDir d;
  d.Write("mem.json", json);
  auto r = ReadAstraRemoteMemoryJson(d.File("mem.json"));
  EXPECT_FALSE(r.ok()) << json;
  return r.ok() ? "" : r.status().message();
}
std::string NotationError(const std::string& text) {
  auto r = ParseTopologyNotation(text);
  EXPECT_FALSE(r.ok()) << text;
  return r.ok() ? "" : r.status().message();
}
// Runs 4 NPUs (one COMP node each) with Orrery's memory YAML `mem.yml`.
Status RunWithMemoryYaml(const std::string& yaml) {
  TempDir d;
  d.Write("network.yml", testing::NetworkYaml("Ring", 4, 50, 500));
  d.Write("system.json", R"({"preferred-dataset-splits": 1})");
  d.Write("mem.yml", yaml);
  testing::WriteTraces(d, 4, [](int) {
    return std::vector<ChakraProtoMsg::Node>{testing::MakeNode(0, ChakraProtoMsg::COMP_NODE)};
  });
  RunConfig c;
  c.files.workload_prefix = d.File("trace");
  c.files.network = d.File("network.yml");
  c.files.system = d.File("system.json");
  c.files.memory_config = d.File("mem.yml");
  auto r = RunSimulation(c, DefaultBackends());
  EXPECT_FALSE(r.ok()) << yaml;
  return r.ok() ? Status::Ok() : r.status();
}
#define EXPECT_HAS(haystack, needle) EXPECT_NE((haystack).find(needle), std::string::npos) << (haystack)

// --- network YAML ------------------------------------------------------------

TEST(StrictNetworkYaml, TrailingUnitIsRefusedWithLine) {
  const std::string m = NetError(AstraNet("8", "50GB/s", "500"));
  EXPECT_HAS(m, "n.yml:3: bandwidth[0] = \"50GB/s\": not a number (trailing \"GB/s\"); " + kBw);
}

TEST(StrictNetworkYaml, BandwidthsOfTinyAndHugeMagnitudeAreRefused) {
  EXPECT_HAS(NetError(AstraNet("8", "1e-300", "500")), "bandwidth[0] = \"1e-300\": out of range; " + kBw);
  EXPECT_HAS(NetError(AstraNet("8", "1e300", "500")), "bandwidth[0] = \"1e300\": out of range; " + kBw);
  EXPECT_HAS(NetError(AstraNet("8", "-5", "500")), "bandwidth[0] = \"-5\": out of range");
}

TEST(StrictNetworkYaml, LatencyMustBeFiniteAndAtMost1e12Ns) {
  EXPECT_HAS(NetError(AstraNet("8", "50", "nan")), "n.yml:4: latency[0] = \"nan\": not a finite number");
  EXPECT_HAS(NetError(AstraNet("8", "50", "1e300")),
             "latency[0] = \"1e300\": out of range; allowed: a number >= 0 and <= 1e+12");
}

TEST(StrictNetworkYaml, WrongTypesAreNamed) {
  EXPECT_HAS(NetError(AstraNet("8", "[ 1, 2 ]", "500")),
             "n.yml:3: bandwidth[0] = [1, 2]: expected a number, found a list");
  EXPECT_HAS(NetError(AstraNet("eight", "50", "500")), "n.yml:2: npus_count[0] = \"eight\": not an integer");
  EXPECT_HAS(NetError(AstraNet("8.5", "50", "500")), "npus_count[0] = \"8.5\": not an integer");
  EXPECT_HAS(NetError("topology: Ring\nnpus_count: [ 8 ]\nbandwidth: [ 1 ]\nlatency: [ 1 ]\n"),
             "n.yml:1: topology = \"Ring\": expected a list");
}

TEST(StrictNetworkYaml, AKeyGivenTwiceIsRefused) {
  EXPECT_HAS(NetError(AstraNet("8", "50", "500") + "bandwidth: [ 60 ]\n"),
             "n.yml:5: bandwidth: given twice (line 3 and here)");
}

TEST(StrictNetworkYaml, NpuCountOverflowIsRefusedBeforeAnythingIsBuilt) {
  // One dimension beyond int64, one beyond the cap, and a product that overflows int64 (2^26)^4 = 2^104.
  EXPECT_HAS(NetError(AstraNet("99999999999999999999", "50", "500")),
             "npus_count[0] = \"99999999999999999999\": out of range");
  EXPECT_HAS(NetError(AstraNet("999999999", "50", "500")),
             "npus_count[0] = 999999999: more NPUs than Orrery simulates; allowed: an integer >= 1 and <= 67108864");
  const std::string four =
      "topology: [ Ring, Ring, Ring, Ring ]\nnpus_count: [ 67108864, 67108864, 67108864, 67108864 ]\n"
      "bandwidth: [ 1, 1, 1, 1 ]\nlatency: [ 1, 1, 1, 1 ]\n";
  EXPECT_HAS(NetError(four),
             "n.yml:2: npus_count[1] = 67108864: the network would have more than 67108864 NPUs in total");
}

TEST(StrictNetworkYaml, OrreryDimsAreCheckedToo) {
  const std::string head = "dims:\n  - block: Ring\n    npus: 8\n";
  EXPECT_HAS(NetError(head + "    bandwidth_gbps: 1.6TB/s\n    latency_ns: 5\n"),
             "n.yml:4: dims[0].bandwidth_gbps = \"1.6TB/s\": not a number (trailing \"TB/s\")");
  EXPECT_HAS(NetError(head + "    bandwidth_gbps: 1\n    latency_ns: 5\n    links_per_npu: 0\n"),
             "n.yml:6: dims[0].links_per_npu = \"0\": out of range; allowed: an integer >= 1 and <= 4096");
  EXPECT_HAS(NetError("dims:\n  - block: Ring\n    npus: 4294967296\n    bandwidth_gbps: 1\n    latency_ns: 5\n"),
             "n.yml:3: dims[0].npus = 4294967296: more NPUs than Orrery simulates");
}

// --- topology notation ---------------------------------------------------------

TEST(StrictNotation, BandwidthOverflowingToInfinityIsRefused) {
  const std::string m = NotationError("Ring(8,1e308TB/s,1ns)");
  EXPECT_HAS(m, "column 8: bandwidth in GB/s = inf: not a finite number; " + kBw);
  EXPECT_HAS(m, "\n         ^");  // the caret under column 8
}

TEST(StrictNotation, NpuCountsAndTheirProductAreCapped) {
  EXPECT_HAS(NotationError("Ring(999999999,100GB/s,1ns)"),
             "column 6: NPU count = \"999999999\": out of range; " + kNpus);
  EXPECT_HAS(NotationError("Torus2D(99999999999999999999x2,1GB/s,1ns)"),
             "NPU count = \"99999999999999999999\": out of range");
  EXPECT_HAS(NotationError("Ring(4096,1GB/s,1ns)_Ring(4096,1GB/s,1ns)_Ring(8,1GB/s,1ns)"),
             "column 43: the network would have more than 67108864 NPUs in total");
}

TEST(StrictNotation, MalformedNumbersAndRangesAfterUnits) {
  EXPECT_HAS(NotationError("Ring(8,1.2.3GB/s,1ns)"), "bandwidth = \"1.2.3\": not a number (trailing \".3\")");
  EXPECT_HAS(NotationError("Ring(8,1GB/s,2000s)"), "unknown latency unit 's'");
  EXPECT_HAS(NotationError("Ring(8,1GB/s,99999999ms)"),
             "latency in ns = 99999999000000: out of range; allowed: a number >= 0 and <= 1e+12");
  EXPECT_HAS(NotationError("Ring(8,1e-300GB/s,1ns)"), "bandwidth in GB/s = 1e-300: out of range; " + kBw);
  EXPECT_HAS(NotationError("Ring(8,1GB/s,1ns,0)"),
             "links per NPU = \"0\": out of range; allowed: an integer >= 1 and <= 4096");
  auto ok = ParseTopologyNotation("Ring(8,1e3GB/s,2e3ns)");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->at(0).bandwidth_gbps, 1000.0);
  EXPECT_EQ(ok->at(0).latency_ns, 2000.0);
}

TEST(StrictNotation, HugeRingIsRefusedOnTheCommandLineBeforeAllocation) {
  std::string err;
  EXPECT_EQ(
      testing::RunCli("run --network-configuration='Ring(999999999,100GB/s,1us)' --system-configuration=none.json "
                      "--workload-configuration=none",
                      &err),
      2);
  EXPECT_HAS(err, "NPU count = \"999999999\": out of range; " + kNpus);
}

// --- system JSON -----------------------------------------------------------------

TEST(StrictSystemJson, NumberBeyondADoubleNamesFileAndPosition) {
  EXPECT_HAS(SysError("{\n  \"endpoint-delay\": 1e309\n}\n"),
             "sys.json:2:21: 1e309: not a finite number; allowed: numbers within a double's range");
}

TEST(StrictSystemJson, AKeyGivenTwiceIsRefused) {
  EXPECT_HAS(SysError(R"({"endpoint-delay": 5, "endpoint-delay": 7})"),
             "sys.json: key \"endpoint-delay\" is given twice in one object");
}

TEST(StrictSystemJson, WrongTypeNegativeAndFractionalDelays) {
  EXPECT_HAS(SysError(R"({"endpoint-delay": "abc"})"),
             "sys.json: endpoint-delay = \"abc\": expected a number, found a string; allowed: an integer >= 0 and <= "
             "1000000000000");
  EXPECT_HAS(SysError(R"({"endpoint-delay": -1})"), "endpoint-delay = -1: negative");
  EXPECT_HAS(SysError(R"({"endpoint-delay": 2.5})"), "endpoint-delay = 2.5: not an integer");
  EXPECT_HAS(SysError(R"({"endpoint-delay": 1e300})"), "endpoint-delay = 1e+300: out of range");
}

TEST(StrictSystemJson, DatasetSplitsAndActiveChunksAreCapped) {
  EXPECT_HAS(SysError(R"({"preferred-dataset-splits": 1000000})"),
             "preferred-dataset-splits = 1000000: out of range; allowed: an integer >= 1 and <= 4096");
  EXPECT_HAS(SysError(R"({"active-chunks-per-dimension": 0})"),
             "active-chunks-per-dimension = 0: out of range; allowed: an integer >= 1 and <= 4096");
}

TEST(StrictSystemJson, RooflineAndBandwidthKnobs) {
  EXPECT_HAS(SysError(R"({"peak-perf": 0})"), "peak-perf = 0: out of range; allowed: a number >= 0.001 and <= 1e+09");
  EXPECT_HAS(SysError(R"({"local-mem-bw": -1})"), "local-mem-bw = -1: out of range; " + kBw);
  EXPECT_HAS(SysError(R"({"local-mem-bw": 1e-300})"), "local-mem-bw = 1e-300: out of range");
  EXPECT_HAS(SysError(R"({"roofline-enabled": "yes"})"),
             "roofline-enabled = \"yes\": not a switch; allowed: 0, 1, true or false");
  EXPECT_HAS(SysError(R"({"all-reduce-implementation": [["ring"]]})"),
             "all-reduce-implementation[0] = [\"ring\"]: expected a string, found a list");
  EXPECT_HAS(SysError(R"({"all-reduce-implementation": ["direct99999999999"]})"),
             "all-reduce-implementation[0] (direct window) = \"99999999999\": out of range");
}

TEST(StrictSystemJson, KeysOrreryIgnoresAreStillTypeChecked) {
  EXPECT_HAS(SysError(R"({"boost-mode": "on"})"), "boost-mode = \"on\": not a switch");
  EXPECT_HAS(SysError(R"({"L": -3})"), "L = -3: out of range; allowed: a number >= 0");
}

// --- remote-memory JSON ----------------------------------------------------------

TEST(StrictRemoteMemoryJson, LatencyAndBandwidth) {
  const std::string pool = R"({"memory-type": "MEMORY_POOL", )";
  EXPECT_HAS(MemJsonError(pool + R"("remote-mem-latency": "abc", "remote-mem-bw": 50})"),
             "mem.json: remote-mem-latency = \"abc\": expected a number, found a string");
  EXPECT_HAS(MemJsonError(pool + R"("remote-mem-latency": 5, "remote-mem-bw": -50})"),
             "mem.json: remote-mem-bw = -50: out of range; " + kBw);
  EXPECT_HAS(MemJsonError(pool + R"("remote-mem-latency": 1e300, "remote-mem-bw": 50})"),
             "remote-mem-latency = 1e+300: out of range");
}

TEST(StrictRemoteMemoryJson, NodeCountsAreCheckedAndTheirProductCapped) {
  const std::string node =
      R"({"memory-type": "PER_NODE_MEMORY_EXPANSION", "remote-mem-latency": 5, "remote-mem-bw": 5, )";
  EXPECT_HAS(MemJsonError(node + R"("num-nodes": 1e10, "num-npus-per-node": 4})"),
             "num-nodes = 10000000000: out of range; allowed: an integer >= 1 and <= 67108864");
  EXPECT_HAS(MemJsonError(node + R"("num-nodes": 2, "num-npus-per-node": 0})"), "num-npus-per-node = 0: out of range");
  EXPECT_HAS(MemJsonError(node + R"("num-nodes": 65536, "num-npus-per-node": 65536})"),
             "num-nodes x num-npus-per-node = 65536 x 65536: more NPUs than Orrery simulates");
}

// --- Orrery's memory YAML -----------------------------------------------------------

TEST(StrictMemoryYaml, BandwidthWithAUnitIsRefused) {
  const Status st = RunWithMemoryYaml("backend: pool\nbandwidth_gbps: 1.6TB/s\n");
  EXPECT_EQ(st.code(), StatusCode::kInvalidInput);
  EXPECT_HAS(st.message(), "mem.yml:2: bandwidth_gbps = \"1.6TB/s\": not a number (trailing \"TB/s\"); " + kBw);
}

TEST(StrictMemoryYaml, PoolPortsAndInfiniteBandwidth) {
  EXPECT_HAS(RunWithMemoryYaml("backend: pool\nbandwidth_gbps: 50\nports: 9223372036854775808\n").message(),
             "mem.yml:3: ports = \"9223372036854775808\": out of range; allowed: an integer >= 1 and <= 65536");
  EXPECT_HAS(RunWithMemoryYaml("backend: pool\nbandwidth_gbps: inf\nsharing: fair\n").message(),
             "mem.yml:2: bandwidth_gbps = \"inf\": not a finite number");
  EXPECT_HAS(RunWithMemoryYaml("backend: pool\nbandwidth_gbps: 50\nlatency_ns: 1e300\n").message(),
             "mem.yml:3: latency_ns = \"1e300\": out of range; allowed: an integer >= 0 and <= 1000000000000");
}

TEST(StrictMemoryYaml, AstraSimBackendSettingsAreChecked) {
  const std::string head = "backend: astra-sim\nmemory-type: PER_NODE_MEMORY_EXPANSION\n";
  EXPECT_HAS(RunWithMemoryYaml(head + "remote-mem-latency: abc\nremote-mem-bw: 50\n").message(),
             "mem.yml:3: remote-mem-latency = \"abc\": not an integer");
  EXPECT_HAS(RunWithMemoryYaml(head + "remote-mem-latency: 5\nremote-mem-bw: -50\n").message(),
             "mem.yml:4: remote-mem-bw = \"-50\": out of range; " + kBw);
  EXPECT_HAS(RunWithMemoryYaml(head + "remote-mem-latency: 5\nremote-mem-bw: 50\nnum-npus-per-node: 0\n").message(),
             "mem.yml:5: num-npus-per-node = \"0\": out of range; allowed: an integer >= 1 and <= 4");
  EXPECT_HAS(RunWithMemoryYaml(head + "remote-mem-latency: 5\nremote-mem-bw: 50\nnum-npus-per-node: 2\nnum-nodes: 3\n")
                 .message(),
             "mem.yml:6: num-nodes = 3: num-nodes x num-npus-per-node (2) is not the network's 4 NPUs");
  EXPECT_HAS(RunWithMemoryYaml("backend: astra-sim\nmemory-type: POOL\n").message(),
             "mem.yml:2: memory-type = \"POOL\": unknown memory type");
}

TEST(StrictMemoryYaml, UnknownKeysOfEveryBuiltinBackend) {
  EXPECT_HAS(
      RunWithMemoryYaml("backend: astra-sim\nremote-mem-latnecy: 5\n").message(),
      "mem.yml:2: unknown key 'remote-mem-latnecy' for the astra-sim backend (did you mean 'remote-mem-latency'?)");
  EXPECT_HAS(RunWithMemoryYaml("backend: pool\nbandwidth_gbps: 5\nport: 2\n").message(),
             "mem.yml:3: unknown key 'port' for the pool backend (did you mean 'ports'?)");
  EXPECT_HAS(RunWithMemoryYaml("backend: pool\nbandwidth_gbps: 5\nbandwidth_gbps: 6\n").message(),
             "mem.yml:3: bandwidth_gbps: given twice (line 2 and here)");
}

TEST(StrictMemoryYaml, CapacitiesAreWholeByteCounts) {
  EXPECT_HAS(RunWithMemoryYaml("backend: pool\nbandwidth_gbps: 5\nlocal_capacity_bytes: 80GB\n").message(),
             "mem.yml:3: local_capacity_bytes = \"80GB\": not an integer (trailing \"GB\")");
  EXPECT_HAS(RunWithMemoryYaml("backend: pool\nbandwidth_gbps: 5\nlocal_latency_ns: -1\n").message(),
             "mem.yml:3: local_latency_ns = \"-1\": negative");
}

// --- communicator groups -------------------------------------------------------------

TEST(StrictCommGroups, RanksAreCheckedIntegers) {
  TempDir d;
  for (const auto& [json, needle] : std::vector<std::pair<std::string, std::string>>{
           {R"({"g": [0, "1"]})", "g.json: \"g\"[1] = \"1\": expected a number, found a string"},
           {R"({"g": [0, 1.5]})", "g.json: \"g\"[1] = 1.5: not an integer"},
           {R"({"g": [0, -1]})", "g.json: \"g\"[1] = -1: group \"g\" has rank -1, outside the network's ranks 0..7"}}) {
    d.Write("g.json", json);
    auto r = ReadCommGroupJson(d.File("g.json"), 8);
    ASSERT_FALSE(r.ok()) << json;
    EXPECT_HAS(r.status().message(), needle);
  }
}

// --- Chakra ET attributes ---------------------------------------------------------------

// Loads a one-node trace for rank 0 of 4 NPUs.
std::string TraceError(const ChakraProtoMsg::Node& node) {
  TempDir d;
  testing::WriteTraces(d, 1, [&](int) { return std::vector<ChakraProtoMsg::Node>{node}; });
  auto g = LoadNpuGraph(d.File("trace.0.et"), 0, GraphLoadOptions{4, 1, nullptr});
  EXPECT_FALSE(g.ok());
  return g.ok() ? "" : g.status().message();
}
ChakraProtoMsg::AttributeProto* Attr(ChakraProtoMsg::Node* n, const char* name) {
  for (auto& a : *n->mutable_attr()) {
    if (a.name() == name) return &a;
  }
  auto* a = n->add_attr();
  a->set_name(name);
  return a;
}

TEST(StrictTraceAttributes, CommSizeMinusOneIsNot2To64Minus1) {
  auto n = testing::CollNode(3, 0, 0);
  Attr(&n, "comm_size")->set_int64_val(-1);
  EXPECT_HAS(TraceError(n),
             "trace.0.et: node 3 (rank 0): comm_size = -1: negative; allowed: an integer >= 0 and <= 281474976710656");
}

TEST(StrictTraceAttributes, NanInfiniteFractionalAndHugeSizes) {
  auto n = testing::CollNode(3, 0, 0);
  Attr(&n, "comm_size")->set_double_val(std::nan(""));
  EXPECT_HAS(TraceError(n), "node 3 (rank 0): comm_size = nan: not a finite number");
  Attr(&n, "comm_size")->set_double_val(1.5);
  EXPECT_HAS(TraceError(n), "comm_size = 1.5: not an integer");
  Attr(&n, "comm_size")->set_uint64_val(uint64_t{1} << 60);
  EXPECT_HAS(TraceError(n), "comm_size = 1152921504606846976: out of range");
  auto c = testing::MakeNode(5, ChakraProtoMsg::COMP_NODE);
  Attr(&c, "num_ops")->set_double_val(std::numeric_limits<double>::infinity());
  EXPECT_HAS(
      TraceError(c),
      "node 5 (rank 0): num_ops = inf: not a finite number; allowed: an integer >= 0 and <= 1000000000000000000");
  auto t = testing::MakeNode(5, ChakraProtoMsg::COMP_NODE);
  Attr(&t, "tensor_size")->set_double_val(1e30);
  EXPECT_HAS(TraceError(t), "tensor_size = 1e+30: out of range");
}

TEST(StrictTraceAttributes, RanksAndDurations) {
  auto s = testing::MakeNode(2, ChakraProtoMsg::COMM_SEND_NODE);
  Attr(&s, "comm_size")->set_uint64_val(8);
  Attr(&s, "comm_dst")->set_int32_val(-1);
  EXPECT_HAS(TraceError(s), "node 2 (rank 0): comm_dst = -1: negative");
  Attr(&s, "comm_dst")->set_uint64_val(1);
  Attr(&s, "comm_tag")->set_double_val(std::nan(""));
  EXPECT_HAS(TraceError(s), "comm_tag = nan: not a finite number");
  auto c = testing::MakeNode(5, ChakraProtoMsg::COMP_NODE);
  c.set_duration_micros(uint64_t{1} << 62);
  EXPECT_HAS(TraceError(c),
             "node 5 (rank 0): duration_micros = 4611686018427387904: out of range; "
             "allowed: an integer >= 0 and <= 1000000000000");
}

TEST(StrictTraceAttributes, OnlyTheAttributesANodeTypeUsesAreRead) {
  auto c = testing::MakeNode(5, ChakraProtoMsg::COMP_NODE);
  Attr(&c, "is_cpu_op")->set_double_val(std::nan(""));
  EXPECT_HAS(TraceError(c), "node 5 (rank 0): is_cpu_op = (not a switch): not a boolean; allowed: true, false, 0 or 1");
  // A collective carrying a meaningless num_ops is loaded: collectives do not use it.
  auto coll = testing::CollNode(3, 0, 64);
  Attr(&coll, "num_ops")->set_int64_val(-7);
  TempDir d;
  testing::WriteTraces(d, 1, [&](int) { return std::vector<ChakraProtoMsg::Node>{coll}; });
  EXPECT_TRUE(LoadNpuGraph(d.File("trace.0.et"), 0, GraphLoadOptions{4, 1, nullptr}).ok());
}

TEST(StrictTraceAttributes, RooflineNodeWithNoWorkTakesOneNanosecond) {
  TempDir d;
  d.Write("network.yml", testing::NetworkYaml("Ring", 2, 50, 500));
  d.Write("system.json", R"({"roofline-enabled": 1, "peak-perf": 100, "local-mem-bw": 50})");
  testing::WriteTraces(d, 2, [](int) {
    auto n = testing::MakeNode(0, ChakraProtoMsg::COMP_NODE);
    testing::SetAttr(&n, "num_ops", uint64_t{0});
    testing::SetAttr(&n, "tensor_size", uint64_t{1024});
    return std::vector<ChakraProtoMsg::Node>{n};
  });
  auto r = testing::RunIn(d);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->per_npu[0].finished_ns, 1u);  // 0 / 0 would be NaN; zero work is 1 ns (README)
}

// Every config file is read by ReadTextFile: the exact bytes of a regular
// file (NULs, no final newline), an empty file, a pipe (no size), and the
// messages for a directory and a missing file.
TEST(ReadTextFile, ExactBytesOfFilesAndPipes) {
  TempDir d;
  const std::string bytes("a\0b\nlast line", 13);
  {
    std::ofstream out(d.File("f"), std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  auto f = ReadTextFile(d.File("f"));
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f.value(), bytes);
  d.Write("empty", "");
  auto e = ReadTextFile(d.File("empty"));
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e.value(), "");
  auto dir = ReadTextFile(d.path());
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(dir.status().message().find(": is a directory; a file is expected here"), std::string::npos)
      << dir.status().message();
  auto missing = ReadTextFile(d.File("nope.json"));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("nope.json: cannot open file"), std::string::npos);
  const std::string fifo = d.File("pipe");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::string big(100000, 'x');  // more than one stream buffer
  std::thread writer([&] {
    std::ofstream out(fifo, std::ios::binary);
    out << big << "end";
  });
  auto p = ReadTextFile(fifo);
  writer.join();
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p.value(), big + "end");
}

}  // namespace
}  // namespace orrery
