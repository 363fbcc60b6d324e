// The kinds of node in a rank's graph: the one enum the trace reader, the
// generator, the executor and the reports switch on. Each value is Chakra's
// NodeType number (extern/chakra.proto); only the trace reader and writer see
// those numbers (NodeKindFromChakra). Standard library only.
#pragma once
#include <cstdint>
#include <optional>

namespace orrery {

enum class NodeKind : uint8_t {
  kInvalid = 0,
  kMetadata = 1,
  kMemLoad = 2,
  kMemStore = 3,
  kComp = 4,
  kSend = 5,
  kRecv = 6,
  kColl = 7,
};
inline constexpr int kNumNodeKinds = 8;

// Chakra's names, by number.
inline constexpr const char* kNodeTypeNames[kNumNodeKinds] = {"INVALID_NODE",   "METADATA_NODE", "MEM_LOAD_NODE",
                                                              "MEM_STORE_NODE", "COMP_NODE",     "COMM_SEND_NODE",
                                                              "COMM_RECV_NODE", "COMM_COLL_NODE"};

// The kind Chakra numbers `type`; nullopt outside 0..7.
constexpr std::optional<NodeKind> NodeKindFromChakra(int64_t type) {
  if (type < 0 || type >= kNumNodeKinds) return std::nullopt;
  return static_cast<NodeKind>(type);
}

// Chakra's name, "COMP_NODE".
constexpr const char* NodeTypeName(NodeKind kind) {
  const int n = static_cast<int>(kind);
  return n < kNumNodeKinds ? kNodeTypeNames[n] : "UNKNOWN";
}

constexpr bool IsMemoryAccess(NodeKind kind) { return kind == NodeKind::kMemLoad || kind == NodeKind::kMemStore; }

}  // namespace orrery
