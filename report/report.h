// The run report: what a simulation returns (per NPU, per collective, per
// network dimension, the critical path) and its formats (text, JSON, CSV).
// A value: run/ fills it, report/report_reader.cc reads the JSON back.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "core/tick.h"
#include "network/backend.h"
#include "report/critical_path.h"

namespace orrery {

struct NpuReport {
  int rank = 0;
  Tick finished_ns = 0;
  Tick compute_ns = 0;            // GPU compute
  Tick comm_ns = 0;               // union of collective, send and receive intervals (ASTRA-sim's "Comm time")
  Tick remote_mem_ns = 0;         // union of MEM_LOAD / MEM_STORE intervals
  uint64_t peak_local_bytes = 0;  // with capacity tracking (memory configuration)
  // The finished time split five ways, six with CPU ops (they sum to
  // finished_ns): GPU compute; communication while not computing; memory
  // accesses while neither computing nor communicating; a receive waiting for
  // its peer's send to start while none of these; a CPU op while none of these;
  // nothing (docs/report.md, "What a report holds").
  Tick exposed_comm_ns = 0;
  Tick mem_stall_ns = 0;
  Tick peer_wait_ns = 0;
  // A CPU op (is_cpu_op) running while none of the four above: CPU work is not
  // idle. Shown (text column, JSON cpu_ns, CSV's last column) only when some rank has any.
  Tick cpu_ns = 0;
  Tick idle_ns = 0;
};

struct CollectiveReport {
  int rank = 0;
  uint64_t node_id = 0;
  std::string name;
  std::string type;
  uint64_t bytes = 0;
  std::string algorithm;
  Tick start_ns = 0;
  Tick end_ns = 0;
};

// Every rank's collectives, kept once per simulated rank (RunConfig::all_collectives):
// a symmetric run simulates rank 0 for all, a run by rank classes one
// representative per class, a full run every rank. Rank r's collectives are
// those of `source[r]`, with r as their rank: memory grows with the simulated
// ranks' collectives, not with ranks x collectives.
struct AllCollectives {
  std::vector<CollectiveReport> simulated;  // by simulated rank, then issue order
  std::vector<int32_t> source;              // per rank: the simulated rank whose collectives are its own
  bool recorded() const { return !source.empty(); }
};

// One rank class of a run by rank classes (run/rank_classes.h).
struct RankClassReport {
  int id = 0;
  int representative = 0;  // the simulated rank
  uint64_t members = 0;
  std::string ranks;  // the members as ranges, "0-7,64-71" (the notation of --timeline-ranks)
  Tick finished_ns = 0;
};

struct DimReport {
  std::string block;
  int npus = 0;
  double bandwidth_gbps = 0;
  double latency_ns = 0;
  uint64_t messages = 0;
  uint64_t bytes = 0;
  Tick busy_ns = 0;           // summed over the links of the dimension
  double directed_links = 0;  // links of the dimension, each direction counted
  double utilization = 0;     // busy / (directed links * finished time)
};

// A generated run's figures (`orrery run --generate`; docs/report.md, "A
// generated run"): model and hardware FLOPs per iteration and their
// utilisation of the device's peak, tokens per second, memory per rank.
struct GeneratedReport {
  bool present = false;
  std::string model_flops;     // decimal, one iteration (no recomputation)
  std::string hardware_flops;  // decimal, one iteration, every rank's compute nodes (recomputation included)
  std::string device;          // whose peak MFU divides by ("" unknown: no MFU)
  double peak_tflops = 0;
  std::string device_from;  // "system configuration" or "--device"
  double iteration_s = 0;   // finished time / iterations
  std::optional<double> mfu, hfu;
  std::string no_mfu;  // why mfu and hfu are absent
  uint64_t tokens_per_iteration = 0;
  std::optional<double> tokens_per_s;
  uint64_t memory_bytes = 0;  // the largest rank's, the generator's closed form (0: unknown)
  int64_t memory_stage = -1;
};

struct RunReport {
  std::string backend;
  int npus = 0;
  int iterations = 1;
  std::vector<NpuReport> per_npu;
  std::vector<CollectiveReport> collectives;  // on rank 0
  std::vector<DimReport> dims;
  std::vector<LinkStat> links;  // with RunConfig::link_stats
  bool link_stats = false;      // RunConfig::link_stats
  std::string links_note;       // why `links` is empty although asked for
  uint64_t events = 0;
  uint64_t messages = 0;
  std::string memory_backend;
  uint64_t memory_accesses = 0;
  uint64_t memory_bytes = 0;
  Tick memory_wait_ns = 0;  // queueing at the memory, summed over accesses
  bool capacity_tracked = false;
  uint64_t local_capacity_bytes = 0, remote_capacity_bytes = 0, peak_remote_bytes = 0;
  std::vector<std::string> warnings;
  bool symmetric = false;      // rank 0 was simulated as the representative of every rank
  std::string symmetry_note;   // why the run was (or was not) symmetric, or its rank classes
  // How the inputs were read, one sentence each (the communicator groups'
  // origin, how compute nodes were timed, rooted collectives without a root,
  // control edges dropped): the text report's "notes", JSON "notes" (absent when empty).
  std::vector<std::string> notes;
  int rank_classes = 0;        // > 0: one representative per rank class was simulated (run/rank_classes.h)
  // The group-collective model that ran and the first communicator group
  // across dimensions; "" when the two models cannot differ (one dimension, or
  // no group between one rank and the whole network).
  std::string group_collectives;
  CriticalPath critical_path;  // with RunConfig::critical_path (rank -1 otherwise)
  GeneratedReport generated;   // a generated workload's figures
  std::vector<RankClassReport> classes;  // with rank classes: one per class, by id
  // With RunConfig::all_collectives: every rank's collectives (the simulated ranks' once).
  AllCollectives all_collectives;
  // What produced the report (run/spec.h): SpecHash, and the "config"
  // object of the JSON report (SpecConfigJson).
  std::string config_hash;
  std::string config_json;
};

std::string FormatReportText(const RunReport& r);
std::string FormatReportJson(const RunReport& r);
std::string FormatReportCsv(const RunReport& r);
// --collectives=FILE.csv: one row per collective of every rank, by rank then
// issue order (a rank copies its representative's rows); needs
// RunConfig::all_collectives. Streamed: `write` gets the text a block of about
// 1 MiB at a time, built rank by rank from the simulated ranks' collectives, so
// memory stays O(simulated ranks' collectives) however many ranks there are;
// the first error `write` returns stops it and is returned.
Status WriteCollectivesCsv(const RunReport& r, const std::function<Status(std::string_view)>& write);
// Calls `each(rank, collective)` for every rank's collectives in the CSV's
// order; `collective.rank` is the simulated rank's, `rank` the rank's own.
void ForEachRankCollective(const RunReport& r, const std::function<void(int, const CollectiveReport&)>& each);
// --links=FILE.csv: one row per link the backend reports; needs RunConfig::collect_links.
std::string FormatLinksCsv(const RunReport& r);

}  // namespace orrery
