// Recycles the memory of small hot-path objects (a phase's algorithm, a
// chunk's stream): a per-thread free list per 64-byte size class, so starting
// a phase allocates nothing in steady state. Classes opt in by deriving from
// Pooled (their operator new/delete come from here); objects over 512 bytes
// fall through to the global heap. Per thread because sweeps run simulations
// on a thread pool; a block freed on another thread joins that thread's list.
#pragma once
#include <cstddef>
#include <new>
#include <vector>

namespace orrery {

class SmallPool {
 public:
  static constexpr size_t kGrain = 64;
  static constexpr size_t kClasses = 8;  // up to 512 bytes

  static void* Allocate(size_t bytes) {
    const size_t c = (bytes + kGrain - 1) / kGrain;
    if (c == 0 || c > kClasses) return ::operator new(bytes);
    std::vector<void*>& list = Lists().free[c - 1];
    if (list.empty()) return ::operator new(c * kGrain, std::align_val_t{kGrain});
    void* p = list.back();
    list.pop_back();
    return p;
  }
  static void Free(void* p, size_t bytes) {
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
  struct ThreadLists {
    std::vector<void*> free[kClasses];
    ~ThreadLists() {
      for (auto& l : free) {
        for (void* p : l) ::operator delete(p, std::align_val_t{kGrain});
      }
    }
  };
  static ThreadLists& Lists() {
    thread_local ThreadLists lists;
    return lists;
  }
};

// Derive from this to allocate from SmallPool (the class needs a virtual
// destructor when deleted through a base pointer, so the size is the object's).
struct Pooled {
  static void* operator new(size_t bytes) { return SmallPool::Allocate(bytes); }
  static void operator delete(void* p, size_t bytes) { SmallPool::Free(p, bytes); }
};

}  // namespace orrery
