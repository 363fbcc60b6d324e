// Simulation::Run (the event loop) and Simulation::Report.
#include <algorithm>

#include "core/units.h"
#include "extern/et_io.h"
#include "gen/device.h"
#include "memory/backend.h"
#include "report/critical_path.h"
#include "run/build.h"
#include "run/class_observers.h"
#include "workload/load_notes.h"
#include "workload/progress.h"

namespace orrery {

int Simulation::RanksFinished() const {
  int n = 0;
  for (const auto& s : exec_->npus()) n += s.finished ? 1 : 0;
  return n;
}

bool Simulation::RunBatched(ProgressMeter* progress, RunStop* stop) {
  const bool meter = progress && progress->enabled();
  const uint64_t batch = meter ? ProgressMeter::kEventsPerCheck : RunStop::kEventsPerCheck;
  const int ranks = static_cast<int>(exec_->npus().size());
  if (meter) progress->Begin();
  bool stopped = false;
  for (bool more = true; more;) {
    for (uint64_t i = 0; i < batch; ++i) {
      if (!(exec_->failure().ok() && backend_failure_.ok() && !queue_.overflowed() && queue_.RunOne())) {
        more = false;
        break;
      }
    }
    if (more && meter) progress->Update(queue_.Now(), queue_.Executed(), RanksFinished(), ranks);
    if (more && stop && stop->active() && stop->Due()) {
      stopped = true;
      break;
    }
  }
  if (meter) progress->Finish(queue_.Now(), queue_.Executed(), RanksFinished(), ranks);
  return !stopped;
}

Status Simulation::Run(ProgressMeter* progress, RunStop* stop) {
  if (ran_) return Status::Invalid("a simulation runs once");
  ran_ = true;
  if (Status st = exec_->Start(); !st.ok()) return st;
  if ((progress && progress->enabled()) || (stop && stop->active())) {
    // The same loop, stopping every few thousand events to tell the meter and look at the clock.
    if (!RunBatched(progress, stop)) {
      stop->stopped = true;
      return Status::Env("stopped at " + stop->reason + " at simulated t=" + std::to_string(queue_.Now()) +
                         " ns after " + std::to_string(queue_.Executed()) + " events (" +
                         std::to_string(RanksFinished()) + " of " + std::to_string(exec_->npus().size()) +
                         " simulated ranks finished)");
    }
  } else {
    while (exec_->failure().ok() && backend_failure_.ok() && !queue_.overflowed() && queue_.RunOne()) {
    }
  }
  if (!backend_failure_.ok()) return backend_failure_;
  if (Status st = exec_->CheckFinished(); !st.ok()) return st;
  if (timeline_) {
    if (Status st = timeline_->Close(); !st.ok()) return st;
  }
  std::vector<std::string> stray;
  for (int r = 0; r < engine_->npus(); ++r) engine_->npu(r).DescribeUnmatched(&stray);
  if (!stray.empty()) {
    std::string msg = "unmatched send(s) at the end of the run:";
    for (size_t i = 0; i < stray.size() && i < 8; ++i) msg += "\n  " + stray[i];
    if (stray.size() > 8) msg += "\n  ... and " + std::to_string(stray.size() - 8) + " more";
    return Status::Invalid(msg);
  }
  return Status::Ok();
}

Result<RunReport> Simulation::Report() {
  RunReport rep = ReportTotals();
  if (recorder_) ORRERY_RETURN_IF_ERROR(ReportCriticalPath(&rep));
  Tick finished = 0;
  rep.per_npu = ReportNpus(&finished);
  for (const auto& c : exec_->rank0_collectives()) {
    rep.collectives.push_back(CollectiveReport{0, c.node_id, c.name, c.type, c.bytes, c.algorithm, c.start, c.end});
  }
  for (int d = 0; d < topology_.num_dims(); ++d) rep.dims.push_back(ReportDim(d, finished));
  rep.generated = ReportGenerated(finished);
  AddAllCollectives(rep);
  AddClasses(rep);
  rep.link_stats = spec_.observe.link_stats;
  if (spec_.observe.link_stats || spec_.observe.collect_links) {
    if (Status st = ReportLinks(&rep); !st.ok()) return st;
  }
  return rep;
}

// The critical path; with rank classes each rank is walked with its own graph
// (read when the path first reaches it), on its representative's records.
Status Simulation::ReportCriticalPath(RunReport* rep) {
  PathClasses classes;
  std::map<int, NpuGraph> read;  // the graphs of ranks the path visits that are not simulated
  if (classes_.use) {
    classes.map = &classes_.map;
    classes.graph = [&](int r) -> Result<const NpuGraph*> {
      const int rep_rank = classes_.map.RepOf(r);
      if (rep_rank == r) return &exec_->npus()[r].graph;
      if (r < static_cast<int>(class_graph_of_.size()) && class_graph_of_[r]) return class_graph_of_[r];
      auto g = spec_.source->Load(r, load_options_);
      if (!g.ok()) return g.status();
      const std::string diff = AlignmentDifference(exec_->npus()[rep_rank].graph, g.value());
      if (!diff.empty()) {
        return Status::Invalid("--critical-path: rank " + std::to_string(r) +
                               "'s graph does not match its representative " + std::to_string(rep_rank) +
                               "'s node by node (" + diff + "); run with --symmetry=off");
      }
      return &(read[r] = std::move(g.value()));
    };
  }
  auto path = FindCriticalPath(*exec_, *recorder_, *engine_, symmetric_, &classes);
  if (!path.ok()) return path.status();
  rep->critical_path = std::move(path.value());
  return Status::Ok();
}

namespace {

// The report's group-collectives line (docs/report.md): the model that ran
// and the first communicator group whose ranks differ in several dimensions;
// "" when the models cannot differ (one dimension, or no group larger than
// one rank and smaller than the network).
std::string GroupCollectivesNote(const SystemOptions& o, const CollectiveEngine& engine, const Topology& t) {
  if (t.num_dims() < 2) return "";
  bool partial = false;
  const CommGroup* across = nullptr;
  for (int g = 0; g < engine.num_groups(); ++g) {
    const CommGroup& group = engine.group(g);
    const int n = static_cast<int>(group.ranks.size());
    if (n <= 1 || n >= t.npus()) continue;
    partial = true;
    if (!across && std::count(group.dims.begin(), group.dims.end(), true) > 1) across = &group;
  }
  if (!partial) return "";
  std::string note = o.hierarchical_groups
                         ? "hierarchical (a group of whole dimensions, or a grid across several whose partial ones "
                           "are switches, runs per dimension; a message across several dimensions is charged on each)"
                         : "astra-sim (a group smaller than the network runs as one flat ring; a message across "
                           "several dimensions is charged on the lowest)";
  if (!across) return note + "; no group spans several dimensions";
  note += "; first group across dimensions: \"" + across->name + "\" = {";
  const size_t shown = std::min<size_t>(across->ranks.size(), 8);
  for (size_t i = 0; i < shown; ++i) note += (i ? ", " : "") + std::to_string(across->ranks[i]);
  if (shown < across->ranks.size()) note += ", ... (" + std::to_string(across->ranks.size()) + " ranks)";
  return note + "}";
}

// The report's note on a heterogeneity file: how many NPUs and links it changes.
std::string HeterogeneityNote(const Heterogeneity& h) {
  return "heterogeneity: " + std::to_string(h.compute_speed.size()) + " NPU(s) at their own compute speed, " +
         std::to_string(h.link.size()) + " NPU link(s) at their own bandwidth, from " + h.path;
}

}  // namespace

// A symmetric run's totals stand for every rank.
uint64_t Simulation::TotalsScale() const { return symmetric_ ? static_cast<uint64_t>(spec_.npus) : 1; }

// The run's description and its totals.
RunReport Simulation::ReportTotals() const {
  const Executor& exec = *exec_;
  const MemoryBackend& memory = *memory_;
  const uint64_t k = TotalsScale();
  RunReport rep;
  rep.backend = spec_.run.backend;
  rep.npus = spec_.npus;
  rep.iterations = spec_.run.iterations;
  rep.events = queue_.Executed();
  rep.messages = classes_.use ? engine_->class_messages() : engine_->messages_sent() * k;
  rep.rank_classes = classes_.use ? classes_.map.num_classes() : 0;
  rep.symmetric = symmetric_;
  rep.memory_backend = spec_.memory.backend;
  rep.capacity_tracked = spec_.memory.capacity.enabled();
  rep.local_capacity_bytes = spec_.memory.capacity.local_capacity;
  rep.remote_capacity_bytes = spec_.memory.capacity.remote_capacity;
  rep.peak_remote_bytes = exec.remote_peak();
  rep.warnings = exec.warnings();
  rep.memory_accesses = memory.stats().accesses * k;
  rep.memory_bytes = memory.stats().bytes * k;
  rep.memory_wait_ns = memory.stats().wait_ns * k;
  rep.symmetry_note = symmetry_note_;
  rep.group_collectives = GroupCollectivesNote(spec_.options, *engine_, topology_);
  if (!spec_.groups_note.empty()) rep.notes.push_back("communicator groups: " + spec_.groups_note);
  if (!spec_.heterogeneity.empty()) rep.notes.push_back(HeterogeneityNote(spec_.heterogeneity));
  for (std::string& note : GraphNotes(exec, *engine_, spec_.system.roofline_enabled)) rep.notes.push_back(note);
  rep.config_hash = SpecHash(spec_);
  rep.config_json = SpecConfigJson(spec_);
  return rep;
}

// A generated workload's figures over the iteration time (docs/report.md, "A
// generated run"). MFU = model FLOPs / (NPUs x iteration time x device peak),
// HFU the same with the FLOPs the compute nodes execute. The device is the
// system configuration's "device", else the generator's --device; none: no MFU.
GeneratedReport Simulation::ReportGenerated(Tick finished) const {
  GeneratedReport g;
  const WorkloadFigures* f = spec_.source ? spec_.source->Figures() : nullptr;
  if (!f) return g;
  g.present = true;
  g.model_flops = f->model_flops;
  g.hardware_flops = f->hardware_flops;
  g.iteration_s = NsToSeconds(static_cast<double>(finished) / std::max(1, spec_.run.iterations));
  if (!spec_.system.device.empty()) {
    if (auto d = gen::FindDevice(spec_.system.device); d.ok()) {
      g.device = spec_.system.device;  // a preset's name or a device YAML file
      g.peak_tflops = d->peak_tflops;
      g.device_from = "system configuration";
    }
  } else if (!f->device.empty()) {
    g.device = f->device;
    g.peak_tflops = f->device_peak_tflops;
    g.device_from = "generator's --device";
  }
  // In the order explore/sweep_metrics.cc multiplies, so a sweep's row and the report agree to the bit.
  const double denominator = spec_.npus * g.peak_tflops * kFlopsPerTflop * g.iteration_s;
  if (g.device.empty()) {
    g.no_mfu = "the system configuration names no device (orrery gen --device=NAME --system-out=F.json writes one)";
  } else if (f->model_flops.empty()) {
    g.no_mfu = "the generator gives no model FLOPs for this model";
  } else if (denominator > 0) {
    g.mfu = f->model_flops_d / denominator;
    g.hfu = f->hardware_flops_d / denominator;
  } else {
    g.no_mfu = "the iteration took no time";
  }
  g.tokens_per_iteration = f->tokens;
  if (f->tokens > 0 && g.iteration_s > 0) g.tokens_per_s = static_cast<double>(f->tokens) / g.iteration_s;
  g.memory_bytes = f->memory_bytes;
  g.memory_stage = f->memory_stage;
  return g;
}

// Every rank's time split (a simulated rank's, or its representative's); `finished` the latest.
std::vector<NpuReport> Simulation::ReportNpus(Tick* finished) const {
  const Executor& exec = *exec_;
  std::vector<NpuReport> out;
  for (int r = 0; r < spec_.npus; ++r) {
    const auto& s = exec.npus()[symmetric_ ? 0 : classes_.use ? classes_.map.RepOf(r) : r];
    NpuReport n;
    n.rank = r;
    n.finished_ns = s.finish;
    n.compute_ns = s.compute;
    n.comm_ns = s.comm;
    n.remote_mem_ns = s.mem;
    n.peak_local_bytes = s.local_peak;
    // compute + exposed_comm + mem_stall + peer_wait + idle = finished (docs/report.md).
    ORRERY_CHECK(s.compute + s.mem_stall <= s.busy && s.busy + s.peer_wait + s.cpu <= s.finish,
                 "time categories of a rank overlap");
    n.mem_stall_ns = s.mem_stall;
    n.exposed_comm_ns = s.busy - s.compute - s.mem_stall;
    n.peer_wait_ns = s.peer_wait;
    n.cpu_ns = s.cpu;
    n.idle_ns = s.finish - s.busy - s.peer_wait - s.cpu;
    *finished = std::max(*finished, n.finished_ns);
    out.push_back(n);
  }
  return out;
}

// Dimension `d`'s traffic and its links' utilisation over the run's `finished` time.
DimReport Simulation::ReportDim(int d, Tick finished) const {
  const uint64_t k = TotalsScale();
  const auto& stats = backend_->dim_stats();
  const Dim& x = topology_.dims()[d];
  const DimStats& sw = engine_->switch_stats()[d];
  DimReport dr{BlockName(x.block),
               x.npus,
               x.bandwidth_gbps,
               x.latency_ns,
               (stats[d].messages + sw.messages) * k,
               (stats[d].bytes + sw.bytes) * k,
               stats[d].busy_ns * k};
  if (classes_.use) {  // the representatives' traffic stands for their classes'
    const DimStats& extra = engine_->class_extra_stats()[d];
    dr.messages += extra.messages;
    dr.bytes += extra.bytes;
    dr.busy_ns += extra.busy_ns;
  }
  const double n = spec_.npus, p = x.npus;
  switch (x.block) {
    case Block::kRing: dr.directed_links = 2 * n; break;
    case Block::kRingUni: dr.directed_links = n; break;
    case Block::kMesh: dr.directed_links = 2 * n * (p - 1) / p; break;
    case Block::kFullyConnected: dr.directed_links = n * (p - 1); break;
    case Block::kSwitch: dr.directed_links = 2 * n; break;
  }
  dr.utilization = finished ? static_cast<double>(dr.busy_ns) / (dr.directed_links * static_cast<double>(finished)) : 0;
  return dr;
}

// Every simulated rank's collectives, by rank, and which simulated rank each rank copies.
void Simulation::AddAllCollectives(RunReport& rep) const {
  if (!spec_.observe.all_collectives) return;
  const Executor& exec = *exec_;
  std::vector<CollectiveReport>& out = rep.all_collectives.simulated;
  out.reserve(exec.all_collectives().size());
  for (const RankCollective& c : exec.all_collectives()) {
    const WorkNode& n = exec.npus()[c.rank].graph.nodes[c.idx];
    out.push_back(CollectiveReport{c.rank, n.id, n.name, CollectiveName(n.collective), n.comm_size,
                                   exec.algorithms()[c.algorithm], c.start, c.end});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const CollectiveReport& a, const CollectiveReport& b) { return a.rank < b.rank; });
  std::vector<int32_t>& source = rep.all_collectives.source;
  source.resize(spec_.npus);
  for (int r = 0; r < spec_.npus; ++r) source[r] = symmetric_ ? 0 : classes_.use ? classes_.map.RepOf(r) : r;
}

// With rank classes: each class's representative, members (as ranges) and finished time.
void Simulation::AddClasses(RunReport& rep) const {
  if (!classes_.use) return;
  const RankClassMap& map = classes_.map;
  rep.classes.resize(map.num_classes());
  std::vector<int> from(map.num_classes(), -1), last(map.num_classes(), -1);  // the range being built
  auto close = [&](int c) {
    if (from[c] < 0) return;
    std::string& s = rep.classes[c].ranks;
    s += (s.empty() ? "" : ",") + std::to_string(from[c]) + (last[c] > from[c] ? "-" + std::to_string(last[c]) : "");
  };
  for (int r = 0; r < static_cast<int>(map.class_of.size()); ++r) {
    const int c = map.class_of[r];
    if (last[c] != r - 1 || from[c] < 0) {
      close(c);
      from[c] = r;
    }
    last[c] = r;
  }
  for (int c = 0; c < map.num_classes(); ++c) {
    close(c);
    RankClassReport& k = rep.classes[c];
    k.id = c;
    k.representative = map.rep[c];
    k.members = map.size[c];
    k.finished_ns = exec_->npus()[map.rep[c]].finish;
  }
}

// The links' statistics, busiest first (a remote backend may fail while asked).
Status Simulation::ReportLinks(RunReport* rep) {
  rep->links = backend_->Links();
  if (!backend_failure_.ok()) return backend_failure_;  // a remote peer asked for its links
  if (rep->links.empty()) {
    rep->links_note = rep->messages == 0 ? "none (no message crossed the network)"
                                         : "none (backend " + spec_.run.backend + " has no per-link statistics)";
  }
  std::stable_sort(rep->links.begin(), rep->links.end(),
                   [](const LinkStat& a, const LinkStat& b) { return a.busy_ns > b.busy_ns; });
  return Status::Ok();
}

BackendRegistry DefaultBackends() {
  BackendRegistry r;
  RegisterBuiltinBackends(&r);
  return r;
}

Result<RunReport> RunSpec(const Spec& spec, const Registries& registries, ProgressMeter* progress, RunStop* stop) {
  auto stopped = [stop](const char* where) {
    stop->stopped = true;
    return Status::Env("stopped at " + stop->reason + " " + where);
  };
  if (stop && stop->active() && stop->Due()) return stopped("before building the simulation");
  auto sim = Simulation::Build(spec, registries);
  if (!sim.ok()) return sim.status();
  if (stop && stop->active() && stop->Due()) return stopped("before running the simulation");
  if (Status st = sim.value()->Run(progress, stop); !st.ok()) return st;
  return sim.value()->Report();
}

// The stages in one call (declared in run/run.h).
Result<RunReport> RunSimulation(const RunConfig& config, const BackendRegistry& backends,
                                const CollectiveRegistry* algorithms, const MemoryRegistry* memories) {
  const Registries registries{&backends, algorithms, memories};
  auto spec = ResolveSpec(config, registries);
  if (!spec.ok()) return spec.status();
  return RunSpec(spec.value(), registries);
}

}  // namespace orrery
