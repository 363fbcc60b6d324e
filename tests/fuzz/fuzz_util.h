// Shared pieces of the fuzz targets: a per-process scratch folder, the fixed
// small inputs a target combines with the fuzzed one, and a capped run.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "run/run.h"

namespace orrery::fuzz {

// Ranks of the fixed inputs (Ring of kRanks NPUs).
inline constexpr int kRanks = 4;

// A folder unique to this process, removed at exit: under /dev/shm when it
// exists and TMPDIR is not set (so synced writes cost nothing), else TMPDIR.
const std::string& Scratch();
// Writes the bytes to Scratch()/name and returns the path.
std::string WriteInput(const std::string& name, const uint8_t* data, size_t size);
// An empty folder Scratch()/name (emptied when it exists); returns its path.
std::string FreshDir(const std::string& name);
// A fuzzed bundle of files: each file starts with a line "@@ NAME" and holds
// the lines up to the next such line; bytes before the first are the head
// (`head`, may be null). NAME keeps only [A-Za-z0-9._-] (never "." or ".."),
// so every file stays inside the folder it is written to. At most 16 files.
using Bundle = std::vector<std::pair<std::string, std::string>>;
Bundle SplitBundle(const uint8_t* data, size_t size, std::string* head = nullptr);
// Writes the bundle's files into `dir`.
void WriteBundle(const Bundle& files, const std::string& dir);

// With ORRERY_FUZZ_VERBOSE=1 in the environment, prints `what` and the status
// to stderr (to see what a seed reaches when replayed); else nothing.
void Note(const std::string& what, const Status& status);

// Fixed inputs in Scratch(): a 1-D Ring of kRanks NPUs, a ring system JSON, and
// per-rank traces (compute, a memory load, an all-reduce on pg_name "0", a
// send/receive ring) under the returned prefix.
const std::string& BaseNetwork();
const std::string& BaseSystem();
// A memory YAML (a pool) for the fixed traces' load, used when a run names no memory of its own.
const std::string& BaseMemory();
const std::string& BaseTraces();
// The groups of the fixed traces, ASTRA-sim's comm-group JSON: {"0": every rank}.
const std::string& BaseGroups();
// Fills the unset inputs of `c` with the fixed ones (the groups with BaseGroups() unless `own_groups`:
// the traces then bring theirs; the memory with BaseMemory() when neither a memory YAML nor a remote
// memory JSON is set) and runs it.
// Every error is a Status; a crash, hang or sanitizer report is a finding.
Result<RunReport> RunSmall(RunConfig c, bool own_groups = false);

}  // namespace orrery::fuzz
