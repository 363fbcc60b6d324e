// Fuzz target: the run-report reader of `orrery report compare`: the fuzzed
// file against itself and against a fixed valid report, in every format.
#include <cstddef>
#include <cstdint>

#include "report/compare.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

// Two ranks, one dimension, a critical path and a config hash.
constexpr char kReport[] = R"J({"backend": "analytical", "npu_count": 2, "iterations": 1, "symmetric": false,
 "symmetry": "", "finished_ns": 500, "messages": 2,
 "npus": [{"rank": 0, "finished_ns": 400, "compute_ns": 100, "comm_ns": 300, "exposed_comm_ns": 300,
           "mem_stall_ns": 0, "remote_mem_ns": 0, "idle_ns": 0},
          {"rank": 1, "finished_ns": 500, "compute_ns": 200, "comm_ns": 300, "exposed_comm_ns": 250,
           "mem_stall_ns": 40, "remote_mem_ns": 40, "idle_ns": 10}],
 "collectives": [{"rank": 0, "node_id": 1, "name": "", "type": "ALL_REDUCE", "bytes": 8,
                  "algorithm": "ALL_REDUCE:ring", "start_ns": 100, "end_ns": 400}],
 "memory": {"backend": "astra-sim", "accesses": 1, "bytes": 64, "wait_ns": 7},
 "dims": [{"block": "Switch", "npus": 2, "bandwidth_gbps": 50, "latency_ns": 500, "messages": 2, "bytes": 16,
           "busy_ns": 20, "utilization": 0.01}],
 "critical_path": {"rank": 1, "finished_ns": 500, "representative": false, "other_ranks": [], "segments": [],
                   "categories": [{"category": "communication dim0 (Switch)", "ns": 300},
                                  {"category": "compute", "ns": 200}]},
 "config": {"hash": "abc"}})J";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace orrery;
  static const std::string fixed = fuzz::WriteInput("fixed.json", reinterpret_cast<const uint8_t*>(kReport),
                                                    sizeof(kReport) - 1);
  const std::string path = fuzz::WriteInput("report.json", data, size);
  for (const char* format : {"text", "json", "csv"}) {
    (void)CompareReports(CompareOptions{path, path, format});
    (void)CompareReports(CompareOptions{fixed, path, format});
  }
  return 0;
}
