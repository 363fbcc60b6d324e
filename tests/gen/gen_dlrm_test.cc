// DLRM in the generator: the model description (preset, parameter count,
// strict YAML), the sharding rule, FLOP and byte closed forms, a simulated
// iteration derived by hand, and bad inputs (exit 2 with the reason).
#include <gtest/gtest.h>

#include <sstream>

#include "core/tick.h"
#include "extern/astra_config.h"
#include "gen/dlrm.h"
#include "gen/dlrm_model.h"
#include "gen/gen_args.h"
#include "gen/gen_source.h"
#include "gen/generate.h"
#include "gen/summary.h"
#include "tests/gen/gen_test_util.h"
#include "tests/test_util.h"

namespace orrery::gen {

// Readable parameter names in failures (no byte dump of the enum).
void PrintTo(EmbeddingSharding s, std::ostream* os) { *os << ShardingName(s); }

namespace {

using orrery::testing::TempDir;

bool Has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

ModelDesc Mlperf() {
  auto m = LoadModel("dlrm-mlperf");
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? m.value() : ModelDesc{};
}

// The 26 row counts the MLPerf reference uses with --max-ind-range=40000000
// (facebookresearch/dlrm; docs/generator.md).
const std::vector<int64_t> kMlperfRows = {39884406, 39043,    17289,    7420,     20263,  3,     7120, 1543, 63,
                                          38532951, 2953546,  403346,   10,       2208,   11938, 155,  4,    976,
                                          14,       39979771, 25641295, 39664984, 585935, 12972, 108,  36};

TEST(DlrmModel, MlperfPresetParameterCount) {
  const ModelDesc m = Mlperf();
  ASSERT_EQ(m.kind, ModelKind::kDlrm);
  EXPECT_EQ(m.dlrm.table_rows, kMlperfRows);
  EXPECT_EQ(m.dlrm.embedding_dim, 128);
  // T' = 27 vectors, 27·26/2 = 351 pairs; the top MLP sees 128 + 351 = 479
  // inputs (the reference's ln_top starts with 479).
  EXPECT_EQ(DlrmPairs(m.dlrm), 351);
  EXPECT_EQ(DlrmTopInput(m.dlrm), 479);
  int64_t rows = 0;
  for (int64_t r : kMlperfRows) rows += r;
  EXPECT_EQ(rows, 187767399);
  const int64_t bottom = (13 * 512 + 512) + (512 * 256 + 256) + (256 * 128 + 128);  // 171,392
  const int64_t top = (479 * 1024 + 1024) + (1024 * 1024 + 1024) + (1024 * 512 + 512) + (512 * 256 + 256) +
                      (256 * 1 + 1);
  EXPECT_EQ(bottom, 171392);
  EXPECT_EQ(top, 2197505);
  EXPECT_EQ(DlrmEmbeddingParams(m.dlrm), rows * 128);  // 24,034,227,072
  EXPECT_EQ(DlrmMlpParams(m.dlrm), bottom + top);
  EXPECT_EQ(ParamCount(m), rows * 128 + bottom + top);
  EXPECT_EQ(ParamCount(m), 24036595969);
}

TEST(DlrmModel, InteractionWidths) {
  DlrmDesc d;
  d.table_rows = {10, 10, 10};
  d.pooling = {1, 1, 1};
  d.embedding_dim = 4;
  d.dense_features = 3;
  d.bottom_mlp = {8, 4};
  d.top_mlp = {2};
  // Four vectors: 6 pairs without the self term, 10 with it.
  EXPECT_EQ(DlrmPairs(d), 6);
  EXPECT_EQ(DlrmTopInput(d), 4 + 6);
  d.interaction = Interaction::kDotSelf;
  EXPECT_EQ(DlrmPairs(d), 10);
  EXPECT_EQ(DlrmTopInput(d), 4 + 10);
  d.interaction = Interaction::kCat;
  EXPECT_EQ(DlrmPairs(d), 0);
  EXPECT_EQ(DlrmTopInput(d), 4 + 3 * 4);
  // 30·4 embeddings + (3·8 + 8) + (8·4 + 4) + (16·2 + 2).
  EXPECT_EQ(DlrmParamCount(d), 120 + 32 + 36 + 34);
}

TEST(DlrmModel, YamlListAndCompactForms) {
  TempDir dir;
  dir.Write("a.yml",
            "kind: dlrm\nname: small\nembedding_dim: 8\ndense_features: 4\ntables: [100, 200, 300]\n"
            "pooling: [1, 2, 3]\nbottom_mlp: [16, 8]\ntop_mlp: [4, 1]\ninteraction: dot-self\n");
  auto a = LoadModel(dir.File("a.yml"));
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->name, "small");
  EXPECT_EQ(a->dlrm.table_rows, (std::vector<int64_t>{100, 200, 300}));
  EXPECT_EQ(a->dlrm.pooling, (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(a->dlrm.interaction, Interaction::kDotSelf);
  EXPECT_EQ(ParamCount(a.value()), 600 * 8 + (4 * 16 + 16) + (16 * 8 + 8) + (18 * 4 + 4) + (4 + 1));

  dir.Write("b.yml",
            "kind: dlrm\nembedding_dim: 8\ndense_features: 4\ntables: {count: 26, rows: 40000000}\npooling: 2\n"
            "bottom_mlp: [8]\ntop_mlp: [1]\n");
  auto b = LoadModel(dir.File("b.yml"));
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ(b->dlrm.table_rows, std::vector<int64_t>(26, 40000000));
  EXPECT_EQ(b->dlrm.pooling, std::vector<int64_t>(26, 2));
  EXPECT_EQ(b->dlrm.interaction, Interaction::kDot);

  // A transformer file may say so.
  dir.Write("t.yml", "kind: transformer\nlayers: 2\nhidden: 64\nheads: 4\nvocab: 128\nseq_len: 16\n");
  auto t = LoadModel(dir.File("t.yml"));
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->kind, ModelKind::kTransformer);
}

TEST(DlrmModel, YamlErrorsNameFileLineAndKey) {
  TempDir dir;
  const std::string head = "kind: dlrm\nembedding_dim: 8\ndense_features: 4\n";
  struct Case {
    std::string body;
    std::string want;
  };
  const Case cases[] = {
      {head + "tables: [10, 0]\nbottom_mlp: [8]\ntop_mlp: [1]\n", ":4: tables[1] = \"0\""},
      {head + "tables: [10]\nbottom_mlp: [8]\ntop_mlp: [1]\ntop_mpl: [2]\n",
       ":7: top_mpl: unknown key 'top_mpl' (did you mean 'top_mlp'?)"},
      {head + "tables: {count: 2, row: 5}\nbottom_mlp: [8]\ntop_mlp: [1]\n",
       "tables.row: unknown key 'row' (did you mean 'rows'?)"},
      {head + "tables: 12\nbottom_mlp: [8]\ntop_mlp: [1]\n", "tables = 12: wrong form; allowed: a list of row counts"},
      {head + "tables: [10]\nbottom_mlp: [8]\ntop_mlp: [1]\ninteraction: dott\n",
       ":7: interaction = dott: unknown interaction (did you mean 'dot'?)"},
      {head + "tables: [10]\nbottom_mlp: [16]\ntop_mlp: [1]\n", "bottom_mlp ends in 16 but embedding_dim = 8"},
      {head + "tables: [10, 20]\npooling: [1]\nbottom_mlp: [8]\ntop_mlp: [1]\n",
       "pooling = (1 entries): not one per table (2 tables)"},
      {head + "tables: [10]\nbottom_mlp: [8]\n", "missing required key 'top_mlp'"},
      {"kind: dlrn\nlayers: 2\n", ":1: kind = dlrn: unknown model kind (did you mean 'dlrm'?)"},
      {head + "tables: [10x]\nbottom_mlp: [8]\ntop_mlp: [1]\n", ":4: tables[0] = \"10x\""},
  };
  int i = 0;
  for (const Case& c : cases) {
    const std::string name = "bad" + std::to_string(i++) + ".yml";
    dir.Write(name, c.body);
    auto m = LoadModel(dir.File(name));
    ASSERT_FALSE(m.ok()) << c.body;
    EXPECT_EQ(m.status().exit_code(), 2);
    EXPECT_TRUE(Has(m.status().message(), name)) << m.status().message();
    EXPECT_TRUE(Has(m.status().message(), c.want)) << m.status().message() << "\nwanted: " << c.want;
  }
}

TEST(DlrmStrategy, TableShardingIsGreedyBySize) {
  // Largest first: t1 (500) -> r0; t2 (300) -> r1; t3 (300, tie after t2) -> r1
  // (300 < 500); t0 (100) -> r0 (500 < 600); t4 (50) -> r0 (600 = 600, lowest rank).
  EXPECT_EQ(AssignTables({100, 500, 300, 300, 50}, 2), (std::vector<int>{0, 0, 1, 1, 0}));
  // Fewer tables than ranks: every table alone, the others hold none.
  EXPECT_EQ(AssignTables({7, 9}, 4), (std::vector<int>{1, 0}));

  DlrmDesc d;
  d.table_rows = {100, 500, 300, 300, 50};
  d.pooling = {1, 2, 3, 4, 5};
  d.embedding_dim = 4;
  DlrmStrategy s;
  s.npus = 2;
  s.local_batch = 3;  // B = 6
  const std::vector<DlrmRankShare> shares = ShareRanks(d, s);
  EXPECT_EQ(shares[0].tables, (std::vector<int>{0, 1, 4}));
  EXPECT_EQ(shares[0].rows, 650u);
  EXPECT_EQ(shares[0].lookups, 6u * (1 + 2 + 5));
  EXPECT_EQ(shares[1].tables, (std::vector<int>{2, 3}));
  EXPECT_EQ(shares[1].lookups, 6u * (3 + 4));
  // Row sharding: rows_t/N each, the first rows_t mod N ranks one more;
  // every rank reads b·pooling_t rows of every table.
  s.npus = 3;
  s.sharding = EmbeddingSharding::kRow;
  const std::vector<DlrmRankShare> rows = ShareRanks(d, s);
  EXPECT_EQ(rows[0].rows, 34u + 167 + 100 + 100 + 17);  // 100 = 34+33+33, 500 = 167+167+166, 50 = 17+17+16
  EXPECT_EQ(rows[2].rows, 33u + 166 + 100 + 100 + 16);
  for (const DlrmRankShare& r : rows) EXPECT_EQ(r.lookups, 3u * 15);
}

ModelDesc SmallYamlModel() {
  ModelDesc m;
  m.kind = ModelKind::kDlrm;
  m.name = "small";
  m.dlrm.table_rows = {1000, 1000, 1000, 1000};
  m.dlrm.pooling = {8, 8, 8, 8};
  m.dlrm.embedding_dim = 64;
  m.dlrm.dense_features = 16;
  m.dlrm.bottom_mlp = {128, 64};
  m.dlrm.top_mlp = {32, 1};
  return m;
}

TEST(DlrmStrategy, FlopsOverAllRanksAreTheClosedForm) {
  const ModelDesc m = Mlperf();
  const uint64_t B = 65536;
  // Σ in·out over both MLPs, by hand: 6,656 + 131,072 + 32,768 (bottom) +
  // 490,496 + 1,048,576 + 524,288 + 131,072 + 256 (top) = 2,365,184.
  const Flops gemm = 13 * 512 + 512 * 256 + 256 * 128 + 479 * 1024 + 1024 * 1024 + 1024 * 512 + 512 * 256 + 256 * 1;
  ASSERT_EQ(gemm, 2365184u);
  // MLPs 6·B·Σ in·out, dot interaction 3 × 2d per pair per sample, lookups 3·d per looked-up row.
  const Flops want = 6 * B * gemm + 6 * B * 351 * 128 + 3 * B * 128 * 26;
  EXPECT_EQ(DlrmClosedFormFlops(m.dlrm, B), want);
  for (EmbeddingSharding sh : {EmbeddingSharding::kTable, EmbeddingSharding::kRow}) {
    for (int64_t n : {8, 64}) {
      DlrmStrategy s;
      s.npus = n;
      s.local_batch = B / n;
      s.sharding = sh;
      auto w = GenerateDlrm(m, s);
      ASSERT_TRUE(w.ok()) << w.status().message();
      EXPECT_EQ(TotalFlops(w.value()), want) << ShardingName(sh) << " on " << n;
    }
  }
}

TEST(DlrmStrategy, CollectiveBytesAreTheFormulas) {
  const ModelDesc m = Mlperf();
  DlrmStrategy s;
  s.npus = 64;
  s.local_batch = 1024;
  s.bucket_bytes = 1ull << 20;  // 1 MiB buckets: several all-reduces
  auto w = GenerateDlrm(m, s);
  ASSERT_TRUE(w.ok()) << w.status().message();
  // b·T·d·2 = 1024·26·128·2 bytes, forward and backward.
  const uint64_t pooled = 1024ull * 26 * 128 * 2;
  ASSERT_EQ(pooled, 6815744u);
  const uint64_t grads = 2 * (171392 + 2197505);  // every MLP parameter, 2 bytes
  for (const GraphBuilder& g : w->classes) {
    const ClassTotals t = Totals(g);
    EXPECT_EQ(t.comm.at("all-to-all dp"), std::make_pair(uint64_t{2}, 2 * pooled));
    EXPECT_EQ(t.comm.at("all-reduce dp").second, grads);
    EXPECT_GE(t.comm.at("all-reduce dp").first, grads / (1 << 20));
    EXPECT_EQ(t.comm.count("reduce-scatter dp"), 0u);
  }
  // 26 tables on 64 ranks: 26 ranks look up one table (B lookups), 38 none.
  ASSERT_EQ(w->classes.size(), 2u);
  EXPECT_EQ(std::count(w->class_of_rank.begin(), w->class_of_rank.end(), 0), 26);
  // Row sharding: forward reduce-scatter of the partial sums B·T·d·2, backward
  // all-gather of the local batch's gradients b·T·d·2; one class.
  s.sharding = EmbeddingSharding::kRow;
  auto r = GenerateDlrm(m, s);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->classes.size(), 1u);
  const ClassTotals t = Totals(r->classes[0]);
  EXPECT_EQ(t.comm.at("reduce-scatter dp"), std::make_pair(uint64_t{1}, 64 * pooled));
  EXPECT_EQ(t.comm.at("all-gather dp"), std::make_pair(uint64_t{1}, pooled));
  EXPECT_EQ(t.comm.count("all-to-all dp"), 0u);
}

// ---- simulated -------------------------------------------------------------

// 1000 FLOP per ns; local-mem-bw huge: compute-bound.
Tick NodeNs(uint64_t ops) { return testing::RooflineNs(ops); }

// Ring closed forms (tests/closed_form_test.cc) for one chunk, endpoint delay
// 0, free reductions: all-to-all p(p−1)/2 steps of bytes/p.
struct Ring {
  int p;
  double bw_gbps, lat_ns;
  Tick Step(uint64_t bytes) const {
    return static_cast<Tick>(lat_ns + static_cast<double>(bytes) / GiBpsToBytesPerNs(bw_gbps));
  }
  Tick AllReduce(uint64_t bytes) const { return 2 * (p - 1) * Step(bytes / p); }
  Tick ReduceScatter(uint64_t bytes) const { return (p - 1) * Step(bytes / p); }
  Tick AllGather(uint64_t shard) const { return (p - 1) * Step(shard); }
  Tick AllToAll(uint64_t bytes) const { return p * (p - 1) / 2 * Step(bytes / p); }
};

std::string SystemJson() {
  return orrery::testing::SystemJson("ring", 1, 0, 1e9, 1, ", \"roofline-enabled\": 1, \"peak-perf\": 1");
}

Result<RunReport> Simulate(const Workload& w, const TempDir& d, const Ring& ring) {
  const std::string prefix = d.File("trace");
  ORRERY_RETURN_IF_ERROR(WriteChakra(w, prefix));
  d.Write("network.yml", orrery::testing::NetworkYaml("Ring", ring.p, ring.bw_gbps, ring.lat_ns));
  d.Write("system.json", SystemJson());
  RunConfig c;
  c.files.workload_prefix = prefix;
  c.files.network = d.File("network.yml");
  c.files.system = d.File("system.json");
  c.files.comm_groups = prefix + ".comm_groups.json";
  return RunSimulation(c, DefaultBackends());
}

// 4 NPUs, 4 tables of 1000 rows, pooling 8, d 64, bottom 16-128-64, top
// 74-32-1 (64 + 10 pairs of 5 vectors), local batch 256 (B 1024), one
// gradient bucket. Each rank reads 8192 rows either way (table: one table
// for B samples, 1024·8; row: b·Σ pooling, 256·32).
class DlrmSimulated : public ::testing::TestWithParam<EmbeddingSharding> {};

TEST_P(DlrmSimulated, IterationIsHandDerived) {
  const ModelDesc m = SmallYamlModel();
  DlrmStrategy s;
  s.npus = 4;
  s.local_batch = 256;
  s.sharding = GetParam();
  s.bucket_bytes = 1ull << 40;
  auto w = GenerateDlrm(m, s);
  ASSERT_TRUE(w.ok()) << w.status().message();
  ASSERT_EQ(w->classes.size(), 1u);
  const Ring ring{4, 50, 500};
  TempDir d;
  auto r = Simulate(w.value(), d, ring);
  ASSERT_TRUE(r.ok()) << r.status().message();

  const uint64_t b = 256, dim = 64, lookups = 8192;
  const Tick lookup = NodeNs(lookups * dim), update = NodeNs(2 * lookups * dim);
  const Tick bot_f = NodeNs(2 * b * 16 * 128) + NodeNs(2 * b * 128 * 64);
  const Tick bot_b = NodeNs(4 * b * 16 * 128) + NodeNs(4 * b * 128 * 64);
  const Tick top_f = NodeNs(2 * b * 74 * 32) + NodeNs(2 * b * 32 * 1);
  const Tick top_b = NodeNs(4 * b * 74 * 32) + NodeNs(4 * b * 32 * 1);
  const Tick inter_f = NodeNs(b * 10 * 2 * dim), inter_b = NodeNs(2 * b * 10 * 2 * dim);
  const uint64_t pooled = b * 4 * dim * 2;  // b·T·d·2
  const bool table = GetParam() == EmbeddingSharding::kTable;
  const Tick fwd_x = table ? ring.AllToAll(pooled) : ring.ReduceScatter(4 * pooled);
  const Tick bwd_x = table ? ring.AllToAll(pooled) : ring.AllGather(pooled);
  const uint64_t mlp_params = (16 * 128 + 128) + (128 * 64 + 64) + (74 * 32 + 32) + (32 * 1 + 1);
  const Tick ar = ring.AllReduce(2 * mlp_params);
  // Lookup; the exchange overlaps the bottom MLP; interaction and top MLP
  // forward and backward; the gradient exchange overlaps the bottom MLP's
  // backward; then the sparse update (GPU) and the all-reduce (network) side by side.
  const Tick want = lookup + std::max(bot_f, fwd_x) + inter_f + top_f + top_b + inter_b + std::max(bot_b, bwd_x) +
                    std::max(update, ar);
  // The case exercises both sides of the overlaps (table: exchange longer than
  // the bottom MLP forward; row: the reduce-scatter too; both shorter than its backward).
  EXPECT_GT(fwd_x, bot_f);
  EXPECT_LT(bwd_x, bot_b);
  EXPECT_GT(ar, update);
  EXPECT_EQ(orrery::testing::MaxFinished(r.value()), want);
  for (const auto& n : r->per_npu) {
    EXPECT_EQ(n.compute_ns, lookup + bot_f + inter_f + top_f + top_b + inter_b + bot_b + update) << n.rank;
  }
}

INSTANTIATE_TEST_SUITE_P(DlrmSharding, DlrmSimulated,
                         ::testing::Values(EmbeddingSharding::kTable, EmbeddingSharding::kRow),
                         [](const ::testing::TestParamInfo<EmbeddingSharding>& i) {
                           return std::string(ShardingName(i.param));
                         });

const char kSmallYaml[] =
    "kind: dlrm\nname: small\nembedding_dim: 64\ndense_features: 16\ntables: {count: 4, rows: 1000}\npooling: 8\n"
    "bottom_mlp: [128, 64]\ntop_mlp: [32, 1]\n";

// `orrery run --generate` picks the DLRM generator by the model's kind and
// gives the report of the written files.
TEST(DlrmRun, GenerateInMemoryEqualsFiles) {
  TempDir d;
  d.Write("small.yml", kSmallYaml);
  const std::string gen = "--model=" + d.File("small.yml") + " --npus=4 --global-batch=1024 --bucket-mb=0.01";
  auto source = GeneratedSource(gen);
  ASSERT_TRUE(source.ok()) << source.status().message();
  DlrmStrategy s;
  s.npus = 4;
  s.local_batch = 256;
  s.bucket_bytes = static_cast<uint64_t>(0.01 * (1 << 20));
  auto model = LoadModel(d.File("small.yml"));
  ASSERT_TRUE(model.ok()) << model.status().message();
  auto w = GenerateDlrm(model.value(), s);
  ASSERT_TRUE(w.ok()) << w.status().message();
  const Ring ring{4, 50, 500};
  auto files = Simulate(w.value(), d, ring);
  ASSERT_TRUE(files.ok()) << files.status().message();
  RunConfig c;
  c.files.network = d.File("network.yml");
  c.files.system = d.File("system.json");
  c.source = source.value();
  auto memory = RunSimulation(c, DefaultBackends());
  ASSERT_TRUE(memory.ok()) << memory.status().message();
  // The configurations differ (trace files, generator arguments); the simulation does not.
  // Only the generator knows its FLOPs: the run from files has no "generated" section.
  EXPECT_TRUE(memory->generated.present);
  RunReport from_memory = orrery::testing::WithoutConfig(memory.value());
  from_memory.generated = GeneratedReport{};
  EXPECT_EQ(FormatReportJson(orrery::testing::WithoutConfig(files.value())), FormatReportJson(from_memory));
  EXPECT_GT(orrery::testing::MaxFinished(memory.value()), 0u);
}

// Fewer tables than ranks: the ranks holding none have no lookup and no
// update node but join every exchange; they compute exactly that much less.
TEST(DlrmRun, RanksWithoutTablesStillExchange) {
  ModelDesc m = SmallYamlModel();
  m.dlrm.table_rows = {1000, 1000};
  m.dlrm.pooling = {8, 8};
  DlrmStrategy s;
  s.npus = 4;
  s.local_batch = 256;
  auto w = GenerateDlrm(m, s);
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->class_of_rank, (std::vector<int>{0, 0, 1, 1}));
  TempDir d;
  auto r = Simulate(w.value(), d, Ring{4, 50, 500});
  ASSERT_TRUE(r.ok()) << r.status().message();
  const uint64_t lookups = 1024 * 8, dim = 64;  // B·pooling rows of its one table
  EXPECT_EQ(r->per_npu[0].compute_ns - r->per_npu[2].compute_ns, NodeNs(lookups * dim) + NodeNs(2 * lookups * dim));
  EXPECT_EQ(r->per_npu[1].compute_ns, r->per_npu[0].compute_ns);
  EXPECT_EQ(r->per_npu[3].compute_ns, r->per_npu[2].compute_ns);
  for (const auto& n : r->per_npu) EXPECT_GT(n.comm_ns, 0u) << n.rank;
}

// ---- the command -----------------------------------------------------------

int Gen(const std::vector<std::string>& args, std::string* out, std::string* err) {
  std::ostringstream o, e;
  const int rc = orrery::RunGenCommand(args, o, e);
  *out = o.str();
  *err = e.str();
  return rc;
}

TEST(DlrmCommand, ListAndSummary) {
  std::string out, err;
  ASSERT_EQ(Gen({"--list-models"}, &out, &err), 0) << err;
  EXPECT_TRUE(Has(out, "dlrm-mlperf: 24.0 B parameters, DLRM, 26 tables x d 128")) << out;
  ASSERT_EQ(Gen({"--model=dlrm-mlperf", "--npus=64", "--embedding-sharding=table", "--global-batch=65536", "--summary"},
                &out, &err),
            0)
      << err;
  EXPECT_TRUE(Has(out, "embeddings sharded by table")) << out;
  EXPECT_TRUE(Has(out, "38 ranks hold no table")) << out;
  EXPECT_TRUE(Has(out, "b·T·d·2 = 6815744 B")) << out;
  // The largest table (19, 39,979,771 rows) goes to rank 0: 39979771·128·2 B.
  EXPECT_TRUE(Has(out, "0:[19]")) << out;
  EXPECT_TRUE(Has(out, "embeddings 10.23 GB (39979771 rows)")) << out;
  EXPECT_TRUE(Has(out, "class 1: ranks 26-63 (38)")) << out;
}

TEST(DlrmCommand, WritesTracesAndGroups) {
  TempDir d;
  d.Write("small.yml", kSmallYaml);
  std::string out, err;
  ASSERT_EQ(Gen({"--model=" + d.File("small.yml"), "--npus=4", "--microbatch-size=256", "--embedding-sharding=row",
                 "--out=" + d.File("g")},
                &out, &err),
            0)
      << err;
  EXPECT_TRUE(Has(out, "wrote 4 traces")) << out;
  auto groups = ReadCommGroupJson(d.File("g.comm_groups.json"), 4);
  ASSERT_TRUE(groups.ok()) << groups.status().message();
  ASSERT_EQ(groups->size(), 1u);
  EXPECT_EQ(groups->begin()->second, (std::vector<int>{0, 1, 2, 3}));
  std::map<std::string, int> index{{groups->begin()->first, 0}};
  GraphLoadOptions o;
  o.num_npus = 4;
  o.num_dims = 1;
  o.groups = &index;
  for (int r = 0; r < 4; ++r) EXPECT_TRUE(LoadNpuGraph(d.File("g." + std::to_string(r) + ".et"), r, o).ok()) << r;
}

TEST(DlrmCommand, BadInputsExitTwoWithTheReason) {
  TempDir d;
  d.Write("small.yml", kSmallYaml);
  d.Write("zero.yml",
          "kind: dlrm\nembedding_dim: 8\ndense_features: 4\ntables: [5, 0]\nbottom_mlp: [8]\ntop_mlp: [1]\n");
  d.Write("typo.yml", "kind: dlrm\nembedding_dim: 8\ndense_feature: 4\n");
  // Row sharding on 2 NPUs: rank 0 holds ceil(rows/2) of every table.
  uint64_t rank0_rows = 0;
  for (int64_t r : kMlperfRows) rank0_rows += r / 2 + r % 2;
  ASSERT_EQ(rank0_rows, 93883705u);  // 24.03 GB at 128 x 2 B
  struct Case {
    std::vector<std::string> args;
    std::string want;
  };
  const Case cases[] = {
      {{"--model=dlrm-mlperf", "--npus=8", "--embedding-sharding=tabel"},
       "--embedding-sharding = tabel: unknown sharding (did you mean 'table'?); allowed: table"},
      // 39,979,771 rows x 128 x 2 B = 10.23 GB > 8 GB.
      {{"--model=dlrm-mlperf", "--npus=64", "--hbm-gb=8"},
       "table 19 of dlrm-mlperf, the largest (39979771 rows x d 128 x 2 B = 10.23 GB), is larger than one NPU's HBM"},
      {{"--model=dlrm-mlperf", "--npus=2", "--embedding-sharding=row", "--hbm-gb=20"},
       "memory over capacity on rank 0 (rank class 0): embeddings 24.03 GB (" + std::to_string(rank0_rows) + " rows"},
      {{"--model=dlrm-mlperf", "--npus=8", "--tp=2"}, "--tp does not apply to dlrm-mlperf (kind dlrm"},
      {{"--model=gpt3-175b", "--tp=8", "--pp=8", "--dp=16", "--embedding-sharding=row"},
       "--embedding-sharding applies to DLRM models (kind: dlrm) only"},
      {{"--model=dlrm-mlperf", "--npus=64", "--global-batch=1000"},
       "--global-batch = 1000 is not divisible by the 64 NPUs"},
      {{"--model=dlrm-mlperf", "--npus=8", "--dp=4"}, "--npus = 8 and --dp = 4 differ"},
      {{"--model=" + d.File("zero.yml"), "--npus=2"}, "zero.yml:4: tables[1] = \"0\""},
      {{"--model=" + d.File("typo.yml"), "--npus=2"},
       "typo.yml:3: dense_feature: unknown key 'dense_feature' (did you mean 'dense_features'?)"},
  };
  for (const Case& c : cases) {
    std::string out, err;
    EXPECT_EQ(Gen(c.args, &out, &err), 2) << c.want;
    EXPECT_TRUE(Has(err, c.want)) << err << "\nwanted: " << c.want;
  }
  // Over capacity is allowed on request; the summary then marks the rank class.
  std::string out, err;
  EXPECT_EQ(Gen({"--model=dlrm-mlperf", "--npus=2", "--embedding-sharding=row", "--hbm-gb=20", "--allow-over-capacity"},
                &out, &err),
            0)
      << err;
  EXPECT_TRUE(Has(out, "OVER CAPACITY")) << out;
  // The same reasons reach `orrery run --generate`.
  auto bad = GeneratedSource("--model=dlrm-mlperf --npus=8 --embedding-sharding=rows");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().exit_code(), 2);
  EXPECT_TRUE(Has(bad.status().message(), "unknown sharding (did you mean 'row'?)")) << bad.status().message();
}

}  // namespace
}  // namespace orrery::gen
