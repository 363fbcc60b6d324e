#include "tests/test_util.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "extern/et_io.h"

namespace orrery::testing {

TempDir::TempDir() {
  char tmpl[] = "/tmp/orrery-test-XXXXXX";
  path_ = mkdtemp(tmpl);
}
TempDir::~TempDir() { std::system(("rm -rf '" + path_ + "'").c_str()); }
void TempDir::Write(const std::string& name, const std::string& text) const {
  std::ofstream(File(name)) << text;
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

void WriteP2PTraces(const TempDir& dir, int npus, const std::vector<P2PMsg>& msgs) {
  for (int r = 0; r < npus; ++r) {
    EtWriter w;
    if (!w.Open(dir.File("trace." + std::to_string(r) + ".et"), ChakraProtoMsg::GlobalMetadata()).ok()) std::abort();
    uint64_t id = 0;
    for (const P2PMsg& m : msgs) {
      if (r != m.src && r != m.dst) continue;
      ChakraProtoMsg::Node n;
      n.set_id(id++);
      n.set_type(r == m.src ? ChakraProtoMsg::COMM_SEND_NODE : ChakraProtoMsg::COMM_RECV_NODE);
      auto add = [&](const char* name, uint64_t v) {
        auto* a = n.add_attr();
        a->set_name(name);
        a->set_uint64_val(v);
      };
      add(r == m.src ? "comm_dst" : "comm_src", static_cast<uint64_t>(r == m.src ? m.dst : m.src));
      add("comm_size", m.bytes);
      add("comm_tag", m.tag);
      if (!w.Write(n).ok()) std::abort();
    }
    if (!w.Close().ok()) std::abort();
  }
}

Result<RunReport> RunIn(const TempDir& dir, const std::string& backend) {
  RunConfig c;
  c.workload_prefix = dir.File("trace");
  c.network_path = dir.File("network.yml");
  c.system_path = dir.File("system.json");
  c.backend = backend;
  return RunSimulation(c, DefaultBackends());
}

Tick MaxFinished(const RunReport& r) {
  Tick m = 0;
  for (const auto& n : r.per_npu) m = std::max(m, n.finished_ns);
  return m;
}

int RunCli(const std::string& args, std::string* err, const std::string& env) {
  char tmpl[] = "/tmp/orrery-cli-XXXXXX";
  int fd = mkstemp(tmpl);
  close(fd);
  const std::string cmd = (env.empty() ? "" : env + " ") + std::string(ORRERY_BIN) + " " + args + " >/dev/null 2>" + tmpl;
  const int rc = std::system(cmd.c_str());
  std::ifstream in(tmpl);
  std::stringstream ss;
  ss << in.rdbuf();
  *err = ss.str();
  unlink(tmpl);
  return WEXITSTATUS(rc);
}

}  // namespace orrery::testing
