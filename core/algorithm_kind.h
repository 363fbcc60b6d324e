// The collective algorithms Orrery runs: the one enum the engine switches on
// and, in one table, the names the configuration files use for the built-in
// ones (ASTRA-sim's spellings). The system JSON reader (extern/astra_config.cc)
// accepts exactly these names (plus direct<N>, oneDirect<N>, plugin names and
// the *-custom traces); the collective registry (system/collective_registry.cc)
// refuses a plugin that takes one of them. Standard library only: both the
// extern and the system layer include it.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace orrery {

enum class AlgoKind : uint8_t { kRing, kDirect, kHalvingDoubling, kDoubleBinaryTree, kCustom, kPlugin, kInSwitch };

struct BuiltinAlgorithm {
  const char* name;  // as written in the system JSON, e.g. "oneHalvingDoubling"
  AlgoKind kind;
  bool one;  // one* variants: one logical ring over all NPUs instead of one per dimension
};

// In the order error messages list them.
inline constexpr BuiltinAlgorithm kBuiltinAlgorithms[] = {
    {"ring", AlgoKind::kRing, false},
    {"direct", AlgoKind::kDirect, false},
    {"halvingDoubling", AlgoKind::kHalvingDoubling, false},
    {"doubleBinaryTree", AlgoKind::kDoubleBinaryTree, false},
    {"oneRing", AlgoKind::kRing, true},
    {"oneDirect", AlgoKind::kDirect, true},
    {"oneHalvingDoubling", AlgoKind::kHalvingDoubling, true},
    {"inSwitch", AlgoKind::kInSwitch, false},
};

// The built-in algorithm of that exact name, or null.
inline const BuiltinAlgorithm* FindBuiltinAlgorithm(std::string_view name) {
  for (const BuiltinAlgorithm& a : kBuiltinAlgorithms) {
    if (name == a.name) return &a;
  }
  return nullptr;
}

// Every built-in name, in table order.
inline std::vector<std::string> BuiltinAlgorithmNames() {
  std::vector<std::string> v;
  for (const BuiltinAlgorithm& a : kBuiltinAlgorithms) v.emplace_back(a.name);
  return v;
}

}  // namespace orrery
