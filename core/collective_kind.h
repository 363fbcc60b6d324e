// A collective as a trace names it: the one definition. Chakra's
// CollectiveCommType is decoded once, where a trace is read
// (workload/graph.cc); everything after it uses this enum, never the integer.
// The values are Chakra's wire values, so a trace writer writes a kind with a
// cast (gen/builder.cc, gen/trace_tools.cc).
//
//   kind                 wire  name                   runs as
//   kAllReduce             0   ALL_REDUCE             a symmetric collective over its dimensions
//   kReduce                1   REDUCE                 rooted (system/rooted_collectives.h)
//   kAllGather             2   ALL_GATHER             symmetric
//   kGather                3   GATHER                 rooted
//   kScatter               4   SCATTER                rooted
//   kBroadcast             5   BROADCAST              rooted
//   kAllToAll              6   ALL_TO_ALL             symmetric
//   kReduceScatter         7   REDUCE_SCATTER         symmetric
//   kReduceScatterBlock    8   REDUCE_SCATTER_BLOCK   symmetric, as a reduce-scatter
//   kBarrier               9   BARRIER                rooted (no payload)
#pragma once
#include <cstdint>

namespace orrery {

enum class CollectiveKind : uint8_t {
  kAllReduce = 0,
  kReduce = 1,
  kAllGather = 2,
  kGather = 3,
  kScatter = 4,
  kBroadcast = 5,
  kAllToAll = 6,
  kReduceScatter = 7,
  kReduceScatterBlock = 8,
  kBarrier = 9,
};
constexpr uint64_t kMaxCollectiveWire = 9;

// The trace's integer as a kind; false when it names none (> 9).
inline bool CollectiveKindFromWire(uint64_t wire, CollectiveKind* kind) {
  if (wire > kMaxCollectiveWire) return false;
  *kind = static_cast<CollectiveKind>(wire);
  return true;
}

// Chakra's name of the kind ("ALL_REDUCE", ...), as reports print it.
inline const char* CollectiveKindName(CollectiveKind kind) {
  static constexpr const char* kNames[] = {"ALL_REDUCE", "REDUCE",     "ALL_GATHER",     "GATHER",
                                           "SCATTER",    "BROADCAST",  "ALL_TO_ALL",     "REDUCE_SCATTER",
                                           "REDUCE_SCATTER_BLOCK", "BARRIER"};
  return kNames[static_cast<int>(kind)];
}

// Rooted kinds run from or to one rank (or, for a barrier, with no payload);
// the others are symmetric: every member sends and receives alike.
constexpr bool IsRooted(CollectiveKind kind) {
  return kind == CollectiveKind::kReduce || kind == CollectiveKind::kGather || kind == CollectiveKind::kScatter ||
         kind == CollectiveKind::kBroadcast || kind == CollectiveKind::kBarrier;
}

}  // namespace orrery
