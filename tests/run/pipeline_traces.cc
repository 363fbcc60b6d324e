#include "tests/run/pipeline_traces.h"

#include <string>
#include <vector>

namespace orrery::testing {

const char kPipelineSystem2D[] =
    R"({"scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1,
    "preferred-dataset-splits": 2, "all-reduce-implementation": ["ring", "ring"],
    "all-gather-implementation": ["ring", "ring"], "reduce-scatter-implementation": ["ring", "ring"],
    "all-to-all-implementation": ["ring", "ring"], "collective-optimization": "localBWAware"})";

void WritePipelineTraces(const TempDir& d, bool all_reduce, int slow, uint64_t slow_us) {
  d.Write("network.yml",
          "topology: [ Switch, Ring ]\nnpus_count: [ 4, 2 ]\nbandwidth: [ 50, 25 ]\nlatency: [ 500, 2000 ]\n");
  d.Write("system.json", kPipelineSystem2D);
  d.Write("groups.json", R"({"dp0": [0, 1, 2, 3], "dp1": [4, 5, 6, 7]})");
  WriteTraces(d, 8, [&](int r) {
    const bool first = r < 4;
    const int peer = first ? r + 4 : r - 4;
    uint64_t id = 1000 + 37 * static_cast<uint64_t>(r);
    std::vector<ChakraProtoMsg::Node> nodes;
    auto add = [&](ChakraProtoMsg::Node n, const std::string& name) {
      if (!nodes.empty()) n.add_data_deps(nodes.back().id());
      n.set_name(name + "@" + std::to_string(r));
      nodes.push_back(n);
    };
    auto comp = [&](uint64_t us) {
      auto n = MakeNode(id++, ChakraProtoMsg::COMP_NODE);
      n.set_duration_micros(r == slow ? slow_us : us);
      add(n, "comp");
    };
    auto msg = [&](bool send, uint64_t tag) {
      auto n = MakeNode(id++, send ? ChakraProtoMsg::COMM_SEND_NODE : ChakraProtoMsg::COMM_RECV_NODE);
      SetAttr(&n, send ? "comm_dst" : "comm_src", static_cast<uint64_t>(peer));
      SetAttr(&n, "comm_size", uint64_t{1} << 20);
      SetAttr(&n, "comm_tag", tag);
      add(n, send ? "send" : "recv");
    };
    for (uint64_t mb = 0; mb < 2; ++mb) {  // forward
      if (first) comp(10), msg(true, 10 + mb);
      if (!first) msg(false, 10 + mb), comp(12);
    }
    for (uint64_t mb = 0; mb < 2; ++mb) {  // backward
      if (first) msg(false, 20 + mb), comp(20);
      if (!first) comp(24), msg(true, 20 + mb);
    }
    if (all_reduce) {
      auto n = CollNode(id++, 0, 8 << 20);
      SetAttr(&n, "pg_name", std::string(first ? "dp0" : "dp1"));
      add(n, "grad_ar");
    }
    return nodes;
  });
}

RunConfig PipelineTraceConfig(const TempDir& d, bool groups) {
  RunConfig c;
  c.files.workload_prefix = d.File("trace");
  c.files.network = d.File("network.yml");
  c.files.system = d.File("system.json");
  if (groups) c.files.comm_groups = d.File("groups.json");
  return c;
}

}  // namespace orrery::testing
