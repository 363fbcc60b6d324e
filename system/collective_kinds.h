// How each collective kind of a trace (core/collective_kind.h) runs here:
// a symmetric kind as a ComType planned over the network's dimensions
// (system/collective_engine.h), a rooted kind as a RootedKind graph
// (system/rooted_collectives.h).
#pragma once
#include "core/collective_kind.h"
#include "core/status.h"
#include "system/collective_plugin.h"
#include "system/rooted_collectives.h"

namespace orrery {

// A symmetric kind's type; REDUCE_SCATTER_BLOCK runs as a reduce-scatter.
inline ComType SymmetricType(CollectiveKind kind) {
  ORRERY_CHECK(!IsRooted(kind), "a rooted collective has no symmetric type");
  switch (kind) {
    case CollectiveKind::kAllGather: return ComType::kAllGather;
    case CollectiveKind::kAllToAll: return ComType::kAllToAll;
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kReduceScatterBlock: return ComType::kReduceScatter;
    default: return ComType::kAllReduce;
  }
}

inline RootedKind RootedType(CollectiveKind kind) {
  ORRERY_CHECK(IsRooted(kind), "a symmetric collective is not rooted");
  switch (kind) {
    case CollectiveKind::kReduce: return RootedKind::kReduce;
    case CollectiveKind::kGather: return RootedKind::kGather;
    case CollectiveKind::kScatter: return RootedKind::kScatter;
    case CollectiveKind::kBarrier: return RootedKind::kBarrier;
    default: return RootedKind::kBroadcast;
  }
}

}  // namespace orrery
