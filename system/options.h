// What the system layer needs to know, in its own terms (the ASTRA-sim system
// JSON is mapped onto this by the run wiring).
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace orrery {

enum class ComType { kAllReduce, kAllGather, kReduceScatter, kAllToAll };
const char* ComTypeName(ComType t);

enum class AlgoKind { kRing, kDirect, kHalvingDoubling, kDoubleBinaryTree, kCustom, kPlugin, kInSwitch };

// A collective algorithm given as one small graph per rank (ASTRA-sim's
// "*-implementation-custom": per-rank Chakra traces of sends, receives and
// compute steps). Ops are in id order; `children` index into the same list.
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

// A collective algorithm from a plugin: given one phase (the collective type,
// the members of the ring or group in order, this rank, the bytes per rank),
// it returns this rank's graph of sends, receives and compute steps.
struct CollectiveRequest {
  ComType type;
  std::vector<int> members;  // ranks taking part, in ring order
  int self;                  // this rank (one of members)
  uint64_t bytes;            // data per rank entering the phase
};
using CollectiveAlgorithmFn = std::function<CustomGraph(const CollectiveRequest&)>;

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
  std::map<std::string, Entry> entries_;
};

struct AlgoSpec {
  AlgoKind kind = AlgoKind::kRing;
  bool one = false;  // one* variants: one logical ring over all NPUs
  int window = -1;   // direct<N>
  std::string name = "ring";
  std::shared_ptr<const std::vector<CustomGraph>> custom;  // kCustom: one graph per rank
  std::shared_ptr<const CustomGraph> graph;                 // kCustom built for one rank (rooted collectives)
  const CollectiveRegistry::Entry* plugin = nullptr;         // kPlugin
};

struct SystemOptions {
  bool lifo = true;
  uint64_t endpoint_delay_ns = 10;
  int active_chunks_per_dimension = 1;
  int preferred_dataset_splits = 1;
  bool local_bw_aware = false;
  bool themis = false;                 // inter-dimension-scheduling: themis (else ascending)
  bool smallest_first = false;         // intra-dimension-scheduling: SmallestFirst (else FIFO)
  double local_mem_bw = 0;  // bytes per ns for the reduction cost (0: no cost)
  double in_switch_reduction_bw = 0;  // bytes per ns a reduction-capable switch combines (inSwitch algorithm)
  // Per collective type, one algorithm per dimension.
  std::vector<AlgoSpec> all_reduce, all_gather, reduce_scatter, all_to_all;
  const std::vector<AlgoSpec>& ImplFor(ComType t) const {
    switch (t) {
      case ComType::kAllReduce: return all_reduce;
      case ComType::kAllGather: return all_gather;
      case ComType::kReduceScatter: return reduce_scatter;
      case ComType::kAllToAll: return all_to_all;
    }
    return all_reduce;
  }
};

}  // namespace orrery
