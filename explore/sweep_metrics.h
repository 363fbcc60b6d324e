// The columns of a sweep row beyond the time split: memory footprint, model
// FLOPs and MFU for a generated workload, and the per-dimension split of
// communication (link busy time always; exposed communication on the critical
// path with --critical-path).
#pragma once
#include <optional>
#include <string>

#include "core/status.h"
#include "explore/sweep.h"
#include "gen/gen_args.h"
#include "run/run.h"

namespace orrery::sweep {

// What the generator's closed forms say about a point's generated workload.
struct GenFigures {
  std::string model_flops;  // decimal: FLOPs of one iteration; transformers without recomputation
                            // (gen::ModelFlops), DLRMs their closed form (gen::DlrmClosedFormFlops)
  double model_flops_d = 0;
  std::optional<uint64_t> memory_bytes;  // transformers: the largest stage's HBM footprint (gen::StageMemory total)
  double peak_tflops = 0;                // --device's peak, else the system's peak-perf (0: unknown)
};

// `options`: the point's generator options, finished; `system_peak_tflops`:
// the system JSON's peak-perf, used when the options name no --device.
Result<GenFigures> GeneratedFigures(const gen::GenOptions& options, double system_peak_tflops);

// Fills the row's columns from the report: the slowest rank's split, peak
// local / remote bytes (when the run tracks capacity), per-dimension busy time,
// the critical path's communication per dimension (when it was computed:
// segments by what their rank was doing, whichever rank; a segment on several
// dimensions split evenly; communication on no known dimension, e.g. a
// point-to-point send, in path_comm_other_ns),
// and, with `gen`, model FLOPs, closed-form memory (transformers) and
//   MFU = model FLOPs per iteration / (npus x peak FLOP/s x iteration time),
//   iteration time = slowest rank's finished time / iterations.
void FillRow(const RunReport& report, int iterations, const GenFigures* gen, Row* row);

}  // namespace orrery::sweep
