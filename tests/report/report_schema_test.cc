// Every run report validates against docs/report.schema.json (valijson, JSON
// Schema draft 7): all conformance cases, the embedded examples, generated
// workloads, symmetric and full runs, the critical path, per-link statistics,
// memory; and reports with a field removed, a wrong type, a negative time or an
// unknown field are rejected, so the schema says something.
#define VALIJSON_USE_EXCEPTIONS 1
#include <gtest/gtest.h>
#include <unistd.h>
#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validator.hpp>

#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/test_util.h"

namespace orrery {
namespace {

using nlohmann::json;
using testing::TempDir;

class ReportSchema {
 public:
  ReportSchema() {
    std::ifstream in(std::string(ORRERY_SOURCE_DIR) + "/docs/report.schema.json");
    doc_ = json::parse(in);
    valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
    valijson::adapters::NlohmannJsonAdapter adapter(doc_);
    parser.populateSchema(adapter, schema_);
  }
  // "" when `report` validates; else one line per violation: "<root> [npus] [0]: ...".
  std::string Violations(const json& report) const {
    valijson::Validator validator;
    valijson::ValidationResults results;
    valijson::adapters::NlohmannJsonAdapter adapter(report);
    if (validator.validate(schema_, adapter, &results)) return "";
    std::string out;
    valijson::ValidationResults::Error e;
    while (results.popError(e)) {
      for (const auto& c : e.context) out += c + " ";
      out += ": " + e.description + "\n";
    }
    return out.empty() ? "invalid (no detail)\n" : out;
  }
  std::string Violations(const std::string& text) const { return Violations(json::parse(text)); }

 private:
  json doc_;
  valijson::Schema schema_;
};

const ReportSchema& Schema() {
  static const ReportSchema* schema = new ReportSchema();
  return *schema;
}

// `orrery run ARGS --report-format=json`; fails the test on a non-zero exit.
std::string RunJson(const std::string& args) {
  std::string out, err;
  const int rc = testing::RunCliCapture("run " + args + " --report-format=json", &out, &err);
  EXPECT_EQ(rc, 0) << args << ": " << err;
  return out;
}

#define EXPECT_VALID(text, what)                                                                      \
  do {                                                                                                \
    const std::string report_text = (text);                                                           \
    ASSERT_FALSE(report_text.empty()) << (what);                                                      \
    EXPECT_EQ(Schema().Violations(report_text), "") << (what) << "\n" << report_text.substr(0, 4000); \
  } while (0)

// The schema itself is draft-7 JSON Schema that closes the top level.
TEST(ReportSchema, FileIsADraft7SchemaClosedAtTheTop) {
  std::ifstream in(std::string(ORRERY_SOURCE_DIR) + "/docs/report.schema.json");
  const json s = json::parse(in);
  EXPECT_EQ(s.at("$schema"), "http://json-schema.org/draft-07/schema#");
  EXPECT_EQ(s.at("additionalProperties"), false);
  for (const auto& [name, def] : s.at("definitions").items()) {
    if (def.value("type", "") == "object") {
      EXPECT_EQ(def.value("additionalProperties", true), false) << name;
    }
  }
}

TEST(ReportSchema, EmbeddedExamplesSymmetricAndFull) {
  for (const std::string example : {"default", "data-parallel"}) {
    for (const std::string extra :
         {"", " --symmetry=off", " --critical-path", " --iterations=3 --critical-path", " --link-stats",
          " --network-backend=congestion-aware --link-stats --critical-path"}) {
      EXPECT_VALID(RunJson("--example=" + example + extra), example + extra);
    }
  }
}

// A straggler (rank 2 computes 30 us, the others 10 us) before a named
// all-reduce: the path crosses ranks ("waiting on another rank").
TEST(ReportSchema, StragglerWithCriticalPathInProcess) {
  TempDir d;
  d.Write("network.yml", testing::NetworkYaml("Ring", 4, 50, 500));
  d.Write("system.json", testing::SystemJson("ring", 2, 10, 50));
  testing::WriteTraces(d, 4, [](int r) {
    auto comp = testing::MakeNode(1, ChakraProtoMsg::COMP_NODE);
    comp.set_duration_micros(r == 2 ? 30 : 10);
    auto ar = testing::CollNode(2, 0, 1 << 20);
    ar.add_data_deps(1);
    ar.set_name("grad \"all\"");
    auto ag = testing::CollNode(3, 2, 1 << 16);
    ag.add_data_deps(2);
    return std::vector<ChakraProtoMsg::Node>{comp, ar, ag};
  });
  for (const std::string backend : {"analytical", "congestion-aware"}) {
    RunConfig c;
    c.files.workload_prefix = d.File("trace");
    c.files.network = d.File("network.yml");
    c.files.system = d.File("system.json");
    c.run.backend = backend;
    c.observe.critical_path = true;
    c.observe.all_collectives = true;
    c.observe.link_stats = true;
    auto r = RunSimulation(c, DefaultBackends());
    ASSERT_TRUE(r.ok()) << r.status().message();
    ASSERT_GE(r->critical_path.other_ranks.size(), 1u);
    const std::string text = FormatReportJson(r.value());
    EXPECT_NE(text.find("waiting on another rank"), std::string::npos);
    EXPECT_VALID(text, backend);
  }
}

// Point-to-point messages (sends and receives on the path), full run.
TEST(ReportSchema, PointToPointMessages) {
  TempDir d;
  d.Write("network.yml", testing::NetworkYaml("Switch", 4, 50, 500));
  d.Write("system.json", testing::SystemJson("direct", 1, 10, 50));
  testing::WriteP2PTraces(d, 4, {{0, 1, 4096}, {1, 2, 1 << 20, 1}, {3, 0, 100, 2}, {2, 3, 0, 3}});
  const std::string inputs = "--workload-configuration=" + d.File("trace") +
                             " --network-configuration=" + d.File("network.yml") +
                             " --system-configuration=" + d.File("system.json");
  EXPECT_VALID(RunJson(inputs), "p2p");
  EXPECT_VALID(RunJson(inputs + " --critical-path --symmetry=off"), "p2p, path");
  EXPECT_VALID(RunJson(inputs + " --network-backend=congestion-aware --link-stats --critical-path"), "p2p, links");
}

// A data-parallel loop with offloaded activations on a fair-shared pool that
// tracks capacity (peak_local_bytes, capacity fields, warnings).
TEST(ReportSchema, MemoryPoolCapacityAndWarnings) {
  TempDir d;
  std::string err;
  ASSERT_EQ(testing::RunCli("trace gen-dp --npus=4 --layers=3 --fwd-us=50 --bwd-us=100 --allreduce-bytes=1048576 "
                            "--activation-bytes=1073741824 --offload --out=" +
                                d.File("dp"),
                            &err),
            0)
      << err;
  d.Write("sys.json",
          R"({"preferred-dataset-splits": 2, "local-mem-bw": 1600, "all-reduce-implementation": ["ring"]})");
  d.Write("pool.yml",
          "backend: pool\nlatency_ns: 1000\nbandwidth_gbps: 1600\nsharing: fair\n"
          "local_capacity_bytes: 10e9\nresident_bytes: 2e9\n");
  d.Write("tight.yml",
          "backend: pool\nlatency_ns: 1000\nbandwidth_gbps: 1600\nlocal_capacity_bytes: 3e9\n"
          "resident_bytes: 2e9\n");
  const std::string inputs = "--workload-configuration=" + d.File("dp") +
                             " --system-configuration=" + d.File("sys.json") +
                             " --network-configuration=\"Ring(4,50GB/s,500ns)\"";
  const std::string pool = RunJson(inputs + " --memory-configuration=" + d.File("pool.yml") + " --critical-path");
  EXPECT_NE(pool.find("\"peak_local_bytes\""), std::string::npos);
  EXPECT_VALID(pool, "pool");
  const std::string over = RunJson(inputs + " --memory-configuration=" + d.File("tight.yml") +
                                   " --allow-oversubscription --symmetry=off");
  EXPECT_NE(over.find("\"warnings\": [\n   \""), std::string::npos) << over.substr(0, 3000);
  EXPECT_VALID(over, "over capacity");
}

// A generated workload (tensor, pipeline and data parallel, communicator groups)
// on a two-dimensional network.
TEST(ReportSchema, GeneratedWorkload) {
  TempDir d;
  d.Write("sys.json", R"({"preferred-dataset-splits": 2, "local-mem-bw": 1600, "roofline-enabled": 1, "peak-perf": 1000,
                          "all-reduce-implementation": ["ring", "direct"], "all-gather-implementation": ["ring", "direct"],
                          "reduce-scatter-implementation": ["ring", "direct"], "all-to-all-implementation": ["ring", "direct"]})");
  const std::string run = std::string("--generate=\"--model=megatron-22b --tp=2 --pp=2 --dp=2 --microbatches=2 ") +
                          "--schedule=gpipe --allow-over-capacity\" --system-configuration=" + d.File("sys.json") +
                          " --network-configuration=\"Ring(2,300GB/s,500ns)_Switch(4,50GB/s,2us)\"";
  const std::string classed = RunJson(run);
  EXPECT_NE(classed.find("\"classes\": [\n  {\n   \"class\": 0,"), std::string::npos) << classed.substr(0, 2000);
  EXPECT_VALID(classed, "generated");
  EXPECT_VALID(RunJson(run + " --critical-path --symmetry=off"), "generated, path");
  // With a device: MFU and HFU are numbers; a DLRM has no tokens and no closed-form memory (nulls).
  d.Write(
      "sys_dev.json",
      R"({"preferred-dataset-splits": 2, "roofline-enabled": 1, "peak-perf": 156, "local-mem-bw": 2039, "device": "a100",
                              "all-reduce-implementation": ["ring", "direct"], "all-gather-implementation": ["ring", "direct"],
                              "reduce-scatter-implementation": ["ring", "direct"], "all-to-all-implementation": ["ring", "direct"]})");
  const std::string with_device = RunJson(
      std::string("--generate=\"--model=megatron-22b --tp=2 --pp=2 --dp=2 ") +
      "--microbatches=2 --allow-over-capacity\" --system-configuration=" + d.File("sys_dev.json") +
      " --network-configuration=\"Ring(2,300GB/s,500ns)_Switch(4,50GB/s,2us)\"");
  EXPECT_NE(with_device.find("\"mfu\": 0."), std::string::npos)
      << with_device.substr(with_device.size() > 800 ? with_device.size() - 800 : 0);
  EXPECT_VALID(with_device, "generated, device");
  const std::string dlrm = RunJson(
      "--generate=\"--model=dlrm-mlperf --npus=8 --global-batch=8192\" "
      "--system-configuration=" +
      d.File("sys_dev.json") + " --network-configuration=\"Ring(2,300GB/s,500ns)_Switch(4,50GB/s,2us)\"");
  EXPECT_NE(dlrm.find("\"tokens_per_iteration\": null"), std::string::npos)
      << dlrm.substr(dlrm.size() > 800 ? dlrm.size() - 800 : 0);
  EXPECT_VALID(dlrm, "generated DLRM");
}

// The other building blocks (Mesh, RingUni) appear in dims and path categories.
TEST(ReportSchema, MeshAndUnidirectionalRing) {
  TempDir d;
  std::string err;
  ASSERT_EQ(testing::RunCli("trace gen-coll --npus=8 --collective=ALL_REDUCE --bytes=1048576 --out=" + d.File("ar"),
                            &err),
            0)
      << err;
  d.Write("sys.json", testing::SystemJson("ring\", \"ring", 2, 10, 1600));  // one algorithm per dimension
  const std::string report = RunJson(
      "--workload-configuration=" + d.File("ar") + " --system-configuration=" + d.File("sys.json") +
      " --network-configuration=\"Mesh(4,100GB/s,500ns)_RingUni(2,50GB/s,1us)\" --critical-path");
  EXPECT_NE(report.find("communication dim0+dim1 (Mesh+RingUni)"), std::string::npos) << report.substr(0, 3000);
  EXPECT_VALID(report, "mesh");
}

// Every conformance case, with every optional part the run can produce.
TEST(ReportSchema, EveryConformanceCase) {
  const std::string dir = std::string(ORRERY_SHARED_DIR) + "/conformance/astra-sim";
  std::ifstream tsv(dir + "/expected.tsv");
  if (!tsv) GTEST_SKIP() << "no conformance data at " << dir << " (the shared/ folder is absent)";
  char cwd[4096];
  ASSERT_NE(getcwd(cwd, sizeof(cwd)), nullptr);
  ASSERT_EQ(chdir(dir.c_str()), 0);
  std::string line;
  std::getline(tsv, line);
  int checked = 0;
  while (std::getline(tsv, line)) {
    std::vector<std::string> col;
    std::stringstream ss(line);
    for (std::string c; std::getline(ss, c, '\t');) col.push_back(c);
    if (col.size() < 6) continue;
    RunConfig c;
    c.run.backend = col[1];
    c.files.workload_prefix = col[2];
    c.files.network = col[3];
    c.files.system = col[4];
    c.files.remote_memory = col[5];
    c.observe.all_collectives = true;
    c.observe.critical_path = true;
    c.observe.link_stats = true;
    auto r = RunSimulation(c, DefaultBackends());
    ASSERT_TRUE(r.ok()) << col[0] << ": " << r.status().message();
    EXPECT_VALID(FormatReportJson(r.value()), col[0]);
    ++checked;
  }
  ASSERT_EQ(chdir(cwd), 0);
  EXPECT_GT(checked, 50);
}

// --- the schema rejects what it should --------------------------------------

class Broken : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    good_ = new json(
        json::parse(RunJson("--example=default --network-backend=congestion-aware --link-stats --critical-path "
                            "--symmetry=off")));
  }
  static void TearDownTestSuite() { delete good_; }
  // Applies `change` to a copy of a valid report; expects a violation naming `where`.
  void ExpectRejected(const std::function<void(json&)>& change, const std::string& where) {
    json j = *good_;
    change(j);
    const std::string v = Schema().Violations(j);
    EXPECT_NE(v, "") << where << " passed";
    EXPECT_NE(v.find(where), std::string::npos) << v;
  }
  static json* good_;
};
json* Broken::good_ = nullptr;

TEST_F(Broken, TheUnchangedReportValidates) {
  ASSERT_TRUE(good_->contains("critical_path"));
  ASSERT_TRUE(good_->contains("links"));
  ASSERT_EQ(good_->at("collectives").size(), 1u);  // rank 0's
  ASSERT_EQ(good_->at("collective_totals").at("count"), 8);
  EXPECT_EQ(Schema().Violations(*good_), "");
}

TEST_F(Broken, MissingFields) {
  ExpectRejected([](json& j) { j.erase("npus"); }, "npus");
  ExpectRejected([](json& j) { j.erase("backend"); }, "backend");
  ExpectRejected([](json& j) { j["npus"][3].erase("idle_ns"); }, "idle_ns");
  ExpectRejected([](json& j) { j["collectives"][0].erase("end_ns"); }, "end_ns");
  ExpectRejected([](json& j) { j["memory"].erase("wait_ns"); }, "wait_ns");
  ExpectRejected([](json& j) { j["dims"][0].erase("busy_ns"); }, "busy_ns");
  ExpectRejected([](json& j) { j["critical_path"]["segments"][0].erase("category"); }, "category");
  ExpectRejected([](json& j) { j["links"][0].erase("link"); }, "link");
  ExpectRejected([](json& j) { j["collective_totals"].erase("duration_ns"); }, "duration_ns");
}

TEST_F(Broken, WrongTypesAndRanges) {
  ExpectRejected([](json& j) { j["finished_ns"] = "117780"; }, "[finished_ns]");
  ExpectRejected([](json& j) { j["npus"][0]["compute_ns"] = -1; }, "[compute_ns]");
  ExpectRejected([](json& j) { j["npus"][0]["comm_ns"] = 1.5; }, "[comm_ns]");
  ExpectRejected([](json& j) { j["symmetric"] = 1; }, "[symmetric]");
  ExpectRejected([](json& j) { j["npus"] = json::object(); }, "[npus]");
  ExpectRejected([](json& j) { j["npus"] = json::array(); }, "[npus]");
  ExpectRejected([](json& j) { j["npu_count"] = 0; }, "[npu_count]");
  ExpectRejected([](json& j) { j["dims"][0]["utilization"] = -0.5; }, "[utilization]");
  ExpectRejected([](json& j) { j["links"][0]["dim"] = "0"; }, "[dim]");
  ExpectRejected([](json& j) { j["config"] = json::object({{"hash", 12}}); }, "[hash]");
  ExpectRejected([](json& j) { j["config"] = "abc"; }, "[config]");
}

TEST_F(Broken, EnumsAndPatterns) {
  ExpectRejected([](json& j) { j["dims"][0]["block"] = "Torus"; }, "[block]");
  ExpectRejected([](json& j) { j["collectives"][0]["type"] = "ALLREDUCE"; }, "[type]");
  ExpectRejected([](json& j) { j["critical_path"]["categories"][0]["category"] = "network"; }, "[category]");
  ExpectRejected([](json& j) { j["critical_path"]["segments"][0]["kind"] = "sleep"; }, "[kind]");
  ExpectRejected([](json& j) { j["critical_path"]["categories"][0]["category"] = "communication dim0 (Torus)"; },
                 "[category]");
}

TEST_F(Broken, UnknownFieldsInClosedObjects) {
  ExpectRejected([](json& j) { j["finish_ns"] = 1; }, "finish_ns");
  ExpectRejected([](json& j) { j["npus"][0]["gpu_ns"] = 1; }, "gpu_ns");
  ExpectRejected([](json& j) { j["collectives"][0]["phases"] = json::array(); }, "phases");
  ExpectRejected([](json& j) { j["critical_path"]["extra"] = true; }, "extra");
}

// The rank classes' summaries of a run by rank classes (a generated pipeline).
TEST(ReportSchema, RankClassEntriesAreChecked) {
  TempDir d;
  d.Write("sys.json",
          R"({"preferred-dataset-splits": 2, "roofline-enabled": 1, "peak-perf": 1000, "local-mem-bw": 1600})");
  json good = json::parse(
      RunJson("--generate=\"--model=llama3-8b --tp=2 --pp=2 --dp=2 --microbatches=2 --allow-over-capacity\" "
              "--system-configuration=" +
              d.File("sys.json") + " --network-configuration=\"Ring(2,300GB/s,500ns)_Switch(4,50GB/s,2us)\""));
  ASSERT_EQ(good.at("rank_classes"), 2) << good.at("symmetry");
  ASSERT_EQ(good.at("classes").size(), 2u);
  EXPECT_EQ(Schema().Violations(good), "");
  const std::pair<std::function<void(json&)>, std::string> broken[] = {
      {[](json& j) { j["classes"][1]["ranks"] = "4-"; }, "[ranks]"},
      {[](json& j) { j["classes"][1]["ranks"] = "4-7;"; }, "[ranks]"},
      {[](json& j) { j["classes"][0]["members"] = 0; }, "[members]"},
      {[](json& j) { j["classes"][0].erase("representative"); }, "representative"},
      {[](json& j) { j["classes"][0]["weight"] = 1; }, "weight"},
      {[](json& j) { j["classes"] = json::array(); }, "[classes]"},
      {[](json& j) { j["collective_totals"]["count"] = -1; }, "[count]"},
  };
  for (const auto& [change, where] : broken) {
    json j = good;
    change(j);
    const std::string v = Schema().Violations(j);
    EXPECT_NE(v.find(where), std::string::npos) << where << ": " << v;
  }
}

TEST_F(Broken, NotAReport) {
  EXPECT_NE(Schema().Violations(json::array()), "");
  EXPECT_NE(Schema().Violations(json::parse(R"({"traceEvents": []})")), "");
}

// The configuration section another part of the run may add: open, with a string hash.
TEST_F(Broken, ConfigSectionIsOpenWithAStringHash) {
  json j = *good_;
  j["config"] = {{"hash", "0123abcd"}, {"network", {{"dims", 1}}}, {"anything", json::array()}};
  EXPECT_EQ(Schema().Violations(j), "");
}

}  // namespace
}  // namespace orrery
