// Memory for the hot path's pools, asked of the kernel as transparent huge
// pages. At 16K NPUs the simulator's working set (streams, algorithms, queued
// events) is hundreds of MiB touched in no particular order: with 4 KiB pages
// most accesses miss the TLB (and, in a VM, pay a nested page walk). 2 MiB
// pages remove most of those misses. Where the kernel does not give huge
// pages (THP "never", or not Linux), this is ordinary aligned memory.
#pragma once
#include <cstddef>
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

}  // namespace orrery
