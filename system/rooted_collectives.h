// Collectives ASTRA-sim does not simulate (it replays a broadcast's recorded
// duration), built here as per-rank graphs of sends, receives and reduction
// steps over the members of the communicator (all NPUs by default):
//
//   BROADCAST  pipelined chain from the root along the members in rank order
//              (root -> next -> ... -> last), whole message per hop
//   REDUCE     the same chain in reverse ending at the root; each hop reduces
//   SCATTER    the root sends each member its 1/p share directly
//   GATHER     every member sends its share directly to the root
//   BARRIER    dissemination: ceil(log2 p) rounds of 1-byte messages to
//              (i + 2^k) mod p, receiving from (i - 2^k) mod p
//
// `bytes` is the per-NPU comm_size of the trace node.
#pragma once
#include <cstdint>
#include <vector>

#include "core/tick.h"
#include "system/options.h"

namespace orrery {

enum class RootedKind { kBroadcast, kReduce, kScatter, kGather, kBarrier };

// `members` sorted; `self` and `root` are ranks in it. `reduce_ns` is the cost
// of combining one received message (REDUCE only).
CustomGraph BuildRootedCollective(RootedKind kind, const std::vector<int>& members, int self, int root, uint64_t bytes,
                                  Tick reduce_ns);

}  // namespace orrery
