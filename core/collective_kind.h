// The collectives a Chakra trace names: the one enum the workload, run and
// report rooms switch on. Each value is Chakra's CollectiveCommType number
// (extern/chakra.proto); only the trace reader and writer see those numbers
// (CollectiveKindFromChakra, ChakraNumber), everything else the enum. The
// engine runs a kind through ComType (the plugin ABI's four symmetric kinds) or
// RootedKind: workload/engine_collective.h converts. Standard library only.
#pragma once
#include <cstdint>
#include <optional>

namespace orrery {

enum class CollectiveKind : int8_t {
  kNone = -1,  // not a collective node
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
inline constexpr int kNumCollectiveKinds = 10;

// Chakra's names, by number.
inline constexpr const char* kCollectiveNames[kNumCollectiveKinds] = {
    "ALL_REDUCE", "REDUCE",         "ALL_GATHER",           "GATHER", "SCATTER", "BROADCAST",
    "ALL_TO_ALL", "REDUCE_SCATTER", "REDUCE_SCATTER_BLOCK", "BARRIER"};

// The kind Chakra numbers `comm_type`; nullopt outside 0..9.
constexpr std::optional<CollectiveKind> CollectiveKindFromChakra(uint64_t comm_type) {
  if (comm_type >= kNumCollectiveKinds) return std::nullopt;
  return static_cast<CollectiveKind>(comm_type);
}

// The number a trace writes for `kind` (-1 for kNone).
constexpr int ChakraNumber(CollectiveKind kind) { return static_cast<int>(kind); }

// Chakra's name, "ALL_REDUCE"; "UNKNOWN" for kNone.
constexpr const char* CollectiveName(CollectiveKind kind) {
  const int n = ChakraNumber(kind);
  return n >= 0 && n < kNumCollectiveKinds ? kCollectiveNames[n] : "UNKNOWN";
}

// REDUCE, GATHER, SCATTER, BROADCAST and BARRIER have a root (or, a barrier,
// none) and run over the group or all NPUs, whatever involved_dim says; the
// others are symmetric: every member does the same.
constexpr bool IsRooted(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kReduce:
    case CollectiveKind::kGather:
    case CollectiveKind::kScatter:
    case CollectiveKind::kBroadcast:
    case CollectiveKind::kBarrier: return true;
    default: return false;
  }
}

// A barrier moves no data: its node needs no comm_size.
constexpr bool CarriesBytes(CollectiveKind kind) { return kind != CollectiveKind::kBarrier; }

}  // namespace orrery
