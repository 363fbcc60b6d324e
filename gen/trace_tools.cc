#include "gen/trace_tools.h"

#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "extern/et_io.h"
#include "workload/graph.h"

namespace orrery {

namespace {

ChakraProtoMsg::AttributeProto* AddAttr(ChakraProtoMsg::Node* n, const std::string& name) {
  auto* a = n->add_attr();
  a->set_name(name);
  return a;
}

}  // namespace

Result<std::string> InspectTrace(const std::string& path) {
  GraphLoadOptions lo;
  lo.num_npus = 1 << 26;
  lo.num_dims = 64;
  auto g = LoadNpuGraph(path, 0, lo);
  if (!g.ok()) return g.status();
  std::map<std::string, uint64_t> by_type;
  std::map<std::string, std::pair<uint64_t, uint64_t>> colls;
  uint64_t compute_us = 0;
  for (const auto& n : g->nodes) {
    by_type[NodeTypeName(n.kind)]++;
    if (n.kind == NodeKind::kComp) compute_us += n.duration_micros;
    if (n.kind == NodeKind::kColl) {
      auto& c = colls[CollectiveName(n.collective)];
      c.first++;
      c.second += n.comm_size;
    }
  }
  // Dependency depth: longest chain (nodes are topologically ordered by Kahn below).
  std::vector<uint32_t> depth(g->nodes.size(), 1), pending(g->nodes.size());
  std::vector<uint32_t> stack;
  for (uint32_t i = 0; i < g->nodes.size(); ++i) {
    pending[i] = g->nodes[i].num_deps;
    if (!pending[i]) stack.push_back(i);
  }
  uint32_t max_depth = 0;
  while (!stack.empty()) {
    uint32_t i = stack.back();
    stack.pop_back();
    max_depth = std::max(max_depth, depth[i]);
    for (uint32_t c = g->nodes[i].child_begin; c < g->nodes[i].child_end; ++c) {
      uint32_t k = g->children[c];
      depth[k] = std::max(depth[k], depth[i] + 1);
      if (--pending[k] == 0) stack.push_back(k);
    }
  }
  std::ostringstream out;
  out << path << ": " << g->nodes.size() << " nodes, dependency depth " << max_depth << "\n";
  out << "nodes by type:\n";
  for (const auto& [t, c] : by_type) out << "  " << t << ": " << c << "\n";
  out << "compute (replay): " << compute_us << " us\n";
  if (!colls.empty()) {
    out << "collectives:\n";
    for (const auto& [t, c] : colls) out << "  " << t << ": " << c.first << " (" << c.second << " bytes)\n";
  }
  return out.str();
}

Status TraceToJson(const std::string& et_path, const std::string& json_path) {
  EtReader reader;
  ORRERY_RETURN_IF_ERROR(reader.Open(et_path));
  std::ofstream out(json_path);
  if (!out) return Status::Env(json_path + ": cannot create file");
  google::protobuf::util::JsonPrintOptions opts;
  opts.preserve_proto_field_names = true;
  std::string line;
  if (!google::protobuf::util::MessageToJsonString(reader.metadata(), &line, opts).ok()) {
    return Status::Env(et_path + ": cannot convert metadata to JSON");
  }
  out << line << "\n";
  ChakraProtoMsg::Node n;
  while (true) {
    auto more = reader.Next(&n);
    if (!more.ok()) return more.status();
    if (!more.value()) break;
    line.clear();
    if (!google::protobuf::util::MessageToJsonString(n, &line, opts).ok()) {
      return Status::Env(et_path + ": cannot convert node " + std::to_string(n.id()) + " to JSON");
    }
    out << line << "\n";
  }
  return Status::Ok();
}

Status TraceFromJson(const std::string& json_path, const std::string& et_path) {
  std::ifstream in(json_path);
  if (!in) return Status::Invalid(json_path + ": cannot open file");
  std::string line;
  int lineno = 0;
  EtWriter w;
  bool have_meta = false;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty()) continue;
    if (!have_meta) {
      ChakraProtoMsg::GlobalMetadata md;
      auto st = google::protobuf::util::JsonStringToMessage(line, &md);
      if (!st.ok()) return Status::Invalid(json_path + ":" + std::to_string(lineno) + ": not a GlobalMetadata: " + std::string(st.message()));
      ORRERY_RETURN_IF_ERROR(w.Open(et_path, md));
      have_meta = true;
      continue;
    }
    ChakraProtoMsg::Node n;
    auto st = google::protobuf::util::JsonStringToMessage(line, &n);
    if (!st.ok()) return Status::Invalid(json_path + ":" + std::to_string(lineno) + ": not a Node: " + std::string(st.message()));
    ORRERY_RETURN_IF_ERROR(w.Write(n));
  }
  if (!have_meta) return Status::Invalid(json_path + ": empty: expected a GlobalMetadata line first");
  return w.Close();
}

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

}  // namespace

Status WriteDataParallelTraces(const DataParallelSpec& spec, const std::string& prefix) {
  if (spec.slow_rank < -1 || spec.slow_rank >= spec.npus) {
    return Status::Invalid("--straggler = " + std::to_string(spec.slow_rank) + ": not a rank of " +
                           std::to_string(spec.npus) + " NPUs (allowed: 0.." + std::to_string(spec.npus - 1) + ")");
  }
  if (spec.slow_rank < 0 && spec.slow_percent != 0) {
    return Status::Invalid("--straggler-percent = " + std::to_string(spec.slow_percent) +
                           " needs --straggler=RANK (which rank is slower)");
  }
  const Result<uint64_t> slow_fwd = SlowedMicros("--fwd-us", spec.fwd_us, spec.slow_percent);
  if (!slow_fwd.ok()) return slow_fwd.status();
  const Result<uint64_t> slow_bwd = SlowedMicros("--bwd-us", spec.bwd_us, spec.slow_percent);
  if (!slow_bwd.ok()) return slow_bwd.status();
  const uint64_t slow_fwd_us = slow_fwd.value(), slow_bwd_us = slow_bwd.value();
  ChakraProtoMsg::GlobalMetadata md;
  md.set_version("0.0.4");
  const bool acts = spec.activation_bytes > 0;
  for (int r = 0; r < spec.npus; ++r) {
    EtWriter w;
    ORRERY_RETURN_IF_ERROR(w.Open(prefix + "." + std::to_string(r) + ".et", md));
    const bool slow = r == spec.slow_rank;
    uint64_t id = 0;
    uint64_t prev = 0;
    std::vector<uint64_t> fwd_id(spec.layers), store_id(spec.layers);
    for (int l = 0; l < spec.layers; ++l) {
      ChakraProtoMsg::Node n;
      n.set_id(id);
      n.set_name("fwd_" + std::to_string(l));
      n.set_type(ChakraProtoMsg::COMP_NODE);
      n.set_duration_micros(slow ? slow_fwd_us : spec.fwd_us);
      AddAttr(&n, "is_cpu_op")->set_bool_val(false);
      if (acts) AddAttr(&n, "output_bytes")->set_uint64_val(spec.activation_bytes);
      if (l > 0) n.add_data_deps(prev);
      ORRERY_RETURN_IF_ERROR(w.Write(n));
      fwd_id[l] = id;
      prev = id++;
      if (acts && spec.offload) {
        ChakraProtoMsg::Node st;
        st.set_id(id);
        st.set_name("offload_" + std::to_string(l));
        st.set_type(ChakraProtoMsg::MEM_STORE_NODE);
        AddAttr(&st, "is_cpu_op")->set_bool_val(false);
        AddAttr(&st, "tensor_size")->set_uint64_val(spec.activation_bytes);
        st.add_data_deps(fwd_id[l]);
        ORRERY_RETURN_IF_ERROR(w.Write(st));
        store_id[l] = id++;
      }
    }
    for (int l = spec.layers - 1; l >= 0; --l) {
      uint64_t act = fwd_id[l];
      if (acts && spec.offload) {
        ChakraProtoMsg::Node ld;
        ld.set_id(id);
        ld.set_name("reload_" + std::to_string(l));
        ld.set_type(ChakraProtoMsg::MEM_LOAD_NODE);
        AddAttr(&ld, "is_cpu_op")->set_bool_val(false);
        AddAttr(&ld, "tensor_size")->set_uint64_val(spec.activation_bytes);
        ld.add_data_deps(store_id[l]);
        ld.add_ctrl_deps(prev);  // reload when the backward reaches this layer
        ORRERY_RETURN_IF_ERROR(w.Write(ld));
        act = id++;
      }
      ChakraProtoMsg::Node b;
      b.set_id(id);
      b.set_name("bwd_" + std::to_string(l));
      b.set_type(ChakraProtoMsg::COMP_NODE);
      b.set_duration_micros(slow ? slow_bwd_us : spec.bwd_us);
      AddAttr(&b, "is_cpu_op")->set_bool_val(false);
      b.add_data_deps(prev);
      if (acts && act != prev) b.add_data_deps(act);
      ORRERY_RETURN_IF_ERROR(w.Write(b));
      prev = id++;
      ChakraProtoMsg::Node c;
      c.set_id(id++);
      c.set_name("allreduce_" + std::to_string(l));
      c.set_type(ChakraProtoMsg::COMM_COLL_NODE);
      AddAttr(&c, "is_cpu_op")->set_bool_val(false);
      AddAttr(&c, "comm_type")->set_int64_val(ChakraProtoMsg::ALL_REDUCE);
      AddAttr(&c, "comm_size")->set_int64_val(static_cast<int64_t>(spec.allreduce_bytes));
      c.add_data_deps(prev);
      ORRERY_RETURN_IF_ERROR(w.Write(c));
    }
    ORRERY_RETURN_IF_ERROR(w.Close());
  }
  return Status::Ok();
}

Status WriteSingleCollectiveTraces(int npus, int comm_type, uint64_t bytes, const std::string& prefix) {
  ChakraProtoMsg::GlobalMetadata md;
  md.set_version("0.0.4");
  for (int r = 0; r < npus; ++r) {
    EtWriter w;
    ORRERY_RETURN_IF_ERROR(w.Open(prefix + "." + std::to_string(r) + ".et", md));
    ChakraProtoMsg::Node c;
    c.set_id(0);
    c.set_name("collective");
    c.set_type(ChakraProtoMsg::COMM_COLL_NODE);
    AddAttr(&c, "is_cpu_op")->set_bool_val(false);
    AddAttr(&c, "comm_type")->set_int64_val(comm_type);
    AddAttr(&c, "comm_size")->set_int64_val(static_cast<int64_t>(bytes));
    ORRERY_RETURN_IF_ERROR(w.Write(c));
    ORRERY_RETURN_IF_ERROR(w.Close());
  }
  return Status::Ok();
}

Result<std::vector<std::string>> RemoveStaleRankTraces(const std::string& prefix, int npus) {
  namespace fs = std::filesystem;
  const fs::path p(prefix);
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  const std::string base = p.filename().string() + ".";
  std::vector<std::pair<uint64_t, fs::path>> stale;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= base.size() + 3 || name.compare(0, base.size(), base) != 0 ||
        name.compare(name.size() - 3, 3, ".et") != 0) {
      continue;
    }
    const std::string digits = name.substr(base.size(), name.size() - base.size() - 3);
    if (digits.size() > 18 || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      continue;
    }
    const uint64_t rank = std::stoull(digits);
    if (rank >= static_cast<uint64_t>(npus) && std::to_string(rank) == digits) stale.emplace_back(rank, it->path());
  }
  if (ec) return Status::Env(dir.string() + ": cannot list the folder: " + ec.message());
  std::sort(stale.begin(), stale.end());
  std::vector<std::string> removed;
  for (const auto& [rank, path] : stale) {
    fs::remove(path, ec);
    if (ec) return Status::Env(path.string() + ": cannot remove a stale trace: " + ec.message());
    removed.push_back(path.string());
  }
  return removed;
}

}  // namespace orrery
