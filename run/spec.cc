// ResolveSpec and CompleteSpec: every file of a run read and checked once.
#include "run/spec.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/limits.h"
#include "core/names.h"
#include "core/parse.h"
#include "core/units.h"
#include "extern/et_io.h"
#include "extern/heterogeneity.h"
#include "extern/json_util.h"
#include "gen/device.h"
#include "memory/backend.h"
#include "network/notation.h"
#include "network/topology.h"
#include "workload/graph.h"

namespace orrery {

namespace {

std::vector<AlgoSpec> MapImpls(const std::vector<CollectiveImplSpec>& in, const CollectiveRegistry* algorithms) {
  std::vector<AlgoSpec> out;
  for (const auto& c : in) {
    AlgoSpec a;
    a.name = c.name;
    a.window = c.window;
    a.kind = c.kind;
    a.one = c.one;
    if (c.kind == AlgoKind::kPlugin) a.plugin = algorithms ? algorithms->Find(c.name) : nullptr;
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
        case NodeKind::kSend:
          op.kind = CustomOp::kSend;
          op.peer = n.comm_dst;
          break;
        case NodeKind::kRecv:
          op.kind = CustomOp::kRecv;
          op.peer = n.comm_src;
          break;
        case NodeKind::kComp: op.kind = CustomOp::kComp; break;
        case NodeKind::kMetadata:
        case NodeKind::kInvalid: op.kind = CustomOp::kNop; break;
        default:
          return Status::Invalid(path + ": node " + std::to_string(n.id) +
                                 ": a custom collective may contain only "
                                 "COMM_SEND, COMM_RECV, COMP, METADATA and INVALID nodes, not " +
                                 NodeTypeName(static_cast<int>(n.kind)));
      }
      op.bytes = n.comm_size;
      op.tag = n.comm_tag;
      op.duration_ns = SatMul(n.duration_micros, kNsPerUs);  // past 2^64 ns: the queue reports overflow
      op.num_deps = n.num_deps;
      op.children.assign(g->children.begin() + n.child_begin, g->children.begin() + n.child_end);
    }
  }
  return out;
}

// The system layer's options from the system JSON, the injection scale and the algorithms.
Status DeriveSystemOptions(Spec* s, const Registries& reg) {
  const AstraSystemConfig& sys = s->system;
  if (!sys.device.empty()) {
    if (auto d = gen::FindDevice(sys.device); !d.ok()) {
      const bool file = sys.device.find('/') != std::string::npos || sys.device.find(".y") != std::string::npos;
      if (file) return d.status().Prefixed(s->files.system + ": \"device\": ");
      std::vector<std::string> names;
      for (const gen::DevicePreset& p : gen::DevicePresets()) names.push_back(p.name);
      const std::string close = ClosestMatch(sys.device, names);
      return Status::Invalid(s->files.system + ": \"device\" = \"" + sys.device + "\": unknown device" +
                             (close.empty() ? "" : " (did you mean '" + close + "'?)") +
                             "; valid: " + JoinStrings(names, ", ") + " or a device YAML file");
    }
  }
  SystemOptions so;
  so.lifo = sys.lifo;
  so.endpoint_delay_ns = sys.endpoint_delay_ns;
  if (s->run.injection_scale != 1.0 && sys.endpoint_delay_given) {  // ASTRA-sim leaves its default 10 ns unscaled
    auto d = DoubleToUint(std::trunc(static_cast<double>(sys.endpoint_delay_ns) * s->run.injection_scale),
                          Where{s->files.system, 0, "endpoint-delay x --injection-scale"}, 0, uint64_t{1} << 50);
    if (!d.ok()) return d.status();
    so.endpoint_delay_ns = d.value();
  }
  so.active_chunks_per_dimension = sys.active_chunks_per_dimension;
  so.preferred_dataset_splits = sys.preferred_dataset_splits;
  so.local_bw_aware = sys.local_bw_aware;
  so.themis = sys.inter_dimension_scheduling == "themis";
  so.smallest_first = sys.intra_dimension_scheduling == "SmallestFirst";
  so.local_mem_bw = sys.local_mem_bw;
  so.in_switch_reduction_bw = sys.in_switch_reduction_bw;
  so.hierarchical_groups = sys.group_collective_model == "hierarchical";
  so.all_reduce = MapImpls(sys.all_reduce, reg.algorithms);
  so.all_gather = MapImpls(sys.all_gather, reg.algorithms);
  so.reduce_scatter = MapImpls(sys.reduce_scatter, reg.algorithms);
  so.all_to_all = MapImpls(sys.all_to_all, reg.algorithms);
  const int dims = static_cast<int>(s->dims.size());
  if (s->custom_npus != s->npus || s->custom_dims != dims) {
    s->custom.clear();
    s->custom_npus = s->npus;
    s->custom_dims = dims;
  }
  for (auto* list : {&so.all_reduce, &so.all_gather, &so.reduce_scatter, &so.all_to_all}) {
    for (auto& a : *list) {
      if (a.kind != AlgoKind::kCustom) continue;
      auto it = s->custom.find(a.name);
      if (it == s->custom.end()) {
        auto graphs = LoadCustomGraphs(a.name, s->npus, dims, s->files.system);
        if (!graphs.ok()) return graphs.status();
        it = s->custom.emplace(a.name, std::make_shared<const std::vector<CustomGraph>>(std::move(graphs.value())))
                 .first;
      }
      a.custom = it->second;
    }
  }
  s->options = std::move(so);
  return Status::Ok();
}

// The memory backend's settings: Orrery's memory YAML, or ASTRA-sim's remote-memory JSON.
// Orrery's memory YAML: its own keys (the pool's dimension, local latency,
// capacities) taken out, the rest the backend's settings.
Status MemoryFromYaml(const Spec& s, MemorySpec* m) {
  const std::string& file = s.files.memory_config;
  const int ndims = static_cast<int>(s.dims.size());
  m->params = s.memory_yaml.values;
  m->lines = s.memory_yaml.lines;
  m->backend = m->params.count("backend") ? m->params["backend"] : "pool";
  auto at = [&](const std::string& key) { return Where{file, m->lines[key], key}; };
  if (auto it = m->params.find("via_network_dim"); it != m->params.end()) {
    auto v = ParseInt(it->second, at(it->first), 0, ndims - 1);
    if (!v.ok()) {
      return ValueError(at(it->first), it->second, "must name a network dimension, 0.." + std::to_string(ndims - 1),
                        DescribeIntRange(0, ndims - 1));
    }
    m->pool_via_dim = static_cast<int>(v.value());
    m->params.erase(it);
  }
  if (auto it = m->params.find("local_latency_ns"); it != m->params.end()) {
    ORRERY_PARSE_OR_RETURN(m->local_latency_ns, ParseUint(it->second, at(it->first), 0, kMaxLatencyNs));
    m->params.erase(it);
  }
  for (const std::string key : {"local_capacity_bytes", "remote_capacity_bytes", "resident_bytes"}) {
    auto it = m->params.find(key);
    if (it == m->params.end()) continue;
    const bool resident = key == "resident_bytes";
    // A capacity must be positive (omit it for unlimited); resident bytes may be 0.
    ORRERY_PARSE_OR_RETURN(const uint64_t v, ParseUint(it->second, at(key), 0, kMaxCapacityBytes));
    if (v == 0 && !resident) {
      return ValueError(at(key), "0", "a capacity must be positive (omit it for unlimited)",
                        DescribeUintRange(1, kMaxCapacityBytes));
    }
    if (key == "local_capacity_bytes") m->capacity.local_capacity = v;
    if (key == "remote_capacity_bytes") m->capacity.remote_capacity = v;
    if (resident) m->capacity.resident = v;
    m->params.erase(it);
  }
  m->source = file;
  return Status::Ok();
}

// ASTRA-sim's remote-memory JSON (or none) as the astra-sim backend's settings.
Status MemoryFromAstraJson(const Spec& s, MemorySpec* m) {
  const AstraRemoteMemoryConfig& mem = s.remote_memory;
  static const char* kTypes[] = {"NO_MEMORY_EXPANSION", "PER_NPU_MEMORY_EXPANSION", "PER_NODE_MEMORY_EXPANSION",
                                 "MEMORY_POOL"};
  m->params["memory-type"] = kTypes[static_cast<int>(mem.kind)];
  m->params["remote-mem-latency"] = std::to_string(mem.latency_ns);
  char bw[64];
  std::snprintf(bw, sizeof(bw), "%.17g", mem.bandwidth_bytes_per_ns);
  m->params["remote-mem-bw"] = bw;
  m->params["num-npus-per-node"] = std::to_string(mem.npus_per_node > 0 ? mem.npus_per_node : 1);
  if (mem.kind == RemoteMemoryKind::kPerNode && mem.num_nodes * mem.npus_per_node != s.npus) {
    return Status::Invalid(s.files.remote_memory + ": num-nodes (" + std::to_string(mem.num_nodes) +
                           ") x num-npus-per-node (" + std::to_string(mem.npus_per_node) +
                           ") must equal the network's " + std::to_string(s.npus) + " NPUs");
  }
  return Status::Ok();
}

Status DeriveMemory(Spec* s, const Registries& reg) {
  MemorySpec m;
  m.capacity.allow_oversubscription = s->run.allow_oversubscription;
  m.source = s->files.remote_memory.empty() ? "no --remote-memory-configuration" : s->files.remote_memory;
  ORRERY_RETURN_IF_ERROR(s->files.memory_config.empty() ? MemoryFromAstraJson(*s, &m) : MemoryFromYaml(*s, &m));
  MemoryRegistry builtin;
  RegisterBuiltinMemoryBackends(&builtin);
  const MemoryRegistry& registry = reg.memories ? *reg.memories : builtin;
  if (!registry.Find(m.backend)) {
    return Status::Invalid(m.source + ": backend = \"" + m.backend + "\": " + registry.Unknown(m.backend));
  }
  s->memory = std::move(m);
  return Status::Ok();
}


// ASTRA-sim runs a group's flat ring in the order its comm-group JSON lists the
// ranks; Orrery in ascending order (docs/parity.md, "Communicator groups").
// Where the two can differ, the report says so: the first such group and how
// many there are.
std::string OutOfOrderGroupNote(const std::map<std::string, std::vector<int>>& groups) {
  std::string first;
  size_t count = 0;
  for (const auto& [name, ranks] : groups) {
    if (std::is_sorted(ranks.begin(), ranks.end())) continue;
    if (count++ == 0) {
      first = "group \"" + name + "\" lists its ranks out of order (";
      for (size_t i = 0; i < ranks.size() && i < 8; ++i) first += (i ? ", " : "") + std::to_string(ranks[i]);
      first += ranks.size() > 8 ? ", ...)" : ")";
    }
  }
  if (count == 0) return "";
  return first + (count > 1 ? " and " + std::to_string(count - 1) + " other group(s) too" : "") +
         "; Orrery's flat ring runs a group's ranks in ascending order, ASTRA-sim in the listed order";
}
// Communicator groups: --comm-group-configuration, else the generator's, else
// the process groups the traces carry (the file overrides the traces').
Status DeriveGroups(Spec* s, std::map<std::string, std::vector<int>> source_groups) {
  s->groups_from_file = !s->files.comm_groups.empty();
  if (s->groups_from_file) {
    if (s->groups_npus != s->npus || s->groups_source) {
      auto groups = ReadCommGroupJson(s->files.comm_groups, s->npus);
      if (!groups.ok()) return groups.status();
      s->comm_groups = std::move(groups.value());
      s->groups_npus = s->npus;
      s->groups_source = nullptr;
    }
    // Said in the report only when the traces carry other process groups of their own,
    // or when a group lists its ranks out of order.
    s->groups_note.clear();
    Result<SourceGroups> traced = s->source->ProcessGroups(s->npus, s->graphs, /*rank0_only=*/true);
    if (!traced.ok() || (!traced->groups.empty() && traced->groups != s->comm_groups)) {
      s->groups_note = std::to_string(s->comm_groups.size()) + " from --comm-group-configuration " +
                       s->files.comm_groups + "; it overrides the traces' process-group metadata (" +
                       (traced.ok() ? std::to_string(traced->groups.size()) + " group(s), " + traced->origin
                                    : "unusable: " + traced.status().message()) +
                       ")";
    }
    const std::string order = OutOfOrderGroupNote(s->comm_groups);
    if (!order.empty()) s->groups_note += (s->groups_note.empty() ? "" : "; ") + order;
    return Status::Ok();
  }
  if (!source_groups.empty()) {
    s->comm_groups = std::move(source_groups);
    s->groups_npus = -1;
    s->groups_source = nullptr;
    s->groups_note = "";  // the generator's groups: its summary names them
    return Status::Ok();
  }
  if (s->groups_npus != s->npus || s->groups_source != s->source.get()) {
    ORRERY_PARSE_OR_RETURN(SourceGroups traced, s->source->ProcessGroups(s->npus, s->graphs, false));
    s->comm_groups = std::move(traced.groups);
    s->groups_note = s->comm_groups.empty()
                         ? ""
                         : std::to_string(s->comm_groups.size()) + " from the traces' process-group metadata (" +
                               traced.origin + ", the same in every rank's trace)";
    s->groups_npus = s->npus;
    s->groups_source = s->source.get();
  }
  return Status::Ok();
}

// The heterogeneity file, read for this network (ranks and dimensions checked);
// link factors are the analytical backend's alone.
Status DeriveHeterogeneity(Spec* s) {
  s->heterogeneity = Heterogeneity{};
  if (s->files.heterogeneity.empty()) return Status::Ok();
  ORRERY_PARSE_OR_RETURN(s->heterogeneity,
                         ReadHeterogeneityYaml(s->files.heterogeneity, s->npus, static_cast<int>(s->dims.size())));
  if (!s->heterogeneity.link.empty() && s->run.backend != "analytical") {
    return Status::Invalid("--heterogeneity = \"" + s->files.heterogeneity +
                           "\": 'links' is read by the analytical backend only, and the run uses --network-backend = " +
                           s->run.backend + "; allowed: --network-backend=analytical, or no 'links' in the file");
  }
  return Status::Ok();
}

}  // namespace

Status CheckBackendName(const std::string& backend, const Registries& reg) {
  if (reg.backends->Find(backend)) return Status::Ok();
  return Status::Invalid("--network-backend = \"" + backend + "\": " + reg.backends->Unknown(backend));
}

Status CompleteSpec(Spec* s, const Registries& reg) {
  ORRERY_RETURN_IF_ERROR(CheckBackendName(s->run.backend, reg));  // a sweep point's backend comes here first
  if (!s->source) return Status::Invalid("--workload-configuration is required (trace prefix)");
  Topology topology(s->dims);
  s->npus = topology.npus();
  ORRERY_RETURN_IF_ERROR(DeriveSystemOptions(s, reg));
  // Communicator groups: from the JSON file, or defined by the source.
  std::map<std::string, std::vector<int>> source_groups = s->source->CommGroups();
  if (!s->files.comm_groups.empty() && !source_groups.empty()) {
    return Status::Invalid("--comm-group-configuration = \"" + s->files.comm_groups + "\": " + s->source->Describe() +
                           " defines its own communicator groups; give one or the other");
  }
  // Cheap checks before anything per NPU is built: the source has one graph
  // per NPU (their sizes feed the memory estimate), then what the graphs hold.
  ORRERY_RETURN_IF_ERROR(s->source->Check(s->npus, s->files.network, &s->trace0_bytes, &s->trace_bytes));
  if (s->graphs_npus != s->npus || s->graphs_source != s->source.get()) {
    auto digest = s->source->Digest(s->npus);
    if (!digest.ok()) return digest.status();
    s->graphs = std::move(digest.value());
    s->graphs_npus = s->npus;
    s->graphs_source = s->source.get();
  }
  ORRERY_RETURN_IF_ERROR(DeriveGroups(s, std::move(source_groups)));
  ORRERY_RETURN_IF_ERROR(DeriveHeterogeneity(s));
  return DeriveMemory(s, reg);
}

Result<Spec> ResolveSpec(const RunConfig& config, const Registries& reg) {
  if (config.run.iterations < 1)
    return Status::Invalid("--iterations = " + std::to_string(config.run.iterations) + ": must be >= 1");
  ORRERY_RETURN_IF_ERROR(CheckBackendName(config.run.backend, reg));
  if (config.files.network.empty())
    return Status::Invalid("--network-configuration is required (ASTRA-sim network YAML)");
  if (config.files.system.empty()) return Status::Invalid("--system-configuration is required (ASTRA-sim system JSON)");
  if (config.source && !config.files.workload_prefix.empty()) {
    return Status::Invalid("--workload-configuration = \"" + config.files.workload_prefix +
                           "\": give either trace files or a generated workload (" + config.source->Describe() +
                           "), not both");
  }
  if (!config.source && config.files.workload_prefix.empty()) {
    return Status::Invalid("--workload-configuration is required (trace prefix)");
  }
  auto s = ReadSpecInputs(config, reg);
  if (!s.ok()) return s.status();
  ORRERY_RETURN_IF_ERROR(CompleteSpec(&s.value(), reg));
  return s;
}

const char* SymmetryName(SymmetryMode mode) { return mode == SymmetryMode::kOff ? "off" : "auto"; }

bool ParseSymmetry(const std::string& text, SymmetryMode* mode) {
  if (text != "auto" && text != "off") return false;
  *mode = text == "off" ? SymmetryMode::kOff : SymmetryMode::kAuto;
  return true;
}

Result<Spec> ReadSpecInputs(const RunConfig& config, const Registries& reg) {
  Spec s;
  s.files = config.files;
  s.run = config.run;
  s.observe = config.observe;
  if (config.source) {
    s.source = config.source;
  } else if (!config.files.workload_prefix.empty()) {
    s.source = TraceFileSource(config.files.workload_prefix);
  }
  if (config.network_dims) {
    s.dims = *config.network_dims;
  } else {
    auto network = ReadNetworkDims(config.files.network);
    if (!network.ok()) return network.status();
    s.dims = std::move(network.value());
  }
  if (config.system) {
    s.system = *config.system;
  } else {
    auto sys = ReadAstraSystemJson(config.files.system,
                                   reg.algorithms ? reg.algorithms->Names() : std::vector<std::string>{});
    if (!sys.ok()) return sys.status();
    s.system = std::move(sys.value());
  }
  if (!config.files.remote_memory.empty()) {
    auto m = ReadAstraRemoteMemoryJson(config.files.remote_memory);
    if (!m.ok()) return m.status();
    s.remote_memory = m.value();
  }
  if (!config.files.memory_config.empty()) {
    auto flat = ReadFlatYaml(config.files.memory_config);
    if (!flat.ok()) return flat.status();
    s.memory_yaml = std::move(flat.value());
  }
  return s;
}

}  // namespace orrery
