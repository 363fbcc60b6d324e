// A sweep's output folder (explore/sweep.h): who may write it, and which spec
// its rows belong to.
//
//   STEM.jsonl.lock   an exclusive lock (flock) held by the one sweep (or merge)
//                     writing STEM.jsonl and STEM.csv; a second one exits 1
//   sweep.lock        held for a moment while a sweep compares identities
//   STEM.id           the identity of the spec the rows of STEM came from
//
// STEM is "sweep" or "sweep.shard-I-of-N". A sweep of another spec in a folder
// whose rows belong to one is refused (exit 2, both identities named) instead
// of dropping those rows; `sweep merge` refuses shards of different specs.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "explore/sweep.h"

namespace orrery::sweep {

// An exclusive lock on a file in the folder, held while this lives.
class FolderLock {
 public:
  FolderLock() = default;
  FolderLock(FolderLock&& other) noexcept;
  FolderLock& operator=(FolderLock&& other) noexcept;
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;
  ~FolderLock();

  // `wait`: block until the lock is free; else fail at once, exit 1 naming
  // the folder, that it is in use and by which process.
  static Result<FolderLock> Take(const std::string& dir, const std::string& name, bool wait);

 private:
  int fd_ = -1;
};

// What the rows of one output came from (STEM.id, one JSON object).
struct FolderIdentity {
  std::string identity;  // 16 hex digits: the base's resolved inputs, the points before filters, the options
  std::string spec;      // the spec file, for messages
  std::vector<std::string> axis_paths;
  uint64_t points = 0;  // the spec's points (after its filters)
  uint64_t rows = 0;    // this output's share of them: its shard's, or all
  int shard_index = 0, shard_count = 1;
  bool merged = false;  // sweep.jsonl made by `sweep merge` from shard_count shards
};

// "sweep" or "sweep.shard-I-of-N".
std::string StemName(int shard_index, int shard_count);
// The identity of a sweep: `base_canonical` is SpecCanonical of its base.
std::string SpecIdentity(const SweepSpec& spec, const std::string& base_canonical, bool critical_path);

Result<std::optional<FolderIdentity>> ReadIdentity(const std::string& path);
// Under DIR/sweep.lock: every STEM.id already in `dir` must hold `id.identity`
// (else exit 2 naming both specs and identities); then STEM.id is written.
Status ClaimFolder(const std::string& dir, const FolderIdentity& id);
// The temporary files killed writers of STEM left (".STEM.jsonl.tmp-*", ".STEM.csv.tmp-*"),
// removed; call it holding STEM's lock.
void RemoveStaleTemporaries(const std::string& dir, const std::string& stem);

}  // namespace orrery::sweep
