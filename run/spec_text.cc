// A Spec as text: the canonical serialisation behind its hash, and the
// report's "config" object.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "core/fnv.h"
#include "extern/json_util.h"
#include "network/topology.h"
#include "run/spec.h"

namespace orrery {

namespace {

std::string Num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// A custom algorithm enters by the content of its graphs, not its file names.
std::string CustomDigest(const std::vector<CustomGraph>& graphs) {
  uint64_t h = kFnvOffset;
  for (const CustomGraph& g : graphs) {
    std::string t = "rank;";
    for (const CustomOp& op : g) {
      t += std::to_string(op.kind) + "," + std::to_string(op.peer) + "," + std::to_string(op.bytes) + "," +
           std::to_string(op.tag) + "," + std::to_string(op.duration_ns) + "," + std::to_string(op.num_deps) + ":";
      for (uint32_t c : op.children) t += std::to_string(c) + " ";
      t += ";";
    }
    h = Fnv1a(h, t);
  }
  return HexU64(h);
}

std::string ImplList(const std::vector<AlgoSpec>& list) {
  std::string out;
  for (const AlgoSpec& a : list) {
    out += out.empty() ? "" : ",";
    out += a.kind == AlgoKind::kCustom && a.custom ? "custom:fnv1a64:" + CustomDigest(*a.custom) : a.name;
  }
  return out;
}

const char* MemoryKindName(RemoteMemoryKind k) {
  switch (k) {
    case RemoteMemoryKind::kNone: return "NO_MEMORY_EXPANSION";
    case RemoteMemoryKind::kPerNpu: return "PER_NPU_MEMORY_EXPANSION";
    case RemoteMemoryKind::kPerNode: return "PER_NODE_MEMORY_EXPANSION";
    case RemoteMemoryKind::kPool: return "MEMORY_POOL";
  }
  return "?";
}

std::string Shown(const SpecFiles& f, std::string s) {
  if (f.shown_prefix_from.empty()) return s;
  for (size_t at; (at = s.find(f.shown_prefix_from)) != std::string::npos;) {
    s.replace(at, f.shown_prefix_from.size(), f.shown_prefix_to);
  }
  return s;
}

// The system configuration with defaults applied, in the system JSON's terms
// (implementations as written: file names of custom algorithms are shown).
nlohmann::ordered_json SystemJson(const Spec& s) {
  const AstraSystemConfig& c = s.system;
  auto impls = [&](const std::vector<CollectiveImplSpec>& list) {
    nlohmann::ordered_json a = nlohmann::ordered_json::array();
    for (const auto& i : list) a.push_back(Shown(s.files, i.name));
    return a;
  };
  nlohmann::ordered_json j;
  j["scheduling-policy"] = c.lifo ? "LIFO" : "FIFO";
  j["endpoint-delay"] = c.endpoint_delay_ns;
  j["endpoint-delay-effective-ns"] = s.options.endpoint_delay_ns;  // after --injection-scale
  j["active-chunks-per-dimension"] = c.active_chunks_per_dimension;
  j["preferred-dataset-splits"] = c.preferred_dataset_splits;
  j["all-reduce-implementation"] = impls(c.all_reduce);
  j["all-gather-implementation"] = impls(c.all_gather);
  j["reduce-scatter-implementation"] = impls(c.reduce_scatter);
  j["all-to-all-implementation"] = impls(c.all_to_all);
  j["collective-optimization"] = c.local_bw_aware ? "localBWAware" : "baseline";
  j["local-mem-bw"] = c.local_mem_bw;
  j["in-switch-reduction-bw"] = c.in_switch_reduction_bw;
  j["roofline-enabled"] = c.roofline_enabled;
  j["peak-perf"] = c.peak_perf_tflops;
  if (!c.device.empty()) j["device"] = c.device;
  j["intra-dimension-scheduling"] = c.intra_dimension_scheduling;
  j["inter-dimension-scheduling"] = c.inter_dimension_scheduling;
  // Only a network of several dimensions can tell the two models apart.
  if (s.dims.size() > 1) j["group-collective-model"] = c.group_collective_model;
  return j;
}

// A heterogeneity file's effect, rank by rank: "compute r:speed ..., link r/d:factor ...".
std::string HeterogeneityText(const Heterogeneity& h) {
  std::string t = "compute";
  for (const auto& [rank, speed] : h.compute_speed) t += " " + std::to_string(rank) + ":" + Num(speed);
  t += ", link";
  for (const auto& [key, factor] : h.link) {
    t += " " + std::to_string(key >> 8) + "/" + std::to_string(key & 0xff) + ":" + Num(factor);
  }
  return t;
}

}  // namespace

namespace {

// The system configuration's lines of SpecCanonical, in their order.
template <typename Line>
void SystemLines(const Spec& s, Line line) {
  const SystemOptions& o = s.options;
  line("system.scheduling-policy", o.lifo ? "LIFO" : "FIFO");
  line("system.endpoint-delay-ns", std::to_string(o.endpoint_delay_ns));
  line("system.active-chunks-per-dimension", std::to_string(o.active_chunks_per_dimension));
  line("system.preferred-dataset-splits", std::to_string(o.preferred_dataset_splits));
  line("system.all-reduce-implementation", ImplList(o.all_reduce));
  line("system.all-gather-implementation", ImplList(o.all_gather));
  line("system.reduce-scatter-implementation", ImplList(o.reduce_scatter));
  line("system.all-to-all-implementation", ImplList(o.all_to_all));
  line("system.collective-optimization", o.local_bw_aware ? "localBWAware" : "baseline");
  line("system.local-mem-bw", Num(s.system.local_mem_bw));
  line("system.in-switch-reduction-bw", Num(o.in_switch_reduction_bw));
  line("system.roofline-enabled", s.system.roofline_enabled ? "true" : "false");
  line("system.peak-perf", Num(s.system.peak_perf_tflops));
  // Absent at 0 (the hashes made before it existed).
  if (s.system.collective_sm_fraction > 0) {
    line("system.collective-sm-fraction", Num(s.system.collective_sm_fraction));
  }
  if (!s.system.device.empty()) {  // absent: the hashes made before it existed
    // A device YAML file enters by its content (its peak is the MFU's yardstick).
    auto text = s.system.device.find('/') != std::string::npos || s.system.device.find(".y") != std::string::npos
                    ? ReadTextFile(s.system.device)
                    : Result<std::string>(Status::Invalid(""));
    line("system.device", text.ok() ? "file:fnv1a64:" + HexU64(Fnv1a(kFnvOffset, text.value())) : s.system.device);
  }
  line("system.intra-dimension-scheduling", s.system.intra_dimension_scheduling);
  line("system.inter-dimension-scheduling", s.system.inter_dimension_scheduling);
  // Absent on one dimension, where both models simulate alike (and hashes stay as they were).
  if (s.dims.size() > 1) line("system.group-collective-model", s.system.group_collective_model);
}

}  // namespace

std::string SpecCanonical(const Spec& s) {
  std::string t = "orrery-spec 1\n";
  auto line = [&](const std::string& key, const std::string& value) { t += key + "=" + value + "\n"; };
  line("network.dims", std::to_string(s.dims.size()));
  for (size_t d = 0; d < s.dims.size(); ++d) {
    const Dim& x = s.dims[d];
    line("network.dim" + std::to_string(d), std::string(BlockName(x.block)) + " npus=" + std::to_string(x.npus) +
                                                " bandwidth_gbps=" + Num(x.bandwidth_gbps) +
                                                " latency_ns=" + Num(x.latency_ns) +
                                                " links_per_npu=" + std::to_string(x.links_per_npu));
  }
  SystemLines(s, line);
  const MemorySpec& m = s.memory;
  line("memory.backend", m.backend);
  for (const auto& [k, v] : m.params) line("memory.param." + k, v);
  line("memory.local_latency_ns", std::to_string(m.local_latency_ns));
  line("memory.via_network_dim", std::to_string(m.pool_via_dim));
  line("memory.local_capacity_bytes", std::to_string(m.capacity.local_capacity));
  line("memory.remote_capacity_bytes", std::to_string(m.capacity.remote_capacity));
  line("memory.resident_bytes", std::to_string(m.capacity.resident));
  line("memory.allow_oversubscription", s.run.allow_oversubscription ? "true" : "false");
  line("comm_groups", std::to_string(s.comm_groups.size()));
  for (const auto& [name, ranks] : s.comm_groups) {
    std::string r;
    for (int x : ranks) r += (r.empty() ? "" : ",") + std::to_string(x);
    line("comm_group." + name, r);
  }
  line("workload", s.graphs.text);
  // Absent without a heterogeneity file (the hashes made before it existed); else what it sets.
  if (!s.heterogeneity.empty()) line("heterogeneity", HeterogeneityText(s.heterogeneity));
  line("backend", s.run.backend);
  for (const auto& [k, v] : s.run.backend_params) {
    if (!v.empty()) line("backend.param." + k, v);
  }
  line("iterations", std::to_string(s.run.iterations));
  line("symmetry", SymmetryName(s.run.symmetry));
  if (s.run.repair_ctrl_deps) line("ctrl_deps", "repair");  // absent: the hashes made before it existed
  if (s.run.replay_host_collectives) line("host_collectives", "replay");
  // --injection-scale enters through system.endpoint-delay-ns: it scales only
  // a given delay, and a run it does not change hashes as without it.
  return t;
}

std::string SpecHash(const Spec& s) { return HexU64(Fnv1a(kFnvOffset, SpecCanonical(s))); }

std::string SpecConfigJson(const Spec& s) {
  nlohmann::ordered_json j;
  j["hash"] = SpecHash(s);
  const SpecFiles& f = s.files;
  j["files"] = {{"workload", Shown(f, f.workload_prefix)}, {"system", Shown(f, f.system)},
                {"network", Shown(f, f.network)},          {"remote_memory", Shown(f, f.remote_memory)},
                {"memory", Shown(f, f.memory_config)},     {"comm_groups", Shown(f, f.comm_groups)}};
  if (!f.heterogeneity.empty()) j["files"]["heterogeneity"] = Shown(f, f.heterogeneity);
  j["workload"] = {{"source", Shown(f, s.source ? s.source->Describe() : "")}, {"digest", s.graphs.text}};
  auto& net = j["network"] = {{"npus", s.npus}};
  auto& dims = net["dims"] = nlohmann::ordered_json::array();
  for (const Dim& d : s.dims) {
    dims.push_back({{"block", BlockName(d.block)},
                    {"npus", d.npus},
                    {"bandwidth_gbps", d.bandwidth_gbps},
                    {"latency_ns", d.latency_ns},
                    {"links_per_npu", d.links_per_npu}});
  }
  j["system"] = SystemJson(s);
  const MemorySpec& m = s.memory;
  nlohmann::ordered_json params = nlohmann::ordered_json::object();
  for (const auto& [k, v] : m.params) params[k] = v;
  j["memory"] = {{"backend", m.backend},
                 {"remote_memory_type", MemoryKindName(s.remote_memory.kind)},
                 {"params", params},
                 {"local_latency_ns", m.local_latency_ns},
                 {"via_network_dim", m.pool_via_dim},
                 {"local_capacity_bytes", m.capacity.local_capacity},
                 {"remote_capacity_bytes", m.capacity.remote_capacity},
                 {"resident_bytes", m.capacity.resident},
                 {"allow_oversubscription", s.run.allow_oversubscription}};
  nlohmann::ordered_json groups = nlohmann::ordered_json::object();
  for (const auto& [name, ranks] : s.comm_groups) groups[name] = ranks;
  j["comm_groups"] = {{"from", s.groups_from_file      ? "file"
                               : s.comm_groups.empty() ? "none"
                               : s.groups_source       ? "trace"
                                                       : "workload"},
                      {"groups", groups}};
  nlohmann::ordered_json bparams = nlohmann::ordered_json::object();
  for (const auto& [k, v] : s.run.backend_params) {
    if (!v.empty()) bparams[k] = v;
  }
  j["backend"] = {{"name", s.run.backend}, {"params", bparams}};
  j["iterations"] = s.run.iterations;
  j["symmetry"] = SymmetryName(s.run.symmetry);
  if (s.run.repair_ctrl_deps) j["ctrl_deps"] = "repair";
  if (s.run.replay_host_collectives) j["host_collectives"] = "replay";
  j["injection_scale"] = s.run.injection_scale;
  return j.dump();
}

}  // namespace orrery
