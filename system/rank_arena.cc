#include "system/rank_arena.h"

#include <algorithm>
#include <atomic>
#include <mutex>

#include "core/status.h"

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace orrery {

namespace {

// The live arenas. Frees of pooled objects ask here first, so the common case
// (no arena alive: symmetric runs, tests) is one atomic load.
struct Registry {
  std::mutex mu;
  std::vector<RankArena*> live;
};
Registry& Arenas() {
  static Registry* r = new Registry;  // outlives every arena, even at exit
  return *r;
}
std::atomic<int> live_count{0};
std::atomic<uint64_t> slots_taken_ever{0}, ranks_full_ever{0};  // once per object, not per message

constexpr size_t kLine = 64;

}  // namespace

RankArena::RankArena(size_t object_bytes, int ranks) {
  size_t lines = std::max<size_t>(1, (object_bytes + kLine - 1) / kLine);
  if (lines % 2 == 0) ++lines;
  slot_ = lines * kLine;
  if (ranks <= 0) return;
  plane_ = slot_ * static_cast<size_t>(ranks);
  used_.assign(static_cast<size_t>(ranks), 0);
#if defined(__linux__)
  // Address space only: a page is committed when an object first lands on it.
  const size_t bytes = plane_ * kPlanes;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return;  // no arena: every object comes from the SmallPool
#if defined(MADV_HUGEPAGE)
  madvise(p, bytes, MADV_HUGEPAGE);  // a hint, as in core/huge_pages.h
#endif
  base_ = static_cast<char*>(p);
  bytes_ = bytes;
  Registry& r = Arenas();
  std::lock_guard<std::mutex> lock(r.mu);
  r.live.push_back(this);
  live_count.fetch_add(1, std::memory_order_release);
#endif
}

RankArena::~RankArena() {
  if (!base_) return;
  ORRERY_CHECK(taken_ == 0, "rank arena destroyed while it still holds objects");
  {
    Registry& r = Arenas();
    std::lock_guard<std::mutex> lock(r.mu);
    r.live.erase(std::find(r.live.begin(), r.live.end(), this));
    live_count.fetch_sub(1, std::memory_order_release);
  }
#if defined(__linux__)
  munmap(base_, bytes_);
#endif
}

void* RankArena::Take(size_t bytes, int rank) {
  if (!base_ || bytes > slot_ || rank < 0 || static_cast<size_t>(rank) >= used_.size()) return nullptr;
  uint32_t& used = used_[static_cast<size_t>(rank)];
  if (used == ~uint32_t{0}) {
    ranks_full_ever.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  const int k = __builtin_ctz(~used);
  used |= uint32_t{1} << k;
  ++taken_;
  slots_taken_ever.fetch_add(1, std::memory_order_relaxed);
  return base_ + static_cast<size_t>(k) * plane_ + static_cast<size_t>(rank) * slot_;
}

void RankArena::Give(void* p) {
  const size_t offset = static_cast<size_t>(static_cast<char*>(p) - base_);
  const size_t k = offset / plane_;
  const size_t rank = offset % plane_ / slot_;
  uint32_t& used = used_[rank];
  ORRERY_CHECK(offset % plane_ % slot_ == 0 && (used >> k & 1), "rank arena: freeing a slot that is not taken");
  used &= ~(uint32_t{1} << k);
  --taken_;
}

uint64_t RankArena::SlotsTakenEver() { return slots_taken_ever.load(std::memory_order_relaxed); }
uint64_t RankArena::RanksFullEver() { return ranks_full_ever.load(std::memory_order_relaxed); }

bool RankArena::GiveBack(void* p) {
  if (live_count.load(std::memory_order_acquire) == 0) return false;
  Registry& r = Arenas();
  std::lock_guard<std::mutex> lock(r.mu);
  for (RankArena* a : r.live) {
    if (a->Owns(p)) {
      a->Give(p);
      return true;
    }
  }
  return false;
}

}  // namespace orrery
