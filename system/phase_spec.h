// One phase of a chunk, as the engine plans it and an algorithm runs it: the
// collective type on one logical ring (a dimension, a flat group or all NPUs),
// its sizes and its algorithm.
#pragma once
#include <cstdint>
#include <vector>

#include "system/options.h"

namespace orrery {

// The members of one logical ring (or tree) as seen by one NPU: either a
// regular slice of a dimension (base + k * offset) or an explicit list.
struct RingView {
  const std::vector<int>* members = nullptr;  // explicit list (communicator groups)
  int size = 0;
  int index = 0;   // this NPU's position
  int base = 0;    // id of position 0 (regular slices)
  int offset = 1;  // id stride between positions (regular slices)
  int Member(int k) const { return members ? (*members)[k] : base + k * offset; }
  int Next(int k, bool clockwise) const {
    return clockwise ? (k + 1 == size ? 0 : k + 1) : (k == 0 ? size - 1 : k - 1);
  }
  // `steps` (>= 0) applications of Next from position k, in O(1).
  int Advance(int k, int steps, bool clockwise) const {
    const int s = steps % size;
    return clockwise ? (k + s) % size : (k - s + size) % size;
  }
};

struct PhaseSpec {
  ComType type = ComType::kAllReduce;
  int queue_id = 0;
  uint64_t size = 0;
  uint64_t final_size = 0;
  AlgoSpec algo;
  RingView ring;
  bool dbt_root_max = true;  // double binary tree: which of the two trees
};

}  // namespace orrery
