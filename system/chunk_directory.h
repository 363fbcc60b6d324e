// Where a collective chunk's messages go. Every member of a collective numbers
// its chunks alike, so one tag (system/tag.h) names the same chunk on every
// member; the directory holds, per live tag, each member's receiving Chunk by
// the member's position in the group (its rank when there is no group). A
// message is then delivered with one cached lookup of its tag and one load
// from a page of positions, without probing the receiver's match table.
// Pages of 256 positions (cut from slabs of huge pages) are allocated on first use and recycled, so a tag
// costs memory for the members that have started it only; an entry is freed
// when its last registered chunk ends (a member that starts later makes it
// anew). O(1) per message, no allocation in steady state.
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "core/huge_pages.h"

namespace orrery {

class Chunk;

class ChunkDirectory {
 public:
  // The chunk at `pos` for `tag`, or nullptr (not started yet, or ended).
  Chunk* Find(uint64_t tag, int pos) {
    const Entry* e = Lookup(tag);
    if (!e) return nullptr;
    const size_t p = static_cast<size_t>(pos) >> kPageBits;
    if (p >= e->pages.size() || !e->pages[p]) return nullptr;
    return e->pages[p][pos & kPageMask];
  }

  void Register(uint64_t tag, int pos, Chunk* s) {
    Entry* e = Lookup(tag);
    if (!e) e = NewEntry(tag);
    const size_t p = static_cast<size_t>(pos) >> kPageBits;
    if (p >= e->pages.size()) e->pages.resize(p + 1, nullptr);
    if (!e->pages[p]) e->pages[p] = NewPage();
    e->pages[p][pos & kPageMask] = s;
    ++e->live;
  }

  void Unregister(uint64_t tag, int pos) {
    Entry* e = Lookup(tag);
    if (!e) return;
    e->pages[static_cast<size_t>(pos) >> kPageBits][pos & kPageMask] = nullptr;
    if (--e->live > 0) return;
    // Every registered slot has been cleared: the pages are all null again.
    for (Chunk** page : e->pages) {
      if (page) free_pages_.push_back(page);
    }
    e->pages.clear();
    CacheSlot& c = cache_[CacheIndex(tag)];
    if (c.entry == e) c = CacheSlot{};
    index_.erase(tag);
    free_entries_.push_back(e);
  }

  size_t live_tags() const { return index_.size(); }

 private:
  static constexpr int kPageBits = 8;
  static constexpr int kPageMask = (1 << kPageBits) - 1;
  static constexpr size_t kCache = 16;  // direct-mapped: the few tags in use at one time
  struct Entry {
    uint64_t tag = 0;
    int live = 0;  // registered chunks not yet ended
    std::vector<Chunk**> pages;
  };
  struct CacheSlot {
    uint64_t tag = 0;
    Entry* entry = nullptr;
  };
  static size_t CacheIndex(uint64_t tag) { return static_cast<size_t>((tag * 0x9E3779B97F4A7C15ull) >> 60); }

  Entry* Lookup(uint64_t tag) {
    CacheSlot& c = cache_[CacheIndex(tag)];
    if (c.entry && c.tag == tag) return c.entry;
    const auto it = index_.find(tag);
    if (it == index_.end()) return nullptr;
    c = CacheSlot{tag, it->second};
    return it->second;
  }
  Entry* NewEntry(uint64_t tag) {
    Entry* e;
    if (!free_entries_.empty()) {
      e = free_entries_.back();
      free_entries_.pop_back();
    } else {
      entries_.push_back(std::make_unique<Entry>());
      e = entries_.back().get();
    }
    e->tag = tag;
    e->live = 0;
    index_[tag] = e;
    return e;
  }
  Chunk** NewPage() {
    if (!free_pages_.empty()) {
      Chunk** p = free_pages_.back();
      free_pages_.pop_back();
      return p;
    }
    // A new page cut from a slab of huge pages (read at random at 16K NPUs).
    if (slab_left_ == 0) {
      slabs_.push_back(SlabPtr(static_cast<Chunk**>(AllocateHuge(kHugePageBytes))));
      slab_next_ = slabs_.back().get();
      slab_left_ = kHugePageBytes / kPageBytes;
    }
    Chunk** p = slab_next_;
    slab_next_ += size_t{1} << kPageBits;
    --slab_left_;
    std::fill(p, p + (size_t{1} << kPageBits), nullptr);
    return p;
  }

  CacheSlot cache_[kCache];
  std::unordered_map<uint64_t, Entry*> index_;
  std::vector<std::unique_ptr<Entry>> entries_;
  std::vector<Entry*> free_entries_;
  static constexpr size_t kPageBytes = sizeof(Chunk*) << kPageBits;
  struct FreeSlab {
    void operator()(Chunk** p) const { FreeHuge(p); }
  };
  using SlabPtr = std::unique_ptr<Chunk*[], FreeSlab>;
  std::vector<SlabPtr> slabs_;
  Chunk** slab_next_ = nullptr;
  size_t slab_left_ = 0;  // pages not yet cut from the newest slab
  std::vector<Chunk**> free_pages_;
};

}  // namespace orrery
