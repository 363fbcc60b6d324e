// Recycles the memory of small hot-path objects (a phase's algorithm, a
// collective's chunk): a per-thread free list per 64-byte size class, so starting
// a phase allocates nothing in steady state. Classes opt in by deriving from
// Pooled (their operator new/delete come from here); objects over 512 bytes
// fall through to the global heap. Per thread because sweeps run simulations
// on a thread pool; a block freed on another thread joins that thread's list.
// A size class grows by slabs of huge pages (core/huge_pages.h), cut into
// blocks in address order. Slabs are kept for the process's life in one
// registry (a block may end on another thread's list, so no thread may free
// a slab); free lists only ever hold blocks of them, so memory does not grow
// beyond the largest simultaneous use. The full engine places chunks and
// algorithms in rank arenas instead (system/rank_arena.h) when they fit; a
// free goes back to whichever of the two gave the memory.
#pragma once
#include <cstddef>
#include <mutex>
#include <new>
#include <vector>

#include "core/huge_pages.h"
#include "system/rank_arena.h"

namespace orrery {

class SmallPool {
 public:
  static constexpr size_t kGrain = 64;
  static constexpr size_t kClasses = 8;  // up to 512 bytes

  static void* Allocate(size_t bytes) {
    const size_t c = (bytes + kGrain - 1) / kGrain;
    if (c == 0 || c > kClasses) return ::operator new(bytes);
    ThreadLists& lists = Lists();
    std::vector<void*>& list = lists.free[c - 1];
    if (list.empty()) lists.Grow(c * kGrain, &list);
    void* p = list.back();
    list.pop_back();
    return p;
  }
  static void Free(void* p, size_t bytes) {
    if (RankArena::GiveBack(p)) return;  // it was placed by rank (system/rank_arena.h)
    const size_t c = (bytes + kGrain - 1) / kGrain;
    if (c == 0 || c > kClasses) {
      ::operator delete(p);
      return;
    }
    Lists().free[c - 1].push_back(p);
  }
  // Blocks start on a cache line (kGrain = 64): an object's first line holds
  // its vtable pointer and the fields declared first.

 private:
  static constexpr size_t kSlabBytes = kHugePageBytes;
  struct Slabs {
    std::mutex mu;
    std::vector<void*> all;  // reachable to the end (no leak report), never freed
  };
  static Slabs& AllSlabs() {
    static Slabs* slabs = new Slabs;  // outlives every thread's lists
    return *slabs;
  }
  struct ThreadLists {
    std::vector<void*> free[kClasses];
    // A new slab's blocks, the lowest address on top of the list.
    void Grow(size_t block, std::vector<void*>* list) {
      char* slab = static_cast<char*>(AllocateHuge(kSlabBytes));
      {
        Slabs& s = AllSlabs();
        std::lock_guard<std::mutex> lock(s.mu);
        s.all.push_back(slab);
      }
      const size_t n = kSlabBytes / block;
      list->reserve(list->size() + n);
      for (size_t i = n; i > 0; --i) list->push_back(slab + (i - 1) * block);
    }
  };
  static ThreadLists& Lists() {
    thread_local ThreadLists lists;
    return lists;
  }
};

// Derive from this to allocate from SmallPool (the class needs a virtual
// destructor when deleted through a base pointer, so the size is the object's).
// `new (arena, rank) T(...)` places the object in `arena`'s slot for `rank`
// when it fits (system/rank_arena.h), else in the pool; delete finds either.
struct Pooled {
  static void* operator new(size_t bytes) { return SmallPool::Allocate(bytes); }
  static void* operator new(size_t bytes, RankArena* arena, int rank) {
    if (arena) {
      if (void* p = arena->Take(bytes, rank)) return p;
    }
    return SmallPool::Allocate(bytes);
  }
  static void operator delete(void* p, size_t bytes) { SmallPool::Free(p, bytes); }
  // Only when a constructor throws after the placement new (bad_alloc, which
  // ends the run): an arena slot goes back; a pool block of unknown size class
  // is kept.
  static void operator delete(void* p, RankArena*, int) { (void)RankArena::GiveBack(p); }
};

}  // namespace orrery
