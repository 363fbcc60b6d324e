// Which engine call runs a trace's collective: the symmetric kinds go to
// CollectiveEngine::IssueCollective as a ComType (the plugin ABI's enum, which
// has no REDUCE_SCATTER_BLOCK: it runs as REDUCE_SCATTER), the rooted ones
// (IsRooted) to IssueRooted as a RootedKind.
#pragma once
#include <optional>

#include "core/collective_kind.h"
#include "system/collective_plugin.h"
#include "system/rooted_collectives.h"

namespace orrery {

// The ComType of a symmetric kind; nullopt for a rooted kind or kNone.
constexpr std::optional<ComType> ToComType(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllReduce: return ComType::kAllReduce;
    case CollectiveKind::kAllGather: return ComType::kAllGather;
    case CollectiveKind::kAllToAll: return ComType::kAllToAll;
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kReduceScatterBlock: return ComType::kReduceScatter;
    default: return std::nullopt;
  }
}

// The RootedKind of a rooted kind; nullopt for a symmetric kind or kNone.
constexpr std::optional<RootedKind> ToRootedKind(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kReduce: return RootedKind::kReduce;
    case CollectiveKind::kGather: return RootedKind::kGather;
    case CollectiveKind::kScatter: return RootedKind::kScatter;
    case CollectiveKind::kBroadcast: return RootedKind::kBroadcast;
    case CollectiveKind::kBarrier: return RootedKind::kBarrier;
    default: return std::nullopt;
  }
}

}  // namespace orrery
