#include "system/chunk.h"

#include "core/status.h"
#include "system/chunk_store.h"
#include "system/npu_sys.h"

namespace orrery {

static_assert(sizeof(Chunk) <= 192, "Chunk: three cache lines (its rank arena slot)");

Chunk::Chunk(NpuSys* owner, CollectiveHandle* coll, uint64_t tag, int group_pos, int priority,
             std::vector<PhaseSpec> phases)
    : ctx_(owner->context()),
      rank_(owner->rank()),
      owner_(owner),
      coll_(coll),
      tag_(tag),
      priority_(priority),
      group_pos_(group_pos),
      phases_(std::move(phases)) {}

void Chunk::Deliver(int src) {
  if (mail_.Arrive(src)) OnRecv(0);
}

inline void Chunk::Dispatch(uint32_t kind, uint64_t arg) {
  if (kind == kDelivered) {
    Deliver(static_cast<int>(arg));
    return;
  }
  if (kind == kTimer) {
    algo_->OnTimer(arg);
    return;
  }
  algo_->OnBundleDone();  // kBundleArrived, kBundleProcessed
}

// Every path of the common case ends in a call with nothing after it (a
// jump: this function saves no registers); freeing what an ended phase left
// (ChunkStore::CollectGarbage, before the event, as ever) is the rare case.
void Chunk::HandleEvent(uint32_t kind, uint64_t arg) {
  if (__builtin_expect(ctx_->store->has_garbage(), 0)) {
    CollectThenDispatch(kind, arg);
    return;
  }
  Dispatch(kind, arg);
}

void Chunk::CollectThenDispatch(uint32_t kind, uint64_t arg) {
  ctx_->store->CollectGarbage();
  Dispatch(kind, arg);
}

void Chunk::OnRecv(uint64_t) { algo_->OnPacketReceived(); }

void Chunk::PostRecvFrom(int src) {
  if (mail_.on()) {
    if (mail_.Post(src)) OnRecv(0);
    return;
  }
  owner_->PostRecv(src, tag_, 0, this, 0);
}

bool Chunk::MailboxEligible() const {
  for (const PhaseSpec& p : phases_) {
    const AlgoKind k = p.algo.kind;
    if (k != AlgoKind::kRing && k != AlgoKind::kHalvingDoubling && k != AlgoKind::kDoubleBinaryTree) return false;
  }
  return true;
}

void Chunk::StartPhase() {
  ORRERY_CHECK(!phase_started_, "stream phase initialised twice");
  phase_started_ = true;
  algo_->OnInit();
}

}  // namespace orrery
