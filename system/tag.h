// Message tags: the one definition. A receive takes the message whose (tag,
// sub, source) equal its own. 64 bits:
//   collective chunk    bits 63-62 = 00, bits 61-40 = group + 1 (0: no
//                       communicator group), bits 39-0 = the chunk's number
//                       on its rank in that group (2^40 chunks per rank and
//                       group; each rank numbers its chunks in issue order,
//                       so the members of a collective agree without talking)
//   point-to-point      bit 63 = 1, bits 62-0 = the trace's tag
//   transport only      bits 63-62 = 01: memory traffic over the network,
//                       never matched (only the sender hears of delivery)
// `sub` tells apart the messages of one custom-algorithm chunk (rooted
// collectives, ASTRA-sim custom traces, plugins): the op's own tag, whole (it
// no longer shares bits with the chunk number). Built-in algorithms use 0.
#pragma once
#include <cstdint>

#include "core/status.h"

namespace orrery::tags {

constexpr uint64_t kPointToPoint = uint64_t{1} << 63;
constexpr uint64_t kRaw = uint64_t{1} << 62;
constexpr int kChunkBits = 40;
constexpr uint64_t kMaxChunks = uint64_t{1} << kChunkBits;
constexpr int kMaxGroups = (1 << 22) - 2;  // group + 1 fits bits 61-40

inline uint64_t Chunk(int group, uint64_t number) {
  ORRERY_CHECK(number < kMaxChunks, "more than 2^40 collective streams on one rank");
  ORRERY_CHECK(group >= -1 && group < kMaxGroups, "communicator group out of the tag's range");
  return (static_cast<uint64_t>(group + 1) << kChunkBits) | number;
}
// A collective chunk's group (-1: none).
inline int ChunkGroup(uint64_t chunk_tag) {
  return static_cast<int>((chunk_tag >> kChunkBits) & ((uint64_t{1} << 22) - 1)) - 1;
}
inline uint64_t PointToPoint(uint64_t trace_tag) { return kPointToPoint | trace_tag; }
inline bool IsPointToPoint(uint64_t tag) { return (tag & kPointToPoint) != 0; }
inline bool IsRaw(uint64_t tag) { return (tag & (kPointToPoint | kRaw)) == kRaw; }
inline uint64_t TraceTag(uint64_t tag) { return tag & ~kPointToPoint; }

}  // namespace orrery::tags
