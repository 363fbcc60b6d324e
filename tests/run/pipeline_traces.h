// Test inputs shared by the rank-class tests (rank_classes_test.cc,
// class_observers_test.cc): ASTRA-sim-style traces of a two-stage pipeline
// on Switch(4) x Ring(2).
#pragma once
#include <cstdint>

#include "tests/test_util.h"

namespace orrery::testing {

// Switch(4) x Ring(2): ring on both dimensions, LIFO, two chunks.
extern const char kPipelineSystem2D[];

// Writes network.yml, system.json, groups.json and the traces into `d`:
// stage 0 is ranks 0-3, stage 1 ranks 4-7; two microbatches forward and
// backward between rank r and r +- 4; with `all_reduce`, a data-parallel
// all-reduce per stage (groups dp0 and dp1). Every rank numbers its nodes
// differently and names them after itself: only node ids, names and peer
// ranks differ within a stage. `slow`: this rank computes `slow_us` instead
// of 10 us (a straggler).
void WritePipelineTraces(const TempDir& d, bool all_reduce, int slow = -1, uint64_t slow_us = 0);

// The run of those traces; `groups`: with groups.json.
RunConfig PipelineTraceConfig(const TempDir& d, bool groups);

}  // namespace orrery::testing
