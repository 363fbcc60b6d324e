#include "explore/sweep_metrics.h"

#include <sstream>

#include "core/parse.h"
#include "core/units.h"
#include "gen/device.h"
#include "gen/dlrm.h"
#include "gen/formulas.h"
#include "gen/gen_args.h"
#include "gen/model.h"
#include "gen/summary.h"

namespace orrery::sweep {

Result<GenFigures> GeneratedFigures(const gen::GenOptions& o, double system_peak_tflops) {
  auto m = gen::LoadModel(o.model);
  if (!m.ok()) return m.status();
  GenFigures g;
  g.peak_tflops = system_peak_tflops;
  if (!o.device.empty()) {
    auto d = gen::FindDevice(o.device);
    if (d.ok()) g.peak_tflops = d->peak_tflops;
  }
  if (m->kind == gen::ModelKind::kDlrm) {
    auto s = gen::DlrmStrategyFromOptions(o);
    if (!s.ok()) return s.status();
    const gen::Flops flops = gen::DlrmClosedFormFlops(m->dlrm, s->local_batch * s->npus);
    g.model_flops = gen::FlopsText(flops);
    g.model_flops_d = static_cast<double>(flops);
    return g;
  }
  const gen::Strategy& s = o.strategy;
  const uint64_t batch = static_cast<uint64_t>(s.microbatch_size * s.microbatches * s.dp * s.ep);
  const gen::Flops flops = gen::ModelFlops(m.value(), batch, gen::Recompute::kNone, s.lm_head);
  g.model_flops = gen::FlopsText(flops);
  g.model_flops_d = static_cast<double>(flops);
  uint64_t memory = 0;
  for (int64_t stage = 0; stage < s.pp; ++stage) {
    memory = std::max(memory, gen::StageMemory(m.value(), s, stage).total_bytes);
  }
  g.memory_bytes = memory;
  return g;
}

namespace {

// "communication dim0+dim1 (Ring+Switch)" -> {0, 1}; anything else -> {}.
std::vector<int> PathDims(const std::string& activity) {
  std::vector<int> dims;
  const std::string head = "communication ";
  if (activity.rfind(head, 0) != 0) return dims;
  size_t pos = head.size();
  while (activity.compare(pos, 3, "dim") == 0) {
    size_t end = pos + 3;
    while (end < activity.size() && std::isdigit(static_cast<unsigned char>(activity[end]))) ++end;
    if (end == pos + 3) break;
    auto k = ParseInt(activity.substr(pos + 3, end - pos - 3), Where{"", 0, "dimension"}, 0, 1 << 20);
    if (!k.ok()) break;
    dims.push_back(static_cast<int>(k.value()));
    if (end >= activity.size() || activity[end] != '+') break;
    pos = end + 1;
  }
  return dims;
}

}  // namespace

void FillRow(const RunReport& report, int iterations, const GenFigures* gen, Row* row) {
  const NpuReport* slowest = nullptr;
  uint64_t peak_local = 0;
  for (const NpuReport& n : report.per_npu) {
    if (!slowest || n.finished_ns > slowest->finished_ns) slowest = &n;
    peak_local = std::max<uint64_t>(peak_local, n.peak_local_bytes);
  }
  if (slowest) {
    row->finished_ns = slowest->finished_ns;
    row->compute_ns = slowest->compute_ns;
    row->exposed_comm_ns = slowest->exposed_comm_ns;
    row->mem_stall_ns = slowest->mem_stall_ns;
    row->peer_wait_ns = slowest->peer_wait_ns;
    row->idle_ns = slowest->idle_ns;
  }
  if (report.capacity_tracked) {
    row->peak_local_bytes = peak_local;
    row->peak_remote_bytes = report.peak_remote_bytes;
  }
  row->dim_busy_ns.clear();
  for (const DimReport& d : report.dims) row->dim_busy_ns.push_back(d.busy_ns);
  row->dim_exposed_comm_ns.clear();
  if (report.critical_path.rank >= 0) {
    // Segments on several dimensions at once are split evenly, the remainder to the lowest.
    row->dim_exposed_comm_ns.assign(report.dims.size(), 0);
    row->path_comm_other_ns = 0;
    for (const PathSegment& s : report.critical_path.segments) {
      std::vector<int> dims = PathDims(s.activity);
      std::erase_if(dims, [&](int d) { return d < 0 || d >= static_cast<int>(report.dims.size()); });
      if (dims.empty()) {
        if (s.activity.rfind("communication", 0) == 0) *row->path_comm_other_ns += s.end_ns - s.start_ns;
        continue;
      }
      const uint64_t ns = s.end_ns - s.start_ns, share = ns / dims.size();
      for (int d : dims) row->dim_exposed_comm_ns[d] += share;
      row->dim_exposed_comm_ns[dims[0]] += ns - share * dims.size();
    }
  }
  if (gen && !gen->model_flops.empty()) {
    row->model_flops = gen->model_flops;
    row->gen_memory_bytes = gen->memory_bytes;
    const double iteration_s = NsToSeconds(static_cast<double>(row->finished_ns) / std::max(1, iterations));
    if (report.generated.mfu) {
      row->mfu = report.generated.mfu;  // the run's device: the system configuration's, else --device
    } else if (gen->peak_tflops > 0 && iteration_s > 0 && report.npus > 0) {
      row->mfu = gen->model_flops_d / (report.npus * gen->peak_tflops * kFlopsPerTflop * iteration_s);
    }
  }
}

}  // namespace orrery::sweep
