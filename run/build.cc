// BuildSimulation: a Spec made into the objects that simulate it.
#include "run/build.h"

#include <map>

#include "core/units.h"
#include "memory/backend.h"
#include "run/class_observers.h"
#include "run/rank_classes.h"
#include "run/run_budget.h"
#include "run/symmetry.h"
#include "workload/collective_check.h"
#include "workload/graph.h"

namespace orrery {

Simulation::Simulation(const Spec& spec) : spec_(spec), topology_(spec.dims) {}

Simulation::~Simulation() = default;

Result<std::unique_ptr<Simulation>> Simulation::Build(const Spec& spec, const Registries& registries) {
  std::unique_ptr<Simulation> sim(new Simulation(spec));
  if (Status st = sim->BuildParts(registries); !st.ok()) return st;
  return sim;
}

Status Simulation::BuildParts(const Registries& registries) {
  GraphLoadOptions lo;
  lo.num_npus = spec_.npus;
  lo.num_dims = topology_.num_dims();
  lo.repair_ctrl_deps = spec_.run.repair_ctrl_deps;
  lo.replay_host_collectives = spec_.run.replay_host_collectives;
  std::vector<NpuGraph> graphs;
  graphs.reserve(spec_.npus);
  if (Status st = DecideRanksToSimulate(lo, &graphs); !st.ok()) return st;
  if (Status st = CheckFitsInMemory(); !st.ok()) return st;
  auto group_index = BuildEngine();
  if (!group_index.ok()) return group_index.status();
  group_index_ = std::move(group_index.value());
  lo.groups = &group_index_;
  load_options_ = lo;
  if (Status st = LoadGraphs(lo, &graphs); !st.ok()) return st;
  if (Status st = BuildMemory(registries); !st.ok()) return st;
  if (Status st = CheckMemoryNodes(graphs); !st.ok()) return st;
  if (Status st = BuildBackend(registries); !st.ok()) return st;
  const ComputeModel cm = MakeComputeModel();
  ExecutorHooks hooks;
  if (Status st = BuildObservers(&hooks); !st.ok()) return st;
  exec_ = std::make_unique<Executor>(&queue_, engine_.get(), memory_.get(), cm, std::move(graphs), spec_.run.iterations,
                                     spec_.memory.capacity, hooks);
  if (timeline_) timeline_->Attach(exec_.get());
  if (timeline_ && classes_.use) {
    // The representatives' graphs now live in the executor.
    for (int r : timeline_->selected()) {
      if (classes_.map.RepOf(r) == r) class_graph_of_[r] = &exec_->npus()[r].graph;
    }
  }
  mem_sink_.to = exec_.get();
  return Status::Ok();
}

// Symmetry is decided before anything is built: one representative rank when
// the configuration allows it and every rank's graph equals rank 0's
// (run/symmetry.h: reads rank 0, kept, and compares the others).
Status Simulation::DecideRanksToSimulate(const GraphLoadOptions& lo, std::vector<NpuGraph>* graphs) {
  const Spec& s = spec_;
  auto load_rank = [&](int r) { return s.source->Load(r, lo); };
  auto decision = DecideSymmetry(s, load_rank, graphs);
  if (!decision.ok()) return decision.status();
  symmetric_ = decision->symmetric;
  symmetry_note_ = decision->note;
  // run/rank_classes.h: when one rank cannot stand for all, one per class may.
  if (!symmetric_ && s.run.symmetry != SymmetryMode::kOff) {
    auto cd = DecideRankClassesForRun(s, topology_, lo);
    if (!cd.ok()) return cd.status();
    classes_ = std::move(cd.value());
    if (Status st = PrepareObserversOnClasses(lo); !st.ok()) return st;
    symmetry_note_ = classes_.use ? classes_.note : symmetry_note_ + "; rank classes: " + classes_.note;
  }
  return Status::Ok();
}

// The timeline and the critical path on the classes (run/class_observers.h),
// or the full engine with the reason in the note.
Status Simulation::PrepareObserversOnClasses(GraphLoadOptions lo) {
  if (!classes_.use) return Status::Ok();
  std::map<std::string, int> index;  // as BuildEngine will number the groups: by name
  for (const auto& [name, ranks] : spec_.comm_groups) index.emplace(name, static_cast<int>(index.size()));
  lo.groups = &index;
  auto why = PrepareClassObservers(
      spec_, classes_, [&](int r) { return spec_.source->Load(r, lo); }, &shown_graphs_);
  if (!why.ok()) return why.status();
  if (why->empty()) return Status::Ok();
  classes_ = ClassDecision{};
  classes_.note = why.value();
  shown_graphs_.clear();
  return Status::Ok();
}

// The ranks simulated, their traces and the run's other state fit in this machine's memory.
Status Simulation::CheckFitsInMemory() const {
  const Spec& s = spec_;
  const int npus = s.npus;
  // With classes, the timeline's shown ranks' graphs are held too (run/class_observers.h).
  const uint64_t simulated = symmetric_ ? 1 : classes_.use ? classes_.map.num_classes() + shown_graphs_.size() : npus;
  return CheckRunFitsInMemory(EstimateRunBytes(npus, simulated,
                                               simulated == static_cast<uint64_t>(npus) ? s.trace_bytes
                                                                                        : s.trace0_bytes * simulated),
                              PhysicalMemoryBytes(), s.files.network, npus);
}

// The collective engine and its communicator groups: pg_name -> group index.
Result<std::map<std::string, int>> Simulation::BuildEngine() {
  const Spec& s = spec_;
  engine_ = std::make_unique<CollectiveEngine>(&queue_, &topology_, s.options, symmetric_);
  if (classes_.use) engine_->SetRankClasses(&classes_.map);
  if (Status st = engine_->Validate(); !st.ok()) return Status::Invalid(s.files.system + ": " + st.message());
  std::map<std::string, int> group_index;
  for (const auto& [name, ranks] : s.comm_groups) {
    auto g = engine_->AddCommGroup(name, ranks);
    if (!g.ok()) return g.status();
    group_index[name] = g.value();
  }
  return group_index;
}

// Graphs: exactly one per NPU (rank 0 may already be read).
Status Simulation::LoadGraphs(const GraphLoadOptions& lo, std::vector<NpuGraph>* graphs) {
  const int npus = spec_.npus;
  if (classes_.use) {
    // The representatives' graphs; every other rank an empty stand-in (not simulated).
    graphs->clear();
    graphs->resize(npus);
    for (NpuGraph& g : *graphs) g.rank = -1;
    for (NpuGraph& g : classes_.rep_graphs) (*graphs)[g.rank] = std::move(g);
  }
  for (int r = symmetric_ || classes_.use ? npus : static_cast<int>(graphs->size()); r < npus; ++r) {
    auto g = spec_.source->Load(r, lo);
    if (!g.ok()) return g.status();
    graphs->push_back(std::move(g.value()));
  }
  return CheckCollectiveAgreement(*graphs, *engine_);
}

// The memory backend (its name was checked by the Spec).
Status Simulation::BuildMemory(const Registries& registries) {
  const Spec& s = spec_;
  MemoryRegistry builtin;
  RegisterBuiltinMemoryBackends(&builtin);
  const MemoryRegistry& mem_registry = registries.memories ? *registries.memories : builtin;
  const MemoryRegistry::Entry* mem_entry = mem_registry.Find(s.memory.backend);
  if (!mem_entry)
    return Status::Invalid(s.memory.source + ": backend = \"" + s.memory.backend + "\": unknown memory backend");
  MemoryContext mctx;
  mctx.queue = &queue_;
  mctx.npus = s.npus;
  mctx.sink = &mem_sink_;
  mctx.done_kind = 1;
  mctx.params = &s.memory.params;
  mctx.source = s.memory.source;
  mctx.lines = &s.memory.lines;
  auto memory = mem_entry->factory(mctx);
  if (!memory.ok()) {
    // Built-in backends name the file themselves; a plugin's message gets it prefixed.
    const std::string& m = memory.status().message();
    if (m.rfind(s.memory.source, 0) == 0) return memory.status();
    return Status::Invalid(s.memory.source + ": " + m);
  }
  memory_ = std::move(memory.value());
  return Status::Ok();
}

// Every memory node has the tier it accesses: local bandwidth, or a remote memory.
Status Simulation::CheckMemoryNodes(const std::vector<NpuGraph>& graphs) const {
  const Spec& s = spec_;
  for (const auto& g : graphs) {
    for (const auto& n : g.nodes) {
      if ((n.kind == NodeKind::kMemLoad || n.kind == NodeKind::kMemStore) && n.local_tier) {
        if (!(s.system.local_mem_bw > 0)) {
          return Status::Invalid(g.path + ": node " + std::to_string(n.id) + " (rank " + std::to_string(g.rank) +
                                 ") accesses the local tier but the system configuration has no \"local-mem-bw\"");
        }
        continue;
      }
      if ((n.kind == NodeKind::kMemLoad || n.kind == NodeKind::kMemStore) && !memory_->enabled()) {
        return Status::Invalid(g.path + ": node " + std::to_string(n.id) + " (rank " + std::to_string(g.rank) +
                               ") is a " + (n.kind == NodeKind::kMemLoad ? "MEM_LOAD_NODE" : "MEM_STORE_NODE") +
                               " but no remote memory is configured (memory-type NO_MEMORY_EXPANSION, " +
                               s.memory.source +
                               "); give a PER_NPU, PER_NODE or POOL remote memory, or --memory-configuration");
      }
    }
  }
  return Status::Ok();
}

// The network backend, delivering to the collective engine.
Status Simulation::BuildBackend(const Registries& registries) {
  const Spec& s = spec_;
  BackendContext ctx;
  ctx.queue = &queue_;
  ctx.topology = &topology_;
  ctx.sink = engine_.get();
  ctx.delivered_kind = CollectiveEngine::kDelivered;
  // The analytical backend charges a message across several dimensions as the group-collective model says.
  backend_params_ = s.run.backend_params;
  backend_params_[kMultiDimChargeParam] = s.options.hierarchical_groups ? "every" : "lowest";
  ctx.params = &backend_params_;
  ctx.failure = &backend_failure_;
  if (!s.heterogeneity.link.empty()) ctx.heterogeneity = &s.heterogeneity;
  auto backend = registries.backends->Find(s.run.backend)->factory(ctx);
  if (!backend.ok()) return backend.status();
  backend_ = std::move(backend.value());
  engine_->SetBackend(backend_.get());
  return Status::Ok();
}

ComputeModel Simulation::MakeComputeModel() const {
  const Spec& s = spec_;
  ComputeModel cm;
  cm.roofline = s.system.roofline_enabled;
  cm.peak_flops_per_s = TflopsToFlopsPerSecond(s.system.peak_perf_tflops);
  cm.mem_bytes_per_s = BytesPerNsToBytesPerSecond(s.system.local_mem_bw);
  cm.local_bytes_per_ns = s.system.local_mem_bw;
  cm.local_latency_ns = s.memory.local_latency_ns;
  cm.pool_via_dim = s.memory.pool_via_dim;
  if (!s.heterogeneity.compute_speed.empty()) cm.heterogeneity = &s.heterogeneity;
  cm.collective_sm_fraction = s.system.collective_sm_fraction;
  return cm;
}

// The critical-path recorder and the timeline, as the Spec asks.
Status Simulation::BuildObservers(ExecutorHooks* hooks) {
  const Spec& s = spec_;
  if (s.observe.critical_path)
    recorder_ = std::make_unique<NodeRecorder>(symmetric_ ? 1 : s.npus, engine_->num_groups());
  hooks->recorder = recorder_.get();
  hooks->all_collectives = s.observe.all_collectives;
  if (recorder_) engine_->AddPhaseObserver(recorder_.get());
  if (!s.observe.timeline_path.empty()) {
    auto opened = TimelineWriter::Open({s.observe.timeline_path, s.observe.timeline_ranks, s.observe.timeline_window},
                                       s.npus, symmetric_);
    if (!opened.ok()) return opened.status();
    timeline_ = std::move(opened.value());
    if (classes_.use) timeline_->SetClasses(TimelineClassView());
    hooks->observer = timeline_.get();
    engine_->AddPhaseObserver(timeline_.get());
  }
  return Status::Ok();
}

// The timeline's view of a run by classes: each shown rank's own graph (a
// representative's is filled in once the executor holds it).
TimelineClasses Simulation::TimelineClassView() {
  class_graph_of_.assign(spec_.npus, nullptr);
  for (const NpuGraph& g : shown_graphs_) class_graph_of_[g.rank] = &g;
  return TimelineClasses{&classes_.map, &class_graph_of_};
}

namespace {

// StoppableSource's source: building a large workload (the symmetry and
// rank-class decisions load graphs and list peers for many ranks) can take
// far longer than the event loop's checks allow.
class Stoppable : public GraphSource {
 public:
  Stoppable(std::shared_ptr<const GraphSource> inner, RunStop* stop) : inner_(std::move(inner)), stop_(stop) {}
  std::string Describe() const override { return inner_->Describe(); }
  Status Check(int npus, const std::string& network, uint64_t* rank0_bytes, uint64_t* total_bytes) const override {
    return inner_->Check(npus, network, rank0_bytes, total_bytes);
  }
  Result<NpuGraph> Load(int rank, const GraphLoadOptions& options) const override {
    if (stop_->Fire()) {
      return Status::Env("stopped at " + stop_->reason + " while building (before loading rank " +
                         std::to_string(rank) + "'s graph)");
    }
    return inner_->Load(rank, options);
  }
  bool SameInputAsRank0(int rank) const override { return inner_->SameInputAsRank0(rank); }
  const std::vector<int>* DeclaredClasses() const override { return inner_->DeclaredClasses(); }
  bool RankPeers(int rank, std::vector<int>* peers) const override {
    if (!stop_->Fire()) return inner_->RankPeers(rank, peers);
    peers->clear();  // never used: the build ends at its next graph, or RunSpec before running
    return inner_->DeclaredClasses() != nullptr;
  }
  std::map<std::string, std::vector<int>> CommGroups() const override { return inner_->CommGroups(); }
  Result<SourceGroups> ProcessGroups(int npus, const SourceDigest& digest, bool rank0_only) const override {
    return inner_->ProcessGroups(npus, digest, rank0_only);
  }
  Result<SourceDigest> Digest(int npus) const override { return inner_->Digest(npus); }
  const WorkloadFigures* Figures() const override { return inner_->Figures(); }

 private:
  std::shared_ptr<const GraphSource> inner_;
  RunStop* stop_;
};

}  // namespace

std::shared_ptr<const GraphSource> StoppableSource(std::shared_ptr<const GraphSource> inner, RunStop* stop) {
  return std::make_shared<Stoppable>(std::move(inner), stop);
}

}  // namespace orrery
