// Memory for the hot path's pools, asked of the kernel as transparent huge
// pages. At 16K NPUs the simulator's working set (streams, algorithms, queued
// events) is hundreds of MiB touched in no particular order: with 4 KiB pages
// most accesses miss the TLB (and, in a VM, pay a nested page walk). 2 MiB
// pages remove most of those misses. Where the kernel does not give huge
// pages (THP "never", or not Linux), this is ordinary aligned memory.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace orrery {

inline constexpr size_t kHugePageBytes = size_t{2} << 20;

// `bytes` rounded up to whole huge pages, aligned to one; never null.
inline void* AllocateHuge(size_t bytes) {
  const size_t size = (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  void* p = std::aligned_alloc(kHugePageBytes, size);
  if (!p) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  madvise(p, size, MADV_HUGEPAGE);  // a hint: failure (THP off) leaves normal pages
#endif
  return p;
}

inline void FreeHuge(void* p) { std::free(p); }

// A std::vector allocator for the hot path's large arrays (message slots, the
// event wheel's slots): arrays of kHugeArrayBytes or more come from
// AllocateHuge, smaller ones from the global heap. Stateless, so equal.
inline constexpr size_t kHugeArrayBytes = size_t{1} << 20;

template <typename T>
struct HugePageAllocator {
  // Small arrays come from plain operator new, aligned for ordinary types only.
  static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__,
                "HugePageAllocator: over-aligned types are not supported");
  using value_type = T;
  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) {}  // NOLINT: rebinding, as std::allocator
  T* allocate(size_t n) {
    if (n > SIZE_MAX / sizeof(T)) throw std::bad_alloc();
    if (n * sizeof(T) >= kHugeArrayBytes) return static_cast<T*>(AllocateHuge(n * sizeof(T)));
    return static_cast<T*>(::operator new(n * sizeof(T)));
  }
  void deallocate(T* p, size_t n) {
    if (n * sizeof(T) >= kHugeArrayBytes) {
      FreeHuge(p);
    } else {
      ::operator delete(p);
    }
  }
  template <typename U>
  bool operator==(const HugePageAllocator<U>&) const {
    return true;
  }
  template <typename U>
  bool operator!=(const HugePageAllocator<U>&) const {
    return false;
  }
};

}  // namespace orrery
