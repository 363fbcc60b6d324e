// Shared pieces of the fuzz targets: a per-process scratch folder, the fixed
// small inputs a target combines with the fuzzed one, and a capped run.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/status.h"
#include "run/run.h"

namespace orrery::fuzz {

// Ranks of the fixed inputs (Ring of kRanks NPUs).
inline constexpr int kRanks = 4;

// A folder unique to this process, removed at exit.
const std::string& Scratch();
// Writes the bytes to Scratch()/name and returns the path.
std::string WriteInput(const std::string& name, const uint8_t* data, size_t size);
// Fixed inputs in Scratch(): a 1-D Ring of kRanks NPUs, a ring system JSON, and
// per-rank traces (compute, a memory load, an all-reduce on pg_name "0", a
// send/receive ring) under the returned prefix.
const std::string& BaseNetwork();
const std::string& BaseSystem();
const std::string& BaseTraces();
// The groups of the fixed traces, ASTRA-sim's comm-group JSON: {"0": every rank}.
const std::string& BaseGroups();
// Fills the unset inputs of `c` with the fixed ones (the groups with
// BaseGroups() unless `own_groups`: the traces then bring theirs) and runs it.
// Every error is a Status; a crash, hang or sanitizer report is a finding.
Result<RunReport> RunSmall(RunConfig c, bool own_groups = false);

}  // namespace orrery::fuzz
