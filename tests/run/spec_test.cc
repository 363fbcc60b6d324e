// A simulation as a value (run/spec.h, run/build.h): the resolved
// Spec, its canonical text and hash, the report's "config", and independent
// simulations on several threads.
#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "core/fnv.h"
#include "gen/gen_source.h"
#include "run/build.h"
#include "run/spec.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

using testing::TempDir;

const char kSmallModel[] = "name: small\nlayers: 4\nhidden: 256\nheads: 8\nvocab: 1024\nseq_len: 128\n";

// Every rank: a 1 MiB all-reduce, then a second one of 64 KiB.
void WriteAllReduceTraces(const TempDir& d, int npus, uint64_t first_bytes = 1 << 20) {
  testing::WriteTraces(d, npus, [&](int) {
    ChakraProtoMsg::Node a = testing::CollNode(0, 0, first_bytes);
    ChakraProtoMsg::Node b = testing::CollNode(1, 0, 64 << 10);
    b.add_data_deps(0);
    return std::vector<ChakraProtoMsg::Node>{a, b};
  });
}

// The inputs of one run in folder `d`, written the compact way.
void WriteInputs(const TempDir& d) {
  d.Write("network.yml", "topology: [ Ring ]\nnpus_count: [ 8 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n");
  d.Write("system.json", R"({"preferred-dataset-splits": 2, "endpoint-delay": 10})");
  d.Write("memory.yml", "backend: pool\nlatency_ns: 500\nbandwidth_gbps: 50\n");
  WriteAllReduceTraces(d, 8);
}

RunConfig ConfigIn(const TempDir& d) {
  RunConfig c;
  c.files.workload_prefix = d.File("trace");
  c.files.network = d.File("network.yml");
  c.files.system = d.File("system.json");
  c.files.memory_config = d.File("memory.yml");
  return c;
}

Spec Resolve(const RunConfig& c) {
  const BackendRegistry backends = DefaultBackends();
  auto s = ResolveSpec(c, Registries{&backends});
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? s.value() : Spec{};
}

TEST(Spec, HashIsFnv1aOfTheCanonicalText) {
  TempDir d;
  WriteInputs(d);
  const Spec s = Resolve(ConfigIn(d));
  const std::string text = SpecCanonical(s);
  // FNV-1a 64 by its definition: offset basis, then xor and multiply per byte.
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ull;
  EXPECT_EQ(SpecHash(s), HexU64(h));
  EXPECT_EQ(SpecHash(s).size(), 16u);
  EXPECT_NE(text.find("network.dim0=Ring npus=8 bandwidth_gbps=50 latency_ns=500 links_per_npu=1\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("memory.backend=pool\n"), std::string::npos) << text;
  // File names are not part of it.
  EXPECT_EQ(text.find(d.path()), std::string::npos) << text;
}

TEST(Spec, SameInputsUnderOtherNamesAndFormattingHashEqual) {
  TempDir a, b;
  WriteInputs(a);
  // The same values: other file names, other folder, other formatting, keys
  // in another order, defaults written out, the traces copied.
  b.Write("net-other.yaml", "topology:   [Ring]\n\nnpus_count: [8]   # NPUs\nbandwidth: [50.0]\nlatency: [ 500.0 ]\n");
  b.Write("sys.json",
          "{\n  \"endpoint-delay\": 10,\n\n  \"preferred-dataset-splits\": 2,\n"
          "  \"scheduling-policy\": \"LIFO\",\n  \"active-chunks-per-dimension\": 1\n}\n");
  b.Write("mem.yaml", "bandwidth_gbps: 50\nbackend: pool\n\nlatency_ns: 500   # ns\n");
  WriteAllReduceTraces(b, 8);
  RunConfig cb;
  cb.files.workload_prefix = b.File("trace");
  cb.files.network = b.File("net-other.yaml");
  cb.files.system = b.File("sys.json");
  cb.files.memory_config = b.File("mem.yaml");
  const Spec sa = Resolve(ConfigIn(a)), sb = Resolve(cb);
  EXPECT_EQ(SpecCanonical(sa), SpecCanonical(sb));
  EXPECT_EQ(SpecHash(sa), SpecHash(sb));
  // A network given as topology notation with the same values.
  RunConfig cn = ConfigIn(a);
  cn.files.network = "Ring(8,50GB/s,500ns)";
  EXPECT_EQ(SpecHash(Resolve(cn)), SpecHash(sa));
}

TEST(Spec, AnyOneChangedValueChangesTheHash) {
  TempDir d;
  WriteInputs(d);
  const std::string base = SpecHash(Resolve(ConfigIn(d)));
  struct Change {
    const char* what;
    std::function<void(const TempDir&, RunConfig*)> apply;
  };
  const std::vector<Change> changes = {
      {"bandwidth",
       [](const TempDir& t, RunConfig*) {
         t.Write("network.yml", "topology: [ Ring ]\nnpus_count: [ 8 ]\nbandwidth: [ 51 ]\nlatency: [ 500 ]\n");
       }},
      {"latency",
       [](const TempDir& t, RunConfig*) {
         t.Write("network.yml", "topology: [ Ring ]\nnpus_count: [ 8 ]\nbandwidth: [ 50 ]\nlatency: [ 501 ]\n");
       }},
      {"topology block",
       [](const TempDir& t, RunConfig*) {
         t.Write("network.yml", "topology: [ Switch ]\nnpus_count: [ 8 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n");
       }},
      {"preferred-dataset-splits",
       [](const TempDir& t, RunConfig*) {
         t.Write("system.json", R"({"preferred-dataset-splits": 4, "endpoint-delay": 10})");
       }},
      {"endpoint-delay",
       [](const TempDir& t, RunConfig*) {
         t.Write("system.json", R"({"preferred-dataset-splits": 2, "endpoint-delay": 11})");
       }},
      {"scheduling-policy",
       [](const TempDir& t, RunConfig*) {
         t.Write("system.json",
                 R"({"preferred-dataset-splits": 2, "endpoint-delay": 10, "scheduling-policy": "FIFO"})");
       }},
      {"all-reduce-implementation",
       [](const TempDir& t, RunConfig*) {
         t.Write("system.json", R"({"preferred-dataset-splits": 2, "endpoint-delay": 10,
                                    "all-reduce-implementation": ["direct"]})");
       }},
      {"active-chunks-per-dimension",
       [](const TempDir& t, RunConfig*) {
         t.Write("system.json",
                 R"({"preferred-dataset-splits": 2, "endpoint-delay": 10, "active-chunks-per-dimension": 2})");
       }},
      {"collective-sm-fraction",
       [](const TempDir& t, RunConfig*) {
         t.Write("system.json",
                 R"({"preferred-dataset-splits": 2, "endpoint-delay": 10, "collective-sm-fraction": 0.1})");
       }},
      {"memory latency",
       [](const TempDir& t, RunConfig*) {
         t.Write("memory.yml", "backend: pool\nlatency_ns: 501\nbandwidth_gbps: 50\n");
       }},
      {"memory capacity",
       [](const TempDir& t, RunConfig*) {
         t.Write("memory.yml", "backend: pool\nlatency_ns: 500\nbandwidth_gbps: 50\nlocal_capacity_bytes: 1000000\n");
       }},
      {"trace content", [](const TempDir& t, RunConfig*) { WriteAllReduceTraces(t, 8, (1 << 20) + 1); }},
      {"backend", [](const TempDir&, RunConfig* c) { c->run.backend = "congestion-aware"; }},
      {"iterations", [](const TempDir&, RunConfig* c) { c->run.iterations = 2; }},
      {"symmetry", [](const TempDir&, RunConfig* c) { c->run.symmetry = SymmetryMode::kOff; }},
      {"injection scale", [](const TempDir&, RunConfig* c) { c->run.injection_scale = 2; }},
      {"allow oversubscription", [](const TempDir&, RunConfig* c) { c->run.allow_oversubscription = true; }},
      {"communicator groups",
       [](const TempDir& t, RunConfig* c) {
         t.Write("groups.json", R"({"0": [0, 1, 2, 3, 4, 5, 6, 7]})");
         c->files.comm_groups = t.File("groups.json");
       }},
  };
  std::set<std::string> seen = {base};
  for (const Change& ch : changes) {
    TempDir t;
    WriteInputs(t);
    RunConfig c = ConfigIn(t);
    ch.apply(t, &c);
    const std::string h = SpecHash(Resolve(c));
    EXPECT_NE(h, base) << ch.what;
    EXPECT_TRUE(seen.insert(h).second) << ch.what << " hashes like another change";
  }
}

TEST(Spec, GeneratorArgumentsEnterTheHashNormalised) {
  TempDir d, e;
  d.Write("system.json", "{}");
  d.Write("model.yml", kSmallModel);
  e.Write("other-name.yaml", kSmallModel);
  auto spec_for = [&](const std::string& args) {
    RunConfig c;
    c.files.network = "Ring(8,50GB/s,500ns)";
    c.files.system = d.File("system.json");
    auto source = gen::GeneratedSource(args);
    EXPECT_TRUE(source.ok()) << source.status().message();
    c.source = source.ok() ? source.value() : nullptr;
    return Resolve(c);
  };
  // A model file enters by its content.
  EXPECT_EQ(SpecHash(spec_for("--model=" + d.File("model.yml") + " --tp=8")),
            SpecHash(spec_for("--model=" + e.File("other-name.yaml") + " --tp=8")));
  const Spec a = spec_for("--model=llama3-8b --tp=8 --microbatches=2");
  EXPECT_EQ(SpecHash(a), SpecHash(spec_for("  --model=llama3-8b   --tp=8 --microbatches=2 ")));
  EXPECT_NE(SpecHash(a), SpecHash(spec_for("--model=llama3-8b --tp=8 --microbatches=4")));
  EXPECT_NE(SpecCanonical(a).find("workload=generated: --model=llama3-8b --tp=8 --microbatches=2\n"), std::string::npos)
      << SpecCanonical(a);
}

TEST(Spec, ReportConfigListsTheDefaultsAndTheHash) {
  TempDir d;
  d.Write("network.yml", "topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n");
  d.Write("system.json", "{}");  // every system value a default
  WriteAllReduceTraces(d, 4);
  RunConfig c;
  c.files.workload_prefix = d.File("trace");
  c.files.network = d.File("network.yml");
  c.files.system = d.File("system.json");
  auto r = RunSimulation(c, DefaultBackends());
  ASSERT_TRUE(r.ok()) << r.status().message();
  const nlohmann::json j = nlohmann::json::parse(FormatReportJson(r.value()));
  const nlohmann::json& cfg = j.at("config");
  EXPECT_EQ(cfg.at("hash"), SpecHash(Resolve(c)));
  EXPECT_EQ(cfg.at("files").at("system"), d.File("system.json"));
  EXPECT_EQ(cfg.at("files").at("remote_memory"), "");
  // ASTRA-sim's defaults (docs/parity.md): LIFO, 10 ns endpoint delay, one
  // active chunk, one split, ring everywhere, baseline optimisation.
  const nlohmann::json& sys = cfg.at("system");
  EXPECT_EQ(sys.at("scheduling-policy"), "LIFO");
  EXPECT_EQ(sys.at("endpoint-delay"), 10);
  EXPECT_EQ(sys.at("active-chunks-per-dimension"), 1);
  EXPECT_EQ(sys.at("preferred-dataset-splits"), 1);
  EXPECT_EQ(sys.at("collective-optimization"), "baseline");
  EXPECT_EQ(sys.at("intra-dimension-scheduling"), "FIFO");
  EXPECT_EQ(sys.at("inter-dimension-scheduling"), "baseline");
  EXPECT_EQ(sys.at("roofline-enabled"), false);
  const nlohmann::json& dim = cfg.at("network").at("dims").at(0);
  EXPECT_EQ(dim.at("block"), "Ring");
  EXPECT_EQ(dim.at("npus"), 4);
  EXPECT_EQ(dim.at("bandwidth_gbps"), 50.0);
  EXPECT_EQ(dim.at("latency_ns"), 500.0);
  EXPECT_EQ(dim.at("links_per_npu"), 1);
  EXPECT_EQ(cfg.at("network").at("npus"), 4);
  EXPECT_EQ(cfg.at("memory").at("backend"), "astra-sim");
  EXPECT_EQ(cfg.at("memory").at("remote_memory_type"), "NO_MEMORY_EXPANSION");
  EXPECT_EQ(cfg.at("backend").at("name"), "analytical");
  EXPECT_EQ(cfg.at("iterations"), 1);
  EXPECT_EQ(cfg.at("symmetry"), "auto");
  EXPECT_EQ(cfg.at("injection_scale"), 1.0);
  EXPECT_EQ(cfg.at("comm_groups").at("from"), "none");
  // The text report names the same hash, and reruns are byte-identical.
  const std::string text = FormatReportText(r.value());
  EXPECT_NE(text.find("\nconfig hash: " + cfg.at("hash").get<std::string>() + "\n"), std::string::npos) << text;
  auto again = RunSimulation(c, DefaultBackends());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(FormatReportJson(again.value()), FormatReportJson(r.value()));
  EXPECT_EQ(FormatReportText(again.value()), text);
}

TEST(Spec, OneSpecBuildsAnyNumberOfEqualSimulations) {
  TempDir d;
  WriteInputs(d);
  const BackendRegistry backends = DefaultBackends();
  const Registries reg{&backends};
  const Spec s = Resolve(ConfigIn(d));
  auto one = RunSpec(s, reg), two = RunSpec(s, reg);
  ASSERT_TRUE(one.ok()) << one.status().message();
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(FormatReportJson(one.value()), FormatReportJson(two.value()));
  // And RunSimulation is the same composition.
  auto direct = RunSimulation(ConfigIn(d), backends);
  ASSERT_TRUE(direct.ok());
  EXPECT_EQ(FormatReportText(direct.value()), FormatReportText(one.value()));
}

TEST(Spec, TwoDifferentSimulationsOnTwoThreadsEqualTheirSerialReports) {
  // Different inputs, backends and workload kinds: traces on a ring with a
  // memory pool and congestion-aware links; a generated workload on a 2-D
  // network, symmetric, analytical.
  TempDir a, b;
  WriteInputs(a);
  RunConfig ca = ConfigIn(a);
  ca.run.backend = "congestion-aware";
  ca.observe.all_collectives = true;
  ca.observe.link_stats = true;
  b.Write("system.json", R"({"roofline-enabled": 1, "peak-perf": 100, "local-mem-bw": 2000})");
  b.Write("model.yml", kSmallModel);
  RunConfig cb;
  cb.files.network = "Ring(4,100GB/s,500ns)_Switch(2,25GB/s,2us)";
  cb.files.system = b.File("system.json");
  auto source = gen::GeneratedSource("--model=" + b.File("model.yml") + " --tp=2 --pp=2 --dp=2 --microbatches=4");
  ASSERT_TRUE(source.ok()) << source.status().message();
  cb.source = source.value();
  cb.observe.critical_path = true;
  const BackendRegistry backends = DefaultBackends();
  const Registries reg{&backends};
  const Spec sa = Resolve(ca), sb = Resolve(cb);
  ASSERT_NE(SpecHash(sa), SpecHash(sb));
  auto text = [](const Result<RunReport>& r) {
    return r.ok() ? FormatReportText(r.value()) + FormatReportJson(r.value()) + FormatReportCsv(r.value())
                  : "error: " + r.status().message();
  };
  const std::string serial_a = text(RunSpec(sa, reg)), serial_b = text(RunSpec(sb, reg));
  ASSERT_EQ(serial_a.rfind("error", 0), std::string::npos) << serial_a;
  ASSERT_EQ(serial_b.rfind("error", 0), std::string::npos) << serial_b;
  for (int round = 0; round < 3; ++round) {
    std::string par_a, par_b;
    std::thread ta([&] { par_a = text(RunSpec(sa, reg)); });
    std::thread tb([&] {
      const BackendRegistry own = DefaultBackends();
      par_b = text(RunSpec(sb, Registries{&own}));
    });
    ta.join();
    tb.join();
    EXPECT_EQ(par_a, serial_a) << "round " << round;
    EXPECT_EQ(par_b, serial_b) << "round " << round;
  }
}

}  // namespace
}  // namespace orrery
