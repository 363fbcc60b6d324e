// Communicator groups from the traces themselves: the process-group table a
// converted trace carries in its METADATA node "## process_group:init ##"
// (extern/process_groups.h), read from every rank's file, resolved against
// the network (an empty rank list is every NPU) and compared across ranks
// (docs/formats.md, "Process groups").
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "extern/process_groups.h"

namespace orrery {

struct TraceGroupTable {
  std::map<std::string, std::vector<int>> groups;  // pg_name -> ranks, sorted
  std::string origin;                              // where rank 0's table is: "t.0.et node 3" ("" when none)
};

// One file's table as written, unresolved (for `trace inspect`): each entry
// with the id of the node that holds it; nullopt when the file has none.
struct RawGroupTable {
  std::vector<std::pair<uint64_t, ProcessGroupEntry>> entries;
  std::string origin;  // "t.0.et node 3": the first such node
};
Result<std::optional<RawGroupTable>> ReadRawGroupTable(const std::string& path, int rank);

// One rank's file: its table (several such nodes are merged), nullopt when it
// has none. Ranks are checked against the network's `npus` NPUs.
Result<std::optional<TraceGroupTable>> ReadRankGroupTable(const std::string& path, int rank, int npus);

// Every rank's table; each must be rank 0's. `same_as_rank0[r]` (may be
// shorter): rank r's file is byte-identical to rank 0's, so it is not read again.
Result<TraceGroupTable> ReadTraceGroupTables(const std::vector<std::string>& paths,
                                             const std::vector<bool>& same_as_rank0);

// "[0, 2]" (for messages and `trace inspect`).
std::string RankListText(const std::vector<int>& ranks);

}  // namespace orrery
