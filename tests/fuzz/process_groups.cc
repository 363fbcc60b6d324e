// Fuzz target: the process-group table of a converted trace's METADATA node
// (extern/process_groups.h): the fuzzed bytes are its inputs.values, parsed on
// their own, then carried by every rank's trace of a 4-NPU run (resolved
// against the network, compared across ranks, used by the all-reduce on pg_name "0").
#include <cstddef>
#include <cstdint>

#include "extern/et_io.h"
#include "extern/process_groups.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace orrery;
  const std::string values(reinterpret_cast<const char*>(data), size);
  fuzz::Note("table", ParseProcessGroupTable(values, "fuzz").status());
  const std::string prefix = fuzz::Scratch() + "/pg";
  for (int r = 0; r < fuzz::kRanks; ++r) {
    EtWriter w;
    if (!w.Open(prefix + "." + std::to_string(r) + ".et", ChakraProtoMsg::GlobalMetadata()).ok()) return 0;
    ChakraProtoMsg::Node table;
    table.set_id(0);
    table.set_type(ChakraProtoMsg::METADATA_NODE);
    table.set_name(kProcessGroupNodeName);
    table.mutable_inputs()->set_values(values);
    ChakraProtoMsg::Node coll;
    coll.set_id(1);
    coll.set_type(ChakraProtoMsg::COMM_COLL_NODE);
    for (const auto& [name, v] : {std::pair{"comm_type", 0}, std::pair{"comm_size", 4096}}) {
      auto* a = coll.add_attr();
      a->set_name(name);
      a->set_uint64_val(v);
    }
    auto* pg = coll.add_attr();
    pg->set_name("pg_name");
    pg->set_string_val(r % 2 ? "1" : "0");
    if (!w.Write(table).ok() || !w.Write(coll).ok() || !w.Close().ok()) return 0;
  }
  RunConfig c;
  c.files.workload_prefix = prefix;
  fuzz::Note("run", fuzz::RunSmall(c, /*own_groups=*/true).status());
  return 0;
}
