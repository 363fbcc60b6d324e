// PyTorch's process-group table as Chakra's converter carries it: a METADATA
// node named "## process_group:init ##" whose inputs.values is a Python list
// holding one string, the table as JSON (docs/formats.md, "Process groups"):
//
//   ['[{"pg_name": "0", "backend_config": "cuda:nccl", "ranks": [], "group_size": 2, "group_count": 1}]']
//
// Each entry names a group (pg_name, the string the collectives' pg_name
// attribute gives) and its global ranks; an empty list is every rank
// (PyTorch's default group). Other keys (backend_id, pg_desc, ...) are
// ignored. The reader only parses; the trace loader checks the ranks against
// the network and compares the ranks' tables.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "extern/chakra.pb.h"

namespace orrery {

inline constexpr char kProcessGroupNodeName[] = "## process_group:init ##";
// The table's text is at most this long (a 16,384-rank job lists each rank in a few groups: well under 1 MiB).
inline constexpr size_t kMaxProcessGroupTableBytes = size_t{16} << 20;

struct ProcessGroupEntry {
  std::string name;            // pg_name
  std::vector<int64_t> ranks;  // as listed (global ranks, each >= 0); empty: every rank
  int64_t group_size = -1;     // -1 when the entry has none
};

// A METADATA node that holds the table (by its name, as the converter writes it).
bool IsProcessGroupNode(const ChakraProtoMsg::Node& node);

// The table in `values` (the node's inputs.values): the Python list of one
// string ['...'] or ["..."], or the JSON array itself. Every error starts with
// `where` (file, node, rank) and names the entry and key.
Result<std::vector<ProcessGroupEntry>> ParseProcessGroupTable(const std::string& values, const std::string& where);

}  // namespace orrery
