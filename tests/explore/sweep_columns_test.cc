// Sweep row columns (explore/sweep_metrics.h): model FLOPs and MFU derived by
// hand for a tiny model, memory footprint, per-dimension busy time and
// critical-path communication, CSV and JSON Lines agreeing, rows surviving a
// JSON round trip, and a custom Runner (as the MPI mode's rank 0 is) giving
// the pool's bytes.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "explore/sweep.h"
#include "gen/model.h"
#include "gen/strategy.h"
#include "tests/test_util.h"

namespace orrery::sweep {
namespace {

using orrery::testing::TempDir;

using orrery::testing::ReadFileText;

const char kModel[] = "name: small\nlayers: 4\nhidden: 256\nheads: 8\nvocab: 1024\nseq_len: 128\n";
const char kSystem[] =
    R"({"roofline-enabled": 1, "peak-perf": 100, "local-mem-bw": 2000, "preferred-dataset-splits": 2})";

void WriteSpec(const TempDir& d, const std::string& gen_extra, const std::string& rest) {
  d.Write("model.yml", kModel);
  d.Write("sys.json", kSystem);
  d.Write("sweep.yml",
          "base:\n  network: \"Ring(4,100GB/s,500ns)_Switch(2,25GB/s,2us)\"\n  system: sys.json\n"
          "  generate: \"--model=" +
              d.File("model.yml") + " --tp=4 --dp=2 --microbatches=2" + gen_extra + "\"\n" + rest);
}

std::vector<nlohmann::json> Rows(const TempDir& d, const std::string& out, bool critical_path = false, int jobs = 2) {
  auto spec = ReadSweepSpec(d.File("sweep.yml"));
  EXPECT_TRUE(spec.ok()) << spec.status().message();
  Options o;
  o.jobs = jobs;
  o.out_dir = d.File(out);
  o.critical_path = critical_path;
  std::string dry;
  auto sum = RunSweep(spec.value(), o, &dry);
  EXPECT_TRUE(sum.ok()) << sum.status().message();
  std::vector<nlohmann::json> rows;
  std::istringstream in(ReadFileText(d.File(out + "/sweep.jsonl")));
  for (std::string line; std::getline(in, line);) rows.push_back(nlohmann::json::parse(line));
  return rows;
}

// The tiny model: l = 4 layers, h = 256, s = 128, V = 1024, GPT-shaped (MHA,
// ffn = 4h, ungated). tp 4 x dp 2, 2 microbatches of 1: B = 1 * 2 * 2 = 4
// samples per iteration. Model FLOPs without recomputation (Narayanan et al.
// 2021 eq. 3): 72Bslh² + 12Bs²lh + 6BshV.
constexpr double kB = 4, kS = 128, kL = 4, kH = 256, kV = 1024;
constexpr double kModelFlops = 72 * kB * kS * kL * kH * kH + 12 * kB * kS * kS * kL * kH + 6 * kB * kS * kH * kV;
constexpr int kNpus = 8;

TEST(SweepColumns, MfuDerivedByHand) {
  TempDir d;
  // MFU counts model FLOPs: selective recomputation's extra forward is not in it.
  WriteSpec(d, " --recompute=selective", "axes:\n  run.iterations: [1, 2]\n");
  auto rows = Rows(d, "out");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(kModelFlops, 11274289152.0);  // the arithmetic above, spelled out
  for (const auto& r : rows) {
    ASSERT_EQ(r["status"], "ok") << r.dump();
    EXPECT_EQ(r["model_flops"], "11274289152");
    const double iterations = std::stod(r["point"]["run.iterations"].get<std::string>());
    const double iteration_s = r["finished_ns"].get<double>() / iterations / 1e9;
    // No --device: the peak is the system's peak-perf, 100 TFLOP/s.
    const double mfu = kModelFlops / (kNpus * 100e12 * iteration_s);
    EXPECT_NEAR(r["mfu"].get<double>(), mfu, 1e-12 * mfu) << r.dump();
  }
  // Two iterations take about twice one, so the MFU is about the same.
  EXPECT_NEAR(rows[1]["mfu"].get<double>(), rows[0]["mfu"].get<double>(), 0.01 * rows[0]["mfu"].get<double>());
}

TEST(SweepColumns, MfuUsesTheDevicePeak) {
  TempDir d;
  WriteSpec(d, " --device=a100", "axes:\n  network.dim1.bandwidth_gbps: [25]\n");
  auto rows = Rows(d, "out");
  ASSERT_EQ(rows.size(), 1u);
  // A100: 312 TFLOP/s dense BF16 (datasheet), whatever the system's peak-perf says.
  const double mfu = kModelFlops / (kNpus * 312e12 * rows[0]["finished_ns"].get<double>() / 1e9);
  EXPECT_NEAR(rows[0]["mfu"].get<double>(), mfu, 1e-12 * mfu);
}

// A DLRM's model FLOPs are its closed form (docs/generator.md), by hand for
// MLPerf's DLRM: MLPs 6·B·Σ in·out with Σ in·out = 2,365,184 (13·512 + 512·256
// + 256·128 bottom; 479·1024 + 1024·1024 + 1024·512 + 512·256 + 256·1 top),
// the dot interaction 6·B·351 pairs·128, lookups 3·B·128 per table, 26 tables.
TEST(SweepColumns, DlrmMfuDerivedByHand) {
  TempDir d;
  d.Write("sys.json", kSystem);
  d.Write("sweep.yml",
          "base:\n  network: \"Switch(8,50GB/s,1us)\"\n  system: sys.json\n"
          "  generate: \"--model=dlrm-mlperf --npus=8 --microbatch-size=64\"\n"
          "axes:\n  network.dim0.bandwidth_gbps: [50]\n");
  auto rows = Rows(d, "out");
  ASSERT_EQ(rows.size(), 1u);
  ASSERT_EQ(rows[0]["status"], "ok") << rows[0].dump();
  const double B = 8 * 64;
  const double flops = 6 * B * 2365184 + 6 * B * 351 * 128 + 3 * B * 128 * 26;
  EXPECT_EQ(rows[0]["model_flops"], std::to_string(static_cast<uint64_t>(flops)));
  const double mfu = flops / (8 * 100e12 * rows[0]["finished_ns"].get<double>() / 1e9);
  EXPECT_NEAR(rows[0]["mfu"].get<double>(), mfu, 1e-12 * mfu);
  EXPECT_TRUE(rows[0]["gen_memory_bytes"].is_null());  // the closed-form memory is the transformers'
}

TEST(SweepColumns, MemoryFootprint) {
  TempDir d;
  WriteSpec(d, "", "axes:\n  gen.zero: [0, 1]\n");
  auto plain = Rows(d, "plain");
  ASSERT_EQ(plain.size(), 2u);
  // Without a memory configuration nothing tracks capacity: no simulated peak.
  EXPECT_TRUE(plain[0]["peak_local_bytes"].is_null());
  EXPECT_TRUE(plain[0]["peak_remote_bytes"].is_null());
  // The closed form: ZeRO-1 over d = 2 saves 16Ψ - (4Ψ + 12Ψ/2) = 6Ψ per rank (Rajbhandari et al. Fig. 1).
  auto m = gen::LoadModel(d.File("model.yml"));
  ASSERT_TRUE(m.ok());
  gen::Strategy s;
  s.tp = 4;
  s.dp = 2;
  s.microbatches = 2;
  const uint64_t psi = gen::RankParams(m.value(), s, 0);
  EXPECT_EQ(plain[0]["gen_memory_bytes"].get<uint64_t>() - plain[1]["gen_memory_bytes"].get<uint64_t>(), 6 * psi);
  // Resident bytes are held from the start: 3e9 instead of 1e9 raises the simulated peak by 2e9.
  uint64_t peak[2];
  for (int k = 0; k < 2; ++k) {
    d.Write("mem.yml", std::string("backend: astra-sim\nresident_bytes: ") + (k ? "3e9" : "1e9") + "\n");
    WriteSpec(d, "", "  memory: mem.yml\naxes:\n  gen.zero: [0]\n");
    auto rows = Rows(d, "mem" + std::to_string(k));
    ASSERT_EQ(rows.size(), 1u);
    ASSERT_FALSE(rows[0]["peak_local_bytes"].is_null()) << rows[0].dump();
    peak[k] = rows[0]["peak_local_bytes"].get<uint64_t>();
    EXPECT_EQ(rows[0]["peak_remote_bytes"], 0u);  // no pool
  }
  EXPECT_GE(peak[0], 1000000000u);
  EXPECT_EQ(peak[1] - peak[0], 2000000000u);
}

// Busy time of a dimension is its bytes over its bandwidth: the Switch
// dimension at 10 GB/s is busy 2.5x as long as at 25 GB/s, the Ring unchanged.
// With --critical-path the row splits the path's communication by dimension.
TEST(SweepColumns, PerDimensionSplit) {
  TempDir d;
  WriteSpec(d, "", "axes:\n  network.dim1.bandwidth_gbps: [10, 25]\n");
  auto busy = Rows(d, "busy");
  ASSERT_EQ(busy.size(), 2u);
  ASSERT_EQ(busy[0]["dim_busy_ns"].size(), 2u);
  EXPECT_TRUE(busy[0]["dim_exposed_comm_ns"].empty());
  EXPECT_TRUE(busy[0]["path_comm_other_ns"].is_null());
  EXPECT_EQ(busy[0]["dim_busy_ns"][0], busy[1]["dim_busy_ns"][0]);
  const double b10 = busy[0]["dim_busy_ns"][1].get<double>(), b25 = busy[1]["dim_busy_ns"][1].get<double>();
  EXPECT_NEAR(b10 / b25, 2.5, 1e-3);  // each message rounded to whole ns
  auto path = Rows(d, "path", true);
  ASSERT_EQ(path.size(), 2u);
  EXPECT_NE(path[0]["hash"], busy[0]["hash"]);  // a different row, so not resumed from the other
  for (const auto& r : path) {
    ASSERT_EQ(r["dim_exposed_comm_ns"].size(), 2u);
    const uint64_t on_dims = r["dim_exposed_comm_ns"][0].get<uint64_t>() + r["dim_exposed_comm_ns"][1].get<uint64_t>();
    EXPECT_GT(r["dim_exposed_comm_ns"][1].get<uint64_t>(), 0u);
    ASSERT_FALSE(r["path_comm_other_ns"].is_null());
    // The path tiles the finished time: its communication, on dimensions or not, fits in it.
    EXPECT_LE(on_dims + r["path_comm_other_ns"].get<uint64_t>(), r["finished_ns"].get<uint64_t>());
    EXPECT_EQ(r["finished_ns"], busy[&r - &path[0]]["finished_ns"]);  // the path does not change the run
  }
  // The Ring's tensor-parallel collectives do not depend on the Switch's bandwidth; the Switch's share does.
  EXPECT_EQ(path[0]["dim_exposed_comm_ns"][0], path[1]["dim_exposed_comm_ns"][0]);
  EXPECT_GT(path[0]["dim_exposed_comm_ns"][1].get<uint64_t>(), path[1]["dim_exposed_comm_ns"][1].get<uint64_t>());
}

std::vector<std::string> Split(const std::string& line) {
  std::vector<std::string> out;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, ',')) out.push_back(field);
  if (!line.empty() && line.back() == ',') out.push_back("");
  return out;
}

TEST(SweepColumns, CsvAndJsonLinesAgree) {
  TempDir d;
  WriteSpec(d, "", "axes:\n  gen.tp: [4, 3]\n  network.dim1.bandwidth_gbps: [10, 25]\n");
  auto rows = Rows(d, "out", true);
  std::istringstream csv(ReadFileText(d.File("out/sweep.csv")));
  std::string line;
  std::getline(csv, line);
  const std::vector<std::string> header = Split(line);
  size_t k = 0;
  for (; std::getline(csv, line); ++k) {
    ASSERT_LT(k, rows.size());
    const auto& j = rows[k];
    const std::vector<std::string> f = Split(line);
    ASSERT_EQ(f.size(), header.size()) << line;
    for (size_t c = 0; c < header.size(); ++c) {
      const std::string& h = header[c];
      std::string expect;
      if (j.contains(h)) {
        const auto& v = j[h];
        expect = v.is_null() ? "" : v.is_string() ? v.get<std::string>() : v.dump();
        if (h == "mfu" && !v.is_null()) {
          EXPECT_NEAR(std::stod(f[c]), v.get<double>(), 1e-8 * v.get<double>());
          continue;
        }
        if (h == "status" && expect.find_first_of(",\"") != std::string::npos) {
          EXPECT_EQ(f[c][0], '"');  // quoted in the CSV
          break;                    // the quoted message may hold commas: the fields after it are not split right
        }
      } else if (j["point"].contains(h)) {
        expect = j["point"][h];
      } else if (h == "iteration_s") {
        continue;
      } else {
        ASSERT_EQ(h.rfind("dim", 0), 0u) << h;
        const size_t us = h.find('_');
        const int dim = std::stoi(h.substr(3, us - 3));
        const auto& arr = j["dim" + h.substr(us)];
        expect = dim < static_cast<int>(arr.size()) ? arr[dim].dump() : "";
      }
      EXPECT_EQ(f[c], expect) << "row " << k << " column " << h;
    }
  }
  EXPECT_EQ(k, rows.size());
  // The bad points (tp 3) are rows with empty metrics.
  EXPECT_NE(rows[2]["status"], "ok");
  EXPECT_TRUE(rows[2]["mfu"].is_null());
  EXPECT_TRUE(rows[2]["dim_busy_ns"].empty());
}

// A pipeline's bubble is its own column: the slowest rank's time splits five
// ways (compute, exposed communication, memory stall, waiting on peers, idle)
// that sum to its finished time, and the first stage of a 2-stage pipeline
// waits on its peer (docs/report.md). The CSV has the column, after mem_stall_ns.
TEST(SweepColumns, PeerWaitColumn) {
  TempDir d;
  d.Write("model.yml", kModel);
  d.Write("sys.json", kSystem);
  d.Write("sweep.yml",
          "base:\n  network: \"Ring(4,100GB/s,500ns)_Switch(2,25GB/s,2us)\"\n  system: sys.json\n"
          "  generate: \"--model=" +
              d.File("model.yml") + " --tp=4 --pp=2 --microbatches=2\"\naxes:\n  gen.microbatches: [1, 4]\n");
  auto rows = Rows(d, "out");
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& r : rows) {
    ASSERT_EQ(r["status"], "ok") << r.dump();
    EXPECT_GT(r["peer_wait_ns"].get<uint64_t>(), 0u) << r.dump();
    EXPECT_EQ(r["compute_ns"].get<uint64_t>() + r["exposed_comm_ns"].get<uint64_t>() +
                  r["mem_stall_ns"].get<uint64_t>() + r["peer_wait_ns"].get<uint64_t>() + r["idle_ns"].get<uint64_t>(),
              r["finished_ns"].get<uint64_t>());
  }
  const std::string csv = ReadFileText(d.File("out/sweep.csv"));
  EXPECT_NE(csv.find(",compute_ns,exposed_comm_ns,mem_stall_ns,peer_wait_ns,idle_ns,"), std::string::npos) << csv;
  // A row written before the column existed reads as 0 there.
  nlohmann::json old = rows[0];
  old.erase("peer_wait_ns");
  auto back = ParseRowJson(old.dump());
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->peer_wait_ns, 0u);
}

TEST(SweepColumns, RowsSurviveAJsonRoundTrip) {
  Row full;
  full.index = 7;
  full.point = {{"gen.tp", Value{"4", false}}};
  full.hash = "0123456789abcdef";
  full.status = "ok";
  full.finished_ns = 99;
  full.peer_wait_ns = 8;
  full.peak_local_bytes = 5;
  full.peak_remote_bytes = 0;
  full.gen_memory_bytes = 1ull << 40;
  full.model_flops = "340282366920938463463374607431768211455";  // 2^128 - 1
  full.mfu = 0.1 + 0.2;
  full.dim_busy_ns = {1, 2, 3};
  full.dim_exposed_comm_ns = {4, 5, 6};
  full.path_comm_other_ns = 7;
  Row empty;
  empty.status = "--tp = 3 does not divide \"x\", y";
  for (const Row& r : {full, empty}) {
    auto back = ParseRowJson(RowJson(r));
    ASSERT_TRUE(back.ok()) << back.status().message();
    EXPECT_EQ(RowJson(back.value()), RowJson(r));
    EXPECT_EQ(CsvRow(back.value(), {"gen.tp"}, 3), CsvRow(r, {"gen.tp"}, 3));
  }
  EXPECT_EQ(ParseRowJson(RowJson(full))->mfu, full.mfu);
  auto bad = ParseRowJson(R"({"index": 1})");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("not a sweep row"), std::string::npos);
}

// A runner that hands rows back in reverse order through their JSON text (as
// MPI workers do) gives the thread pool's bytes.
TEST(SweepColumns, ACustomRunnerGivesThePoolsBytes) {
  TempDir d;
  WriteSpec(d, "", "axes:\n  gen.tp: [4, 3]\n  network.dim1.bandwidth_gbps: [10, 25]\n");
  auto spec = ReadSweepSpec(d.File("sweep.yml"));
  ASSERT_TRUE(spec.ok());
  std::string dry;
  Options o;
  o.jobs = 1;
  o.out_dir = d.File("pool");
  ASSERT_TRUE(RunSweep(spec.value(), o, &dry).ok());
  o.out_dir = d.File("custom");
  size_t calls = 0;
  auto runner = [&](const Plan& plan, const std::vector<size_t>& todo, const std::function<void(Row)>& record) {
    EXPECT_EQ(PlanSize(plan), 4u);
    for (size_t t = todo.size(); t-- > 0;) {
      auto row = ParseRowJson(RowJson(SimulatePoint(plan, todo[t])));
      if (!row.ok()) return row.status();
      record(row.value());
      ++calls;
    }
    return Status::Ok();
  };
  auto sum = RunSweep(spec.value(), o, &dry, runner);
  ASSERT_TRUE(sum.ok()) << sum.status().message();
  EXPECT_EQ(calls, 4u);
  EXPECT_EQ(ReadFileText(d.File("custom/sweep.csv")), ReadFileText(d.File("pool/sweep.csv")));
  EXPECT_EQ(ReadFileText(d.File("custom/sweep.jsonl")), ReadFileText(d.File("pool/sweep.jsonl")));
}

}  // namespace
}  // namespace orrery::sweep
