#include "system/rooted_collectives.h"

#include <algorithm>

namespace orrery {

namespace {

struct Builder {
  CustomGraph g;
  int last = -1;  // the previous op in a chain
  uint32_t Add(CustomOp::Kind kind, int peer, uint64_t bytes, uint64_t tag, Tick duration, bool chain) {
    CustomOp op;
    op.kind = kind;
    op.peer = peer;
    op.bytes = bytes;
    op.tag = tag;
    op.duration_ns = duration;
    const uint32_t id = static_cast<uint32_t>(g.size());
    g.push_back(op);
    if (chain && last >= 0) {
      g[last].children.push_back(id);
      g[id].num_deps++;
    }
    last = static_cast<int>(id);
    return id;
  }
};

}  // namespace

CustomGraph BuildRootedCollective(RootedKind kind, const std::vector<int>& members, int self, int root, uint64_t bytes,
                                  Tick reduce_ns) {
  const int p = static_cast<int>(members.size());
  const int me = static_cast<int>(std::lower_bound(members.begin(), members.end(), self) - members.begin());
  const int r = static_cast<int>(std::lower_bound(members.begin(), members.end(), root) - members.begin());
  const int pos = (me - r + p) % p;  // distance from the root along the chain
  auto at = [&](int k) { return members[(r + k) % p]; };
  Builder b;
  switch (kind) {
    case RootedKind::kBroadcast:
      if (pos > 0) b.Add(CustomOp::kRecv, at(pos - 1), bytes, 0, 0, true);
      if (pos < p - 1) b.Add(CustomOp::kSend, at(pos + 1), bytes, 0, 0, true);
      break;
    case RootedKind::kReduce:
      // Chain from the far end back to the root: receive, reduce, pass on.
      if (pos < p - 1) {
        b.Add(CustomOp::kRecv, at(pos + 1), bytes, 0, 0, true);
        b.Add(CustomOp::kComp, -1, 0, 0, reduce_ns, true);
      }
      if (pos > 0) b.Add(CustomOp::kSend, at(pos - 1), bytes, 0, 0, true);
      break;
    case RootedKind::kScatter:
      if (pos == 0) {
        for (int k = 1; k < p; ++k) b.Add(CustomOp::kSend, at(k), bytes / p, 0, 0, false);
      } else {
        b.Add(CustomOp::kRecv, root, bytes / p, 0, 0, false);
      }
      break;
    case RootedKind::kGather:
      if (pos == 0) {
        for (int k = 1; k < p; ++k) b.Add(CustomOp::kRecv, at(k), bytes, 0, 0, false);
      } else {
        b.Add(CustomOp::kSend, root, bytes, 0, 0, false);
      }
      break;
    case RootedKind::kBarrier:
      for (int k = 0, step = 1; step < p; ++k, step *= 2) {
        const uint32_t s = b.Add(CustomOp::kSend, members[(me + step) % p], 1, k + 1, 0, true);
        (void)s;
        b.Add(CustomOp::kRecv, members[(me - step % p + p) % p], 1, k + 1, 0, true);
      }
      break;
  }
  return b.g;
}

}  // namespace orrery
