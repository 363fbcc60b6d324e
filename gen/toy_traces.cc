#include "gen/toy_traces.h"

#include <vector>

#include "gen/builder.h"

namespace orrery {

namespace {

// A straggler's compute: `us` made `percent` % longer, exactly.
Result<uint64_t> SlowedMicros(const char* flag, uint64_t us, uint64_t percent) {
  if (us > (uint64_t{1} << 40) || (us * (100 + percent)) % 100 != 0) {
    return Status::Invalid(std::string("--straggler-percent = ") + std::to_string(percent) + ": " + flag + " " +
                           std::to_string(us) + " us made that much longer is not a whole number of microseconds" +
                           " (allowed: a percentage p with " + flag + " * (100 + p) divisible by 100)");
  }
  return us * (100 + percent) / 100;
}

Status CheckStraggler(const DataParallelSpec& spec) {
  if (spec.slow_rank < -1 || spec.slow_rank >= spec.npus) {
    return Status::Invalid("--straggler = " + std::to_string(spec.slow_rank) + ": not a rank of " +
                           std::to_string(spec.npus) + " NPUs (allowed: 0.." + std::to_string(spec.npus - 1) + ")");
  }
  if (spec.slow_rank < 0 && spec.slow_percent != 0) {
    return Status::Invalid("--straggler-percent = " + std::to_string(spec.slow_percent) +
                           " needs --straggler=RANK (which rank is slower)");
  }
  return Status::Ok();
}

// Every rank a member of the one data-parallel group: collectives span all NPUs.
gen::Layout DataParallelLayout(int npus) {
  return gen::Layout({1, 1, 1, npus, 1},
                     {gen::Axis::kTp, gen::Axis::kCp, gen::Axis::kEp, gen::Axis::kDp, gen::Axis::kPp});
}

// One rank's training loop, its forward and backward nodes `fwd_us` and `bwd_us` long.
gen::GraphBuilder DataParallelGraph(const DataParallelSpec& spec, uint64_t fwd_us, uint64_t bwd_us) {
  gen::GraphBuilder b;
  const bool acts = spec.activation_bytes > 0;
  const bool offload = acts && spec.offload;
  std::vector<gen::NodeRef> fwd(spec.layers), store(spec.layers);
  gen::NodeRef prev = 0;
  for (int l = 0; l < spec.layers; ++l) {
    const std::string layer = std::to_string(l);
    fwd[l] = b.Timed("fwd_" + layer, fwd_us, acts ? spec.activation_bytes : 0,
                     l > 0 ? std::vector<gen::NodeRef>{prev} : std::vector<gen::NodeRef>{});
    prev = fwd[l];
    if (offload) store[l] = b.MemStore("offload_" + layer, spec.activation_bytes, {fwd[l]});
  }
  for (int l = spec.layers - 1; l >= 0; --l) {
    const std::string layer = std::to_string(l);
    gen::NodeRef act = fwd[l];
    if (offload) {
      act = b.MemLoad("reload_" + layer, spec.activation_bytes, {store[l]});
      b.OrderAfter(act, prev);  // reload when the backward reaches this layer
    }
    std::vector<gen::NodeRef> deps{prev};
    if (acts && act != prev) deps.push_back(act);
    prev = b.Timed("bwd_" + layer, bwd_us, 0, std::move(deps));
    b.Collective("allreduce_" + layer, gen::Coll::kAllReduce, spec.allreduce_bytes, gen::Axis::kDp, {prev});
  }
  return b;
}

}  // namespace

Status WriteDataParallelTraces(const DataParallelSpec& spec, const std::string& prefix) {
  ORRERY_RETURN_IF_ERROR(CheckStraggler(spec));
  const Result<uint64_t> slow_fwd = SlowedMicros("--fwd-us", spec.fwd_us, spec.slow_percent);
  if (!slow_fwd.ok()) return slow_fwd.status();
  const Result<uint64_t> slow_bwd = SlowedMicros("--bwd-us", spec.bwd_us, spec.slow_percent);
  if (!slow_bwd.ok()) return slow_bwd.status();
  gen::Workload w;
  w.layout = DataParallelLayout(spec.npus);
  w.classes.push_back(DataParallelGraph(spec, spec.fwd_us, spec.bwd_us));
  w.class_of_rank.assign(spec.npus, 0);
  if (spec.slow_rank >= 0) {
    w.classes.push_back(DataParallelGraph(spec, slow_fwd.value(), slow_bwd.value()));
    w.class_of_rank[spec.slow_rank] = 1;
  }
  return gen::WriteChakra(w, prefix, gen::ChakraSpelling::kAstraSimExample);
}

Status WriteSingleCollectiveTraces(int npus, CollectiveKind kind, uint64_t bytes, const std::string& prefix) {
  gen::Workload w;
  w.layout = DataParallelLayout(npus);
  w.classes.emplace_back().Collective("collective", kind, bytes, gen::Axis::kDp, {});
  w.class_of_rank.assign(npus, 0);
  return gen::WriteChakra(w, prefix, gen::ChakraSpelling::kAstraSimExample);
}

}  // namespace orrery
