// Fuzz target: the Chakra ET reader (extern/et_io) and the trace-to-graph
// loader (workload/graph.cc) on one rank's trace.
#include <cstddef>
#include <cstdint>

#include "extern/et_io.h"
#include "tests/fuzz/fuzz_util.h"
#include "workload/graph.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace orrery;
  const std::string path = fuzz::WriteInput("trace.0.et", data, size);
  EtReader reader;
  if (reader.Open(path).ok()) {
    ChakraProtoMsg::Node node;
    for (int i = 0; i < 100000; ++i) {
      auto more = reader.Next(&node);
      if (!more.ok() || !more.value()) break;
      if (const auto* a = FindAttr(node, "comm_size")) (void)AttrUint(*a);
      if (const auto* a = FindAttr(node, "involved_dim")) (void)AttrBoolList(*a);
      if (const auto* a = FindAttr(node, "pg_name")) (void)AttrString(*a);
      if (const auto* a = FindAttr(node, "is_cpu_op")) (void)AttrBool(*a);
    }
  }
  const std::map<std::string, int> groups = {{"0", 0}, {"1", 1}};
  for (int dims : {1, 3}) {
    GraphLoadOptions opt;
    opt.num_npus = 8;
    opt.num_dims = dims;
    opt.groups = dims == 3 ? &groups : nullptr;
    (void)LoadNpuGraph(path, 0, opt);
  }
  return 0;
}
