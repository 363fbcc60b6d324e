#include "tests/test_util.h"

#include <gtest/gtest.h>

#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "extern/et_io.h"

namespace orrery::testing {

TempDir::TempDir() {
  char tmpl[] = "/tmp/orrery-test-XXXXXX";
  path_ = mkdtemp(tmpl);
}
TempDir::~TempDir() {
  std::error_code ec;  // best effort: a test must not fail on cleanup
  std::filesystem::remove_all(path_, ec);
}
void TempDir::Write(const std::string& name, const std::string& text) const { std::ofstream(File(name)) << text; }

std::string ReadFileText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string NetworkYaml(const std::string& block, int npus, double bw, double lat) {
  std::ostringstream o;
  o << "topology: [ " << block << " ]\nnpus_count: [ " << npus << " ]\nbandwidth: [ " << bw << " ]\nlatency: [ " << lat
    << " ]\n";
  return o.str();
}

std::string SystemJson(const std::string& algo, int splits, int endpoint_delay, double local_mem_bw, int active_chunks,
                       const std::string& extra) {
  std::ostringstream o;
  o << "{\"scheduling-policy\": \"LIFO\", \"endpoint-delay\": " << endpoint_delay
    << ", \"active-chunks-per-dimension\": " << active_chunks << ", \"preferred-dataset-splits\": " << splits
    << ", \"all-reduce-implementation\": [\"" << algo << "\"], \"all-gather-implementation\": [\"" << algo
    << "\"], \"reduce-scatter-implementation\": [\"" << algo << "\"], \"all-to-all-implementation\": [\""
    << (algo == "halvingDoubling" || algo == "doubleBinaryTree" ? "ring" : algo)
    << "\"], \"collective-optimization\": \"localBWAware\", \"local-mem-bw\": " << local_mem_bw << extra << "}";
  return o.str();
}

ChakraProtoMsg::Node MakeNode(uint64_t id, ChakraProtoMsg::NodeType type) {
  ChakraProtoMsg::Node n;
  n.set_id(id);
  n.set_type(type);
  return n;
}

void SetAttr(ChakraProtoMsg::Node* n, const char* name, uint64_t value) {
  auto* a = n->add_attr();
  a->set_name(name);
  a->set_uint64_val(value);
}

void SetAttr(ChakraProtoMsg::Node* n, const char* name, const std::string& value) {
  auto* a = n->add_attr();
  a->set_name(name);
  a->set_string_val(value);
}

void SetAttr(ChakraProtoMsg::Node* n, const char* name, const std::vector<bool>& value) {
  auto* a = n->add_attr();
  a->set_name(name);
  for (bool b : value) a->mutable_bool_list()->add_values(b);
}

ChakraProtoMsg::Node CollNode(uint64_t id, int comm_type, uint64_t bytes) {
  ChakraProtoMsg::Node n = MakeNode(id, ChakraProtoMsg::COMM_COLL_NODE);
  SetAttr(&n, "comm_type", static_cast<uint64_t>(comm_type));
  SetAttr(&n, "comm_size", bytes);
  return n;
}

void WriteTraces(const TempDir& dir, int npus, const std::function<std::vector<ChakraProtoMsg::Node>(int)>& nodes_of,
                 const std::string& prefix) {
  for (int r = 0; r < npus; ++r) {
    EtWriter w;
    if (!w.Open(dir.File(prefix + "." + std::to_string(r) + ".et"), ChakraProtoMsg::GlobalMetadata()).ok())
      std::abort();
    for (const auto& n : nodes_of(r)) {
      if (!w.Write(n).ok()) std::abort();
    }
    if (!w.Close().ok()) std::abort();
  }
}

void WriteP2PTraces(const TempDir& dir, int npus, const std::vector<P2PMsg>& msgs) {
  WriteTraces(dir, npus, [&](int r) {
    std::vector<ChakraProtoMsg::Node> nodes;
    for (const P2PMsg& m : msgs) {
      if (r != m.src && r != m.dst) continue;
      const bool send = r == m.src;
      auto n = MakeNode(nodes.size(), send ? ChakraProtoMsg::COMM_SEND_NODE : ChakraProtoMsg::COMM_RECV_NODE);
      SetAttr(&n, send ? "comm_dst" : "comm_src", static_cast<uint64_t>(send ? m.dst : m.src));
      SetAttr(&n, "comm_size", m.bytes);
      SetAttr(&n, "comm_tag", m.tag);
      nodes.push_back(n);
    }
    return nodes;
  });
}

Result<RunReport> RunIn(const TempDir& dir, const std::string& backend, const std::string& symmetry) {
  RunConfig c;
  c.files.workload_prefix = dir.File("trace");
  c.files.network = dir.File("network.yml");
  c.files.system = dir.File("system.json");
  c.run.backend = backend;
  ParseSymmetry(symmetry, &c.run.symmetry);
  return RunSimulation(c, DefaultBackends());
}

Result<RunReport> RunInWithGroups(const TempDir& dir) {
  RunConfig c;
  c.files.workload_prefix = dir.File("trace");
  c.files.network = dir.File("network.yml");
  c.files.system = dir.File("system.json");
  c.files.comm_groups = dir.File("groups.json");
  return RunSimulation(c, DefaultBackends());
}

Tick MaxFinished(const RunReport& r) {
  Tick m = 0;
  for (const auto& n : r.per_npu) m = std::max(m, n.finished_ns);
  return m;
}

std::vector<CollectiveReport> EveryRankCollectives(const RunReport& r) {
  std::vector<CollectiveReport> out;
  ForEachRankCollective(r, [&](int rank, const CollectiveReport& c) {
    out.push_back(c);
    out.back().rank = rank;
  });
  return out;
}

std::string CollectivesCsv(const RunReport& r) {
  std::string out;
  const Status st = WriteCollectivesCsv(r, [&](std::string_view text) {
    out += text;
    return Status::Ok();
  });
  EXPECT_TRUE(st.ok()) << st.message();
  return out;
}

int RunCli(const std::string& args, std::string* err, const std::string& env) {
  return RunCliCapture(args, nullptr, err, env);
}

int RunCliCapture(const std::string& args, std::string* out, std::string* err, const std::string& env) {
  auto temp = [] {
    char tmpl[] = "/tmp/orrery-cli-XXXXXX";
    close(mkstemp(tmpl));
    return std::string(tmpl);
  };
  auto slurp = [](const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    unlink(path.c_str());
    return ss.str();
  };
  const std::string err_path = temp(), out_path = out ? temp() : "/dev/null";
  const std::string cmd = (env.empty() ? "" : env + " ") + std::string(ORRERY_BIN) + " " + args + " >" + out_path +
                          " 2>" + err_path;
  const int rc = std::system(cmd.c_str());
  *err = slurp(err_path);
  if (out) *out = slurp(out_path);
  return WEXITSTATUS(rc);
}

}  // namespace orrery::testing
