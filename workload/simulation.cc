#include "workload/simulation.h"


#include <algorithm>
#include <cmath>
#include <map>
#include <memory>

#include "core/limits.h"
#include "core/parse.h"
#include "extern/astra_config.h"
#include "extern/et_io.h"
#include "extern/json_util.h"
#include "workload/graph.h"
#include "memory/backend.h"
#include "network/notation.h"
#include "system/collective_engine.h"
#include "workload/collective_check.h"
#include "workload/executor.h"
#include "workload/run_budget.h"
#include "workload/graph_source.h"
#include "workload/rank_classes.h"
#include "workload/symmetry.h"
#include "workload/timeline.h"

namespace orrery {

BackendRegistry DefaultBackends() {
  BackendRegistry r;
  RegisterBuiltinBackends(&r);
  return r;
}

namespace {

std::vector<AlgoSpec> MapImpls(const std::vector<CollectiveImplSpec>& in, const CollectiveRegistry* algorithms) {
  std::vector<AlgoSpec> out;
  for (const auto& c : in) {
    AlgoSpec a;
    a.name = c.name;
    a.window = c.window;
    switch (c.kind) {
      case CollectiveImplKind::kRing: a.kind = AlgoKind::kRing; break;
      case CollectiveImplKind::kOneRing: a.kind = AlgoKind::kRing; a.one = true; break;
      case CollectiveImplKind::kDirect: a.kind = AlgoKind::kDirect; break;
      case CollectiveImplKind::kOneDirect: a.kind = AlgoKind::kDirect; a.one = true; break;
      case CollectiveImplKind::kHalvingDoubling: a.kind = AlgoKind::kHalvingDoubling; break;
      case CollectiveImplKind::kOneHalvingDoubling: a.kind = AlgoKind::kHalvingDoubling; a.one = true; break;
      case CollectiveImplKind::kDoubleBinaryTree: a.kind = AlgoKind::kDoubleBinaryTree; break;
      case CollectiveImplKind::kCustom: a.kind = AlgoKind::kCustom; break;
      case CollectiveImplKind::kInSwitch: a.kind = AlgoKind::kInSwitch; break;
      case CollectiveImplKind::kPlugin:
        a.kind = AlgoKind::kPlugin;
        a.plugin = algorithms->Find(c.name);
        break;
    }
    out.push_back(a);
  }
  return out;
}

// Reads a custom collective algorithm: PREFIX.<rank>.et for every rank.
Result<std::vector<CustomGraph>> LoadCustomGraphs(const std::string& prefix, int npus, int dims,
                                                  const std::string& system_path) {
  std::vector<CustomGraph> out(npus);
  GraphLoadOptions lo;
  lo.num_npus = npus;
  lo.num_dims = dims;
  for (int r = 0; r < npus; ++r) {
    const std::string path = prefix + "." + std::to_string(r) + ".et";
    auto g = LoadNpuGraph(path, r, lo);
    if (!g.ok()) {
      return Status::Invalid(system_path + ": custom collective \"" + prefix + "\" for rank " + std::to_string(r) +
                             ": " + g.status().message());
    }
    CustomGraph& cg = out[r];
    cg.resize(g->nodes.size());
    for (size_t i = 0; i < g->nodes.size(); ++i) {
      const WorkNode& n = g->nodes[i];
      CustomOp& op = cg[i];
      switch (n.kind) {
        case NodeKind::kSend: op.kind = CustomOp::kSend; op.peer = n.comm_dst; break;
        case NodeKind::kRecv: op.kind = CustomOp::kRecv; op.peer = n.comm_src; break;
        case NodeKind::kComp: op.kind = CustomOp::kComp; break;
        case NodeKind::kMetadata:
        case NodeKind::kInvalid: op.kind = CustomOp::kNop; break;
        default:
          return Status::Invalid(path + ": node " + std::to_string(n.id) + ": a custom collective may contain only "
                                 "COMM_SEND, COMM_RECV, COMP, METADATA and INVALID nodes, not " +
                                 NodeTypeName(static_cast<int>(n.kind)));
      }
      op.bytes = n.comm_size;
      op.tag = n.comm_tag;
      op.duration_ns = SatMul(n.duration_micros, 1000);  // past 2^64 ns: the queue reports overflow
      op.num_deps = n.num_deps;
      op.children.assign(g->children.begin() + n.child_begin, g->children.begin() + n.child_end);
    }
  }
  return out;
}

}  // namespace

Result<std::vector<Dim>> ReadNetworkDims(const std::string& path) {
  // A YAML file (ASTRA-sim's or Orrery's), or the compact notation.
  if (path.find('(') != std::string::npos && !ReadTextFile(path).ok()) return ParseTopologyNotation(path);
  auto net = ReadAstraNetworkYaml(path);
  if (!net.ok()) return net.status();
  std::vector<Dim> dims;
  for (const auto& d : net->dims) {
    Dim x;
    if (!BlockFromName(d.block, &x.block)) return Status::Invalid(path + ": unknown block " + d.block);
    x.npus = d.npus;
    x.bandwidth_gbps = d.bandwidth_gbps;
    x.latency_ns = d.latency_ns;
    x.links_per_npu = d.links_per_npu;
    dims.push_back(x);
  }
  return dims;
}

Result<RunReport> RunSimulation(const RunConfig& config, const BackendRegistry& backends,
                                const CollectiveRegistry* algorithms, const MemoryRegistry* memories) {
  if (config.iterations < 1) return Status::Invalid("--iterations = " + std::to_string(config.iterations) + ": must be >= 1");
  const BackendRegistry::Entry* backend_entry = backends.Find(config.backend);
  if (!backend_entry) {
    return Status::Invalid("--network-backend = \"" + config.backend + "\": unknown backend; valid: " +
                           JoinStrings(backends.Names(), ", "));
  }
  if (config.network_path.empty()) return Status::Invalid("--network-configuration is required (ASTRA-sim network YAML)");
  if (config.system_path.empty()) return Status::Invalid("--system-configuration is required (ASTRA-sim system JSON)");
  if (config.source && !config.workload_prefix.empty()) {
    return Status::Invalid("--workload-configuration = \"" + config.workload_prefix +
                           "\": give either trace files or a generated workload (" + config.source->Describe() + "), not both");
  }
  if (!config.source && config.workload_prefix.empty()) {
    return Status::Invalid("--workload-configuration is required (trace prefix)");
  }
  std::shared_ptr<const GraphSource> source = config.source;
  if (!source) source = TraceFileSource(config.workload_prefix);

  std::vector<Dim> dims;
  if (config.network_dims) {
    dims = *config.network_dims;
  } else {
    auto network = ReadNetworkDims(config.network_path);
    if (!network.ok()) return network.status();
    dims = std::move(network.value());
  }
  Result<AstraSystemConfig> sys = config.system ? Result<AstraSystemConfig>(*config.system)
                                                : ReadAstraSystemJson(config.system_path, algorithms ? algorithms->Names()
                                                                                                    : std::vector<std::string>{});
  if (!sys.ok()) return sys.status();
  AstraRemoteMemoryConfig mem;
  if (!config.memory_path.empty()) {
    auto m = ReadAstraRemoteMemoryJson(config.memory_path);
    if (!m.ok()) return m.status();
    mem = m.value();
  }
  Topology topology(dims);
  const int npus = topology.npus();
  if (npus < 2) return Status::Invalid(config.network_path + ": the network has " + std::to_string(npus) + " NPU(s); at least 2 are needed");

  SystemOptions so;
  so.lifo = sys->lifo;
  so.endpoint_delay_ns = sys->endpoint_delay_ns;
  if (config.injection_scale != 1.0 && sys->endpoint_delay_given) {  // ASTRA-sim leaves its default 10 ns unscaled
    auto d = DoubleToUint(std::trunc(static_cast<double>(sys->endpoint_delay_ns) * config.injection_scale),
                          Where{config.system_path, 0, "endpoint-delay x --injection-scale"}, 0, uint64_t{1} << 50);
    if (!d.ok()) return d.status();
    so.endpoint_delay_ns = d.value();
  }
  so.active_chunks_per_dimension = sys->active_chunks_per_dimension;
  so.preferred_dataset_splits = sys->preferred_dataset_splits;
  so.local_bw_aware = sys->local_bw_aware;
  so.themis = sys->inter_dimension_scheduling == "themis";
  so.smallest_first = sys->intra_dimension_scheduling == "SmallestFirst";
  so.local_mem_bw = sys->local_mem_bw;
  so.in_switch_reduction_bw = sys->in_switch_reduction_bw;
  so.all_reduce = MapImpls(sys->all_reduce, algorithms);
  so.all_gather = MapImpls(sys->all_gather, algorithms);
  so.reduce_scatter = MapImpls(sys->reduce_scatter, algorithms);
  so.all_to_all = MapImpls(sys->all_to_all, algorithms);
  for (auto* list : {&so.all_reduce, &so.all_gather, &so.reduce_scatter, &so.all_to_all}) {
    for (auto& a : *list) {
      if (a.kind != AlgoKind::kCustom) continue;
      auto graphs = LoadCustomGraphs(a.name, npus, topology.num_dims(), config.system_path);
      if (!graphs.ok()) return graphs.status();
      a.custom = std::make_shared<const std::vector<CustomGraph>>(std::move(graphs.value()));
    }
  }

  // Symmetry is decided before anything is built: one representative rank when
  // the configuration allows it and every trace equals rank 0's.
  if (config.symmetry != "auto" && config.symmetry != "off") {
    return Status::Invalid("--symmetry = \"" + config.symmetry + "\": valid: auto, off");
  }
  GraphLoadOptions lo;
  lo.num_npus = npus;
  lo.num_dims = topology.num_dims();
  std::vector<NpuGraph> graphs;
  graphs.reserve(npus);
  // Communicator groups: from the JSON file, or defined by the source.
  std::map<std::string, std::vector<int>> source_groups = source->CommGroups();
  if (!config.comm_group_path.empty() && !source_groups.empty()) {
    return Status::Invalid("--comm-group-configuration = \"" + config.comm_group_path + "\": " + source->Describe() +
                           " defines its own communicator groups; give one or the other");
  }
  const bool has_groups = !config.comm_group_path.empty() || !source_groups.empty();
  auto load_rank = [&](int r) { return source->Load(r, lo); };
  // Cheap checks before anything per NPU is built: the source has one graph
  // per NPU (their sizes feed the memory estimate below).
  uint64_t trace_bytes = 0, trace0_bytes = 0;
  if (Status st = source->Check(npus, config.network_path, &trace0_bytes, &trace_bytes); !st.ok()) return st;
  // workload/symmetry.h: reads rank 0 (kept) and compares every rank's graph with it.
  auto decision = DecideSymmetry(config, so, mem.kind, has_groups, npus, *source, load_rank, &graphs);
  if (!decision.ok()) return decision.status();
  const bool symmetric = decision->symmetric;
  std::string symmetry_note = decision->note;
  // workload/rank_classes.h: when one rank cannot stand for all, one per class may.
  ClassDecision classes;
  if (!symmetric && config.symmetry != "off") {
    auto cd = DecideRankClassesForRun(config, so, mem.kind, topology, *source, lo);
    if (!cd.ok()) return cd.status();
    classes = std::move(cd.value());
    symmetry_note = classes.use ? classes.note : symmetry_note + "; rank classes: " + classes.note;
  }
  const uint64_t simulated = symmetric ? 1 : classes.use ? classes.map.num_classes() : npus;

  if (Status st = CheckRunFitsInMemory(EstimateRunBytes(npus, simulated, simulated == static_cast<uint64_t>(npus)
                                                                              ? trace_bytes : trace0_bytes * simulated),
                                       PhysicalMemoryBytes(), config.network_path, npus);
      !st.ok()) {
    return st;
  }
  EventQueue queue;
  CollectiveEngine engine(&queue, &topology, so, symmetric);
  if (classes.use) engine.SetRankClasses(&classes.map);
  if (Status st = engine.Validate(); !st.ok()) return Status::Invalid(config.system_path + ": " + st.message());

  std::map<std::string, int> group_index;
  if (!config.comm_group_path.empty()) {
    auto groups = ReadCommGroupJson(config.comm_group_path, npus);
    if (!groups.ok()) return groups.status();
    source_groups = std::move(groups.value());
  }
  for (const auto& [name, ranks] : source_groups) {
    auto g = engine.AddCommGroup(name, ranks);
    if (!g.ok()) return g.status();
    group_index[name] = g.value();
  }

  // Traces: exactly one per NPU (rank 0 may already be read).
  lo.groups = &group_index;
  if (classes.use) {
    // The representatives' graphs; every other rank an empty stand-in (not simulated).
    graphs.clear();
    graphs.resize(npus);
    for (NpuGraph& g : graphs) g.rank = -1;
    for (NpuGraph& g : classes.rep_graphs) graphs[g.rank] = std::move(g);
  }
  for (int r = symmetric || classes.use ? npus : static_cast<int>(graphs.size()); r < npus; ++r) {
    auto g = load_rank(r);
    if (!g.ok()) return g.status();
    graphs.push_back(std::move(g.value()));
  }
  if (Status st = CheckCollectiveAgreement(graphs, engine); !st.ok()) return st;
  // The memory backend: Orrery's memory YAML, or ASTRA-sim's remote-memory JSON.
  CapacityOptions capacity;
  capacity.allow_oversubscription = config.allow_oversubscription;
  Tick local_latency = 0;
  int pool_via_dim = -1;
  MemoryRegistry builtin_memories;
  RegisterBuiltinMemoryBackends(&builtin_memories);
  const MemoryRegistry& mem_registry = memories ? *memories : builtin_memories;
  std::map<std::string, std::string> mem_params;
  std::map<std::string, int> mem_lines;  // memory YAML: each key's line
  std::string mem_backend = "astra-sim";
  std::string mem_source = config.memory_path.empty() ? "no --remote-memory-configuration" : config.memory_path;
  if (!config.memory_config_path.empty()) {
    auto flat = ReadFlatYaml(config.memory_config_path);
    if (!flat.ok()) return flat.status();
    mem_params = flat->values;
    mem_lines = flat->lines;
    mem_backend = mem_params.count("backend") ? mem_params["backend"] : "pool";
    auto at = [&](const std::string& key) { return Where{config.memory_config_path, mem_lines[key], key}; };
    // Capacity settings belong to Orrery, not to the backend.
    if (auto it = mem_params.find("via_network_dim"); it != mem_params.end()) {
      auto v = ParseInt(it->second, at(it->first), 0, topology.num_dims() - 1);
      if (!v.ok()) {
        return ValueError(at(it->first), it->second,
                          "must name a network dimension, 0.." + std::to_string(topology.num_dims() - 1),
                          DescribeIntRange(0, topology.num_dims() - 1));
      }
      pool_via_dim = static_cast<int>(v.value());
      mem_params.erase(it);
    }
    if (auto it = mem_params.find("local_latency_ns"); it != mem_params.end()) {
      auto v = ParseUint(it->second, at(it->first), 0, kMaxLatencyNs);
      if (!v.ok()) return v.status();
      local_latency = v.value();
      mem_params.erase(it);
    }
    for (const char* key : {"local_capacity_bytes", "remote_capacity_bytes", "resident_bytes"}) {
      auto it = mem_params.find(key);
      if (it == mem_params.end()) continue;
      const bool resident = std::string(key) == "resident_bytes";
      // A capacity must be positive (omit it for unlimited); resident bytes may be 0.
      auto v = ParseUint(it->second, at(key), 0, kMaxCapacityBytes);
      if (!v.ok()) return v.status();
      if (v.value() == 0 && !resident) {
        return ValueError(at(key), "0", "a capacity must be positive (omit it for unlimited)",
                          DescribeUintRange(1, kMaxCapacityBytes));
      }
      if (std::string(key) == "local_capacity_bytes") capacity.local_capacity = v.value();
      if (std::string(key) == "remote_capacity_bytes") capacity.remote_capacity = v.value();
      if (resident) capacity.resident = v.value();
      mem_params.erase(it);
    }
    mem_source = config.memory_config_path;
  } else {
    static const char* kTypes[] = {"NO_MEMORY_EXPANSION", "PER_NPU_MEMORY_EXPANSION", "PER_NODE_MEMORY_EXPANSION",
                                   "MEMORY_POOL"};
    mem_params["memory-type"] = kTypes[static_cast<int>(mem.kind)];
    mem_params["remote-mem-latency"] = std::to_string(mem.latency_ns);
    char bw[64];
    std::snprintf(bw, sizeof(bw), "%.17g", mem.bandwidth_bytes_per_ns);
    mem_params["remote-mem-bw"] = bw;
    mem_params["num-npus-per-node"] = std::to_string(mem.npus_per_node > 0 ? mem.npus_per_node : 1);
    if (mem.kind == RemoteMemoryKind::kPerNode && mem.num_nodes * mem.npus_per_node != npus) {
      return Status::Invalid(config.memory_path + ": num-nodes (" + std::to_string(mem.num_nodes) +
                             ") x num-npus-per-node (" + std::to_string(mem.npus_per_node) +
                             ") must equal the network's " + std::to_string(npus) + " NPUs");
    }
  }
  const MemoryRegistry::Entry* mem_entry = mem_registry.Find(mem_backend);
  if (!mem_entry) {
    return Status::Invalid(mem_source + ": backend = \"" + mem_backend + "\": unknown memory backend; valid: " +
                           JoinStrings(mem_registry.Names(), ", "));
  }
  // The executor is the sink of memory completions; it is created below, so a
  // forwarding handler stands in until then.
  struct Forward : EventHandler {
    EventHandler* to = nullptr;
    void HandleEvent(uint32_t kind, uint64_t arg) override { to->HandleEvent(kind, arg); }
  } mem_sink;
  MemoryContext mctx;
  mctx.queue = &queue;
  mctx.npus = npus;
  mctx.sink = &mem_sink;
  mctx.done_kind = 1;
  mctx.params = &mem_params;
  mctx.source = mem_source;
  mctx.lines = &mem_lines;
  auto memory_backend = mem_entry->factory(mctx);
  if (!memory_backend.ok()) {
    // Built-in backends name the file themselves; a plugin's message gets it prefixed.
    const std::string& m = memory_backend.status().message();
    if (m.rfind(mem_source, 0) == 0) return memory_backend.status();
    return Status::Invalid(mem_source + ": " + m);
  }
  MemoryBackend& memory = *memory_backend.value();
  for (const auto& g : graphs) {
    for (const auto& n : g.nodes) {
      if ((n.kind == NodeKind::kMemLoad || n.kind == NodeKind::kMemStore) && n.local_tier) {
        if (!(sys->local_mem_bw > 0)) {
          return Status::Invalid(g.path + ": node " + std::to_string(n.id) + " (rank " + std::to_string(g.rank) +
                                 ") accesses the local tier but the system configuration has no \"local-mem-bw\"");
        }
        continue;
      }
      if ((n.kind == NodeKind::kMemLoad || n.kind == NodeKind::kMemStore) && !memory.enabled()) {
        return Status::Invalid(g.path + ": node " + std::to_string(n.id) + " (rank " + std::to_string(g.rank) +
                               ") is a " + (n.kind == NodeKind::kMemLoad ? "MEM_LOAD_NODE" : "MEM_STORE_NODE") +
                               " but no remote memory is configured (memory-type NO_MEMORY_EXPANSION, " + mem_source +
                               "); give a PER_NPU, PER_NODE or POOL remote memory, or --memory-configuration");
      }
    }
  }

  BackendContext ctx;
  ctx.queue = &queue;
  ctx.topology = &topology;
  ctx.sink = &engine;
  ctx.delivered_kind = CollectiveEngine::kDelivered;
  ctx.params = &config.backend_params;
  Status backend_failure;
  ctx.failure = &backend_failure;
  auto backend = backend_entry->factory(ctx);
  if (!backend.ok()) return backend.status();
  engine.SetBackend(backend.value().get());

  ComputeModel cm;
  cm.roofline = sys->roofline_enabled;
  cm.peak_flops_per_s = sys->peak_perf_tflops * 1e12;
  cm.mem_bytes_per_s = sys->local_mem_bw * 1e9;
  cm.local_bytes_per_ns = sys->local_mem_bw;
  cm.local_latency_ns = local_latency;
  cm.pool_via_dim = pool_via_dim;
  std::unique_ptr<NodeRecorder> recorder;
  if (config.critical_path) recorder = std::make_unique<NodeRecorder>(symmetric ? 1 : npus, engine.num_groups());
  ExecutorHooks hooks;
  hooks.recorder = recorder.get();
  hooks.all_collectives = config.all_collectives;
  if (recorder) engine.AddPhaseObserver(recorder.get());
  std::unique_ptr<TimelineWriter> timeline;
  if (!config.timeline_path.empty()) {
    auto opened = TimelineWriter::Open({config.timeline_path, config.timeline_ranks, config.timeline_window}, npus,
                                       symmetric);
    if (!opened.ok()) return opened.status();
    timeline = std::move(opened.value());
    hooks.observer = timeline.get();
    engine.AddPhaseObserver(timeline.get());
  }
  Executor exec(&queue, &engine, &memory, cm, std::move(graphs), config.iterations, capacity, hooks);
  if (timeline) timeline->Attach(&exec);
  mem_sink.to = &exec;
  if (Status st = exec.Start(); !st.ok()) return st;
  while (exec.failure().ok() && backend_failure.ok() && !queue.overflowed() && queue.RunOne()) {
  }
  if (!backend_failure.ok()) return backend_failure;
  if (Status st = exec.CheckFinished(); !st.ok()) return st;
  if (timeline) {
    if (Status st = timeline->Close(); !st.ok()) return st;
  }
  {
    std::vector<std::string> stray;
    for (int r = 0; r < engine.npus(); ++r) engine.npu(r).DescribeUnmatched(&stray);
    if (!stray.empty()) {
      std::string msg = "unmatched send(s) at the end of the run:";
      for (size_t i = 0; i < stray.size() && i < 8; ++i) msg += "\n  " + stray[i];
      if (stray.size() > 8) msg += "\n  ... and " + std::to_string(stray.size() - 8) + " more";
      return Status::Invalid(msg);
    }
  }

  RunReport rep;
  rep.backend = config.backend;
  rep.npus = npus;
  rep.iterations = config.iterations;
  rep.events = queue.Executed();
  rep.messages = classes.use ? engine.class_messages() : engine.messages_sent() * (symmetric ? npus : 1);
  rep.rank_classes = classes.use ? classes.map.num_classes() : 0;
  rep.symmetric = symmetric;
  rep.memory_backend = mem_backend;
  rep.capacity_tracked = capacity.enabled();
  rep.local_capacity_bytes = capacity.local_capacity;
  rep.remote_capacity_bytes = capacity.remote_capacity;
  rep.peak_remote_bytes = exec.remote_peak();
  rep.warnings = exec.warnings();
  rep.memory_accesses = memory.stats().accesses * (symmetric ? npus : 1);
  rep.memory_bytes = memory.stats().bytes * (symmetric ? npus : 1);
  rep.memory_wait_ns = memory.stats().wait_ns * (symmetric ? npus : 1);
  rep.symmetry_note = symmetry_note;
  if (recorder) rep.critical_path = FindCriticalPath(exec, *recorder, engine, symmetric);
  for (int r = 0; r < npus; ++r) {
    const auto& s = exec.npus()[symmetric ? 0 : classes.use ? classes.map.RepOf(r) : r];
    NpuReport n;
    n.rank = r;
    n.finished_ns = s.finish;
    n.compute_ns = s.compute;
    n.comm_ns = s.comm;
    n.remote_mem_ns = s.mem;
    n.peak_local_bytes = s.local_peak;
    // compute + exposed_comm + mem_stall + idle = finished (README "The report").
    ORRERY_CHECK(s.compute + s.mem_stall <= s.busy && s.busy <= s.finish, "time categories of a rank overlap");
    n.mem_stall_ns = s.mem_stall;
    n.exposed_comm_ns = s.busy - s.compute - s.mem_stall;
    n.idle_ns = s.finish - s.busy;
    rep.per_npu.push_back(n);
  }
  for (const auto& c : exec.rank0_collectives()) {
    rep.collectives.push_back(CollectiveReport{0, c.node_id, c.name, c.type, c.bytes, c.algorithm, c.start, c.end});
  }
  const auto& stats = backend.value()->dim_stats();
  for (int d = 0; d < topology.num_dims(); ++d) {
    const Dim& x = topology.dims()[d];
    const uint64_t k = symmetric ? static_cast<uint64_t>(npus) : 1;
    const DimStats& sw = engine.switch_stats()[d];
    DimReport dr{BlockName(x.block), x.npus, x.bandwidth_gbps, x.latency_ns, (stats[d].messages + sw.messages) * k,
                 (stats[d].bytes + sw.bytes) * k, stats[d].busy_ns * k};
    if (classes.use) {  // the representatives' traffic stands for their classes'
      const DimStats& extra = engine.class_extra_stats()[d];
      dr.messages += extra.messages;
      dr.bytes += extra.bytes;
      dr.busy_ns += extra.busy_ns;
    }
    const double n = npus, p = x.npus;
    switch (x.block) {
      case Block::kRing: dr.directed_links = 2 * n; break;
      case Block::kRingUni: dr.directed_links = n; break;
      case Block::kMesh: dr.directed_links = 2 * n * (p - 1) / p; break;
      case Block::kFullyConnected: dr.directed_links = n * (p - 1); break;
      case Block::kSwitch: dr.directed_links = 2 * n; break;
    }
    Tick finished = 0;
    for (const auto& r : rep.per_npu) finished = std::max(finished, r.finished_ns);
    dr.utilization = finished ? static_cast<double>(dr.busy_ns) / (dr.directed_links * static_cast<double>(finished)) : 0;
    rep.dims.push_back(dr);
  }
  for (const RankCollective& c : exec.all_collectives()) {
    const WorkNode& n = exec.npus()[c.rank].graph.nodes[c.idx];
    rep.all_collectives.push_back(CollectiveReport{c.rank, n.id, n.name, CollectiveName(n.comm_type), n.comm_size,
                                                   exec.algorithms()[c.algorithm], c.start, c.end});
  }
  std::stable_sort(rep.all_collectives.begin(), rep.all_collectives.end(),
                   [](const CollectiveReport& a, const CollectiveReport& b) { return a.rank < b.rank; });
  if (classes.use && !rep.all_collectives.empty()) {
    // Each rank's collectives are its representative's.
    std::vector<CollectiveReport> mine;
    for (int r = 0; r < npus; ++r) {
      const int from = classes.map.RepOf(r);
      auto first = std::lower_bound(rep.all_collectives.begin(), rep.all_collectives.end(), from,
                                    [](const CollectiveReport& c, int k) { return c.rank < k; });
      for (auto it = first; it != rep.all_collectives.end() && it->rank == from; ++it) {
        mine.push_back(*it);
        mine.back().rank = r;
      }
    }
    rep.all_collectives = std::move(mine);
  }
  rep.link_stats = config.link_stats;
  if (config.link_stats || config.collect_links) {
    rep.links = backend.value()->Links();
    if (!backend_failure.ok()) return backend_failure;  // a remote peer asked for its links
    if (rep.links.empty()) {
      rep.links_note = rep.messages == 0 ? "none (no message crossed the network)"
                                         : "none (backend " + config.backend + " has no per-link statistics)";
    }
    std::stable_sort(rep.links.begin(), rep.links.end(),
                     [](const LinkStat& a, const LinkStat& b) { return a.busy_ns > b.busy_ns; });
  }
  return rep;
}

}  // namespace orrery
