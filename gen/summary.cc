#include "gen/summary.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "core/units.h"
#include "gen/placement.h"

namespace orrery::gen {
namespace {

std::string Gb(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GB", BytesToGB(static_cast<double>(bytes)));
  return buf;
}

const char* CollName(Coll c) {
  switch (c) {
    case Coll::kAllReduce: return "all-reduce";
    case Coll::kAllGather: return "all-gather";
    case Coll::kReduceScatter: return "reduce-scatter";
    case Coll::kAllToAll: return "all-to-all";
    default: break;  // the generator emits no other collective
  }
  return "?";
}

}  // namespace

MemoryFootprint StageMemory(const ModelDesc& m, const Strategy& s, int64_t stage) {
  MemoryFootprint f;
  const RankParamSplit split = RankParamsSplit(m, s, stage);
  f.params = split.dense + split.expert;
  // ZeRO shards dense states over the dense data-parallel group (cp·ep·dp)
  // and expert states over the expert one (cp·dp).
  f.model_state_bytes = ModelStateBytes(split.dense, s.zero, s.cp * s.ep * s.dp) +
                        (split.expert ? ModelStateBytes(split.expert, s.zero, s.cp * s.dp) : 0);
  // With CP a rank holds seq_len/cp tokens of each layer's activations.
  ModelDesc local = m;
  local.seq_len = m.seq_len / s.cp;
  f.activation_bytes_per_layer = ActivationBytesPerLayer(local, s.microbatch_size, s.tp, s.sp, s.recompute);
  f.layers = StageLayers(m, s.pp, stage);
  f.in_flight = s.schedule == Schedule::kGpipe ? s.microbatches : std::min(s.pp - stage, s.microbatches);
  if (s.schedule == Schedule::kInterleaved) {
    // Counted in chunks of l/(p·V) layers: the warm-up forwards plus the one in
    // flight in steady state, (p−k−1)·2 + (V−1)·p + 1 (at most m·V). On stage 0
    // this is p·V + p − 1 chunks = l·(1 + (p−1)/(pV)) layers (Korthikanti et al. 2022 §4.2.3).
    f.layers = m.layers / (s.pp * s.chunks);
    f.in_flight = std::min((s.pp - stage - 1) * 2 + (s.chunks - 1) * s.pp + 1, s.microbatches * s.chunks);
  }
  f.activation_bytes = f.activation_bytes_per_layer * f.layers * f.in_flight;
  if (s.offload_activations) {
    // HBM keeps the layer being computed and the one in transfer; the pool the rest.
    const uint64_t kept = f.activation_bytes_per_layer * std::min<int64_t>(2, f.layers * f.in_flight);
    f.offloaded_bytes += f.activation_bytes - kept;
    f.activation_bytes = kept;
  }
  if (s.offload_optimizer) {
    const uint64_t opt = OptimizerBytes(split.dense, s.zero, s.cp * s.ep * s.dp) +
                         OptimizerBytes(split.expert, s.zero, s.cp * s.dp);
    f.model_state_bytes -= opt;
    f.offloaded_bytes += opt;
  }
  f.total_bytes = f.model_state_bytes + f.activation_bytes;
  return f;
}

Status CheckCapacity(const ModelDesc& m, const Strategy& s, uint64_t hbm_bytes) {
  for (int64_t k = 0; k < s.pp; ++k) {
    const MemoryFootprint f = StageMemory(m, s, k);
    if (f.total_bytes > hbm_bytes) {
      return Status::Invalid(
          "memory over capacity on pipeline stage " + std::to_string(k) + " (rank class " + std::to_string(k) +
          "): model states " + Gb(f.model_state_bytes) + " (ZeRO-" + std::to_string(s.zero) + ", " +
          std::to_string(f.params) + " parameters) + activations " + Gb(f.activation_bytes) + " (" +
          std::to_string(f.in_flight) + " microbatches x " + std::to_string(f.layers) + " layers x " +
          std::to_string(f.activation_bytes_per_layer) + " B) = " + Gb(f.total_bytes) + " > --hbm-gb capacity " +
          Gb(hbm_bytes) +
          "; allowed: a strategy that fits (more tp/pp, --zero, --recompute), --offload=activations,optimizer "
          "(to the run's remote memory) or --allow-over-capacity");
    }
  }
  return Status::Ok();
}

ClassTotals Totals(const GraphBuilder& g) {
  ClassTotals t;
  t.nodes = g.nodes().size();
  for (const GenNode& n : g.nodes()) {
    if (n.kind == GenKind::kComp) t.flops += n.num_ops;
    if (n.kind == GenKind::kColl || n.kind == GenKind::kSend) {
      const std::string key = n.kind == GenKind::kSend ? std::string("send ") + AxisName(n.axis)
                                                       : std::string(CollName(n.coll)) + " " + AxisSetName(n.group);
      t.comm[key].first += 1;
      t.comm[key].second += n.bytes;
    }
  }
  return t;
}

Flops TotalFlops(const Workload& w) {
  std::vector<Flops> per_class;
  for (const GraphBuilder& g : w.classes) per_class.push_back(Totals(g).flops);
  Flops total = 0;
  for (int c : w.class_of_rank) total += per_class[c];
  return total;
}

namespace {

int64_t GlobalBatch(const Strategy& s) { return s.microbatch_size * s.microbatches * s.dp * s.ep; }

// The groups of rank 0 on each axis, and the data-parallel sets spanning several axes.
std::string AxesLine(const ModelDesc& m, const Layout& l) {
  std::ostringstream o;
  o << "axes on ranks:";
  for (int a = 0; a < kNumAxes; ++a) {
    const Axis ax = static_cast<Axis>(a);
    if (l.size(ax) <= 1) continue;
    const std::vector<int> g = l.GroupRanks(0, ax);
    o << " " << AxisName(ax) << " group of rank 0 = {" << g[0] << "," << g[1] << (g.size() > 2 ? ",..." : "") << "}"
      << " (stride " << g[1] - g[0] << ");";
  }
  for (AxisSet set : {kDenseDp, kExpertDp}) {
    const AxisSet e = l.Effective(set);
    if ((e & (e - 1)) == 0 || (set == kExpertDp && m.experts == 0)) continue;
    o << " " << (set == kDenseDp ? "dense gradients over " : "expert gradients over ") << AxisSetName(e) << " ("
      << l.GroupSize(e) << " ranks);";
  }
  o << "\n";
  return o.str();
}

// The pipeline schedule and its bubble; ZeRO, recomputation, sequence parallelism.
std::string ScheduleLines(const Strategy& s) {
  std::ostringstream o;
  char buf[160];
  const bool inter = s.schedule == Schedule::kInterleaved;
  std::snprintf(buf, sizeof buf, "%.4f", BubbleFraction(s.pp, inter ? s.microbatches * s.chunks : s.microbatches));
  o << "schedule "
    << (s.schedule == Schedule::kGpipe ? "gpipe"
        : inter                        ? "interleaved 1f1b, " + std::to_string(s.chunks) + " chunks"
                                       : "1f1b")
    << ", " << s.microbatches << " microbatches of " << s.microbatch_size << " (global batch " << GlobalBatch(s)
    << "); bubble " << (inter ? "(p-1)/(vm+p-1)" : "(p-1)/(m+p-1)") << " = " << buf << "\n";
  o << "ZeRO-" << s.zero << ", recompute "
    << (s.recompute == Recompute::kNone        ? "none"
        : s.recompute == Recompute::kSelective ? "selective"
                                               : "full")
    << (s.sp ? ", sequence parallel" : "") << "\n";
  return o.str();
}

// Rank class `c` (pipeline stage c): its ranks, nodes, FLOPs, communication and memory.
std::string ClassLines(const ModelDesc& m, const Strategy& s, const Workload& w, size_t c, uint64_t hbm_bytes) {
  std::ostringstream o;
  const ClassTotals t = Totals(w.classes[c]);
  const int64_t ranks = std::count(w.class_of_rank.begin(), w.class_of_rank.end(), static_cast<int>(c));
  const MemoryFootprint f = StageMemory(m, s, static_cast<int64_t>(c));
  const int64_t layers = s.schedule == Schedule::kInterleaved ? f.layers * s.chunks : f.layers;
  o << "class " << c << " (stage " << c << "): " << ranks << " ranks, " << layers << " layers, " << t.nodes
    << " nodes, " << FlopsText(t.flops) << " FLOP per rank per iteration\n";
  for (const auto& [key, v] : t.comm) o << "  " << key << ": " << v.first << " x, " << v.second << " B\n";
  o << "  memory: model states " << Gb(f.model_state_bytes) << " + activations " << Gb(f.activation_bytes) << " ("
    << f.in_flight << (s.schedule == Schedule::kInterleaved ? " chunks" : " microbatches")
    << " in flight) = " << Gb(f.total_bytes) << " of " << Gb(hbm_bytes)
    << (f.total_bytes > hbm_bytes ? "  OVER CAPACITY" : "")
    << (f.offloaded_bytes ? "; offloaded to the pool: " + Gb(f.offloaded_bytes) : std::string()) << "\n";
  return o.str();
}

// The generated FLOPs against the closed forms.
std::string FlopsLine(const ModelDesc& m, const Strategy& s, const Workload& w) {
  std::ostringstream o;
  const int64_t B = GlobalBatch(s);
  o << "FLOP per iteration, all ranks: " << FlopsText(TotalFlops(w));
  const bool gpt_shaped = m.ffn == 4 * m.hidden && m.kv_heads == m.heads && !m.gated_ffn && m.experts == 0 &&
                          m.heads * m.head_dim == m.hidden && s.lm_head;
  o << " (closed form"
    << (s.kernel_model ? " of the GEMMs and attention core; the kernel model adds element-wise"
                         " kernels and the optimizer"
                       : "")
    << ": " << FlopsText(ModelFlops(m, B, s.recompute, s.lm_head)) << ")";
  // Selective recomputation replays the forward attention core once (4Bs²lh); Korthikanti et
  // al.'s HFU formula, 72Bslh²(1 + s/3h + V/12lh), counts 8Bs²lh more than that.
  if (gpt_shaped) {
    o << " (Korthikanti et al. App. A"
      << (s.recompute == Recompute::kSelective ? " model FLOPs + 4Bs²lh, the replayed attention core" : "") << ": "
      << FlopsText(KorthikantiFlops(m, B, s.recompute)) << ")";
  }
  o << "\n";
  return o.str();
}

}  // namespace

std::string FormatSummary(const ModelDesc& m, const Strategy& s, const Workload& w, uint64_t hbm_bytes,
                          const std::vector<Dim>& dims) {
  std::ostringstream o;
  char buf[160];
  std::snprintf(buf, sizeof buf, "%.1f", Billions(static_cast<double>(ParamCount(m))));
  o << "model " << m.name << ": " << buf << " B parameters; l " << m.layers << ", h " << m.hidden << ", ffn " << m.ffn
    << ", heads " << m.heads << "/" << m.kv_heads << " kv, vocab " << m.vocab << ", seq " << m.seq_len << "\n";
  const Layout& l = w.layout;
  o << "strategy: tp " << s.tp << " x cp " << s.cp << " x ep " << s.ep << " x dp " << s.dp << " x pp " << s.pp << " = "
    << l.npus() << " NPUs; order " << l.OrderText() << " (innermost first)\n";
  o << AxesLine(m, l);
  if (!dims.empty()) {
    o << "on the network:";
    for (const std::string& line : DescribePlacement(l, dims)) o << " " << line << ";";
    o << "\n";
  }
  o << ScheduleLines(s);
  for (size_t c = 0; c < w.classes.size(); ++c) o << ClassLines(m, s, w, c, hbm_bytes);
  o << FlopsLine(m, s, w);
  return o.str();
}

}  // namespace orrery::gen
