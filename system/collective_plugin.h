// The collective-algorithm interface a plugin implements: given one phase of
// a collective (its type, the members of the ring or group in order, this
// rank, the bytes per rank) it returns this rank's small graph of sends,
// receives and compute steps. The same graphs carry ASTRA-sim's
// "*-implementation-custom" traces. Standard library and core/registry.h only.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/registry.h"

namespace orrery {

enum class ComType { kAllReduce, kAllGather, kReduceScatter, kAllToAll };
const char* ComTypeName(ComType t);

// One rank's algorithm graph. Ops are in id order; `children` index into the
// same list.
struct CustomOp {
  enum Kind : uint8_t { kSend, kRecv, kComp, kNop } kind = kNop;
  int peer = -1;
  uint64_t bytes = 0;
  uint64_t tag = 0;
  uint64_t duration_ns = 0;
  uint32_t num_deps = 0;
  std::vector<uint32_t> children;
};
using CustomGraph = std::vector<CustomOp>;

struct CollectiveRequest {
  ComType type;
  std::vector<int> members;  // ranks taking part, in ring order
  int self;                  // this rank (one of members)
  uint64_t bytes;            // data per rank entering the phase
};
using CollectiveAlgorithmFn = std::function<CustomGraph(const CollectiveRequest&)>;

// The algorithms plugins add, by name (the built-in names of
// core/algorithm_kind.h are refused).
class CollectiveRegistry {
 public:
  struct Entry {
    std::string description;
    CollectiveAlgorithmFn build;
  };
  // Fails when the name is taken (built-in algorithm names included).
  bool Register(const std::string& name, std::string description, CollectiveAlgorithmFn build, std::string* error);
  const Entry* Find(const std::string& name) const;
  std::vector<std::string> Names() const;

 private:
  NameRegistry<Entry> entries_{"collective algorithm"};
};

}  // namespace orrery
