// Shared by the generator's tests: a tiny GPT-shaped model and the
// compute-bound roofline they run on (1 TFLOP/s), simulated on a ring.
#pragma once
#include <cstdint>
#include <string>

#include "core/tick.h"
#include "gen/builder.h"
#include "gen/model.h"
#include "tests/test_util.h"

namespace orrery::gen::testing {

// h 64, 4 heads of 16, ffn 256, V 128: GPT-shaped (biases, LayerNorm,
// learned positions, tied embeddings).
inline ModelDesc TinyModel(int64_t layers, int64_t seq_len) {
  ModelDesc m;
  m.name = "tiny";
  m.layers = layers;
  m.hidden = 64;
  m.ffn = 256;
  m.heads = 4;
  m.kv_heads = 4;
  m.head_dim = 16;
  m.vocab = 128;
  m.seq_len = seq_len;
  return m;
}

// The system layer's roofline, compute-bound (local-mem-bw is huge) at
// 1 TFLOP/s: num_ops / peak, truncated to whole nanoseconds.
inline Tick RooflineNs(uint64_t ops) { return static_cast<Tick>(static_cast<double>(ops) / (1e12) * 1e9); }

// Writes the workload as Chakra files and simulates it on a 1-D ring of its
// NPUs (one chunk, no endpoint delay, peak-perf 1).
inline Result<RunReport> SimulateOnRing(const Workload& w, const orrery::testing::TempDir& d, double bw_gbps,
                                        double latency_ns) {
  const std::string prefix = d.File("trace");
  Status st = WriteChakra(w, prefix);
  if (!st.ok()) return st;
  d.Write("network.yml", orrery::testing::NetworkYaml("Ring", static_cast<int>(w.layout.npus()), bw_gbps, latency_ns));
  d.Write("system.json",
          orrery::testing::SystemJson("ring", 1, 0, 1e9, 1, ", \"roofline-enabled\": 1, \"peak-perf\": 1"));
  RunConfig c;
  c.files.workload_prefix = prefix;
  c.files.network = d.File("network.yml");
  c.files.system = d.File("system.json");
  c.files.comm_groups = prefix + ".comm_groups.json";
  return RunSimulation(c, DefaultBackends());
}

}  // namespace orrery::gen::testing
