// Where a run's per-rank graphs come from: Chakra trace files PREFIX.<rank>.et
// (the default), or a generator that builds them in memory (`orrery run
// --generate`). The simulation asks a source for one rank's graph at a time,
// so a source may build only the ranks the run simulates.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "workload/graph.h"

namespace orrery {

// What a source's graphs hold, without building them.
struct SourceDigest {
  // Canonical: equal text, equal graphs, whatever the inputs are called
  // ("traces 8 ranks fnv1a64=..." over the files' bytes, a generator's arguments).
  std::string text;
  std::vector<bool> same_as_rank0;  // rank r's input is known to give rank 0's graph
};

// What a generator knows of its workload beyond the graphs: the report's
// model and hardware FLOPs utilisation, tokens per second and memory per rank
// (docs/report.md, "A generated run").
struct WorkloadFigures {
  std::string model_flops;  // decimal: one iteration's model FLOPs (no recomputation)
  double model_flops_d = 0;
  std::string hardware_flops;  // decimal: one iteration's FLOPs of every rank's compute nodes (recomputation included)
  double hardware_flops_d = 0;
  uint64_t tokens = 0;            // per iteration: global batch x sequence length (0: not a language model)
  uint64_t memory_bytes = 0;      // the largest rank's HBM footprint, the generator's closed form (0: unknown)
  int64_t memory_stage = -1;      // the pipeline stage it is on
  std::string device;             // the generator's --device ("" none)
  double device_peak_tflops = 0;  // its dense peak
};

// Process groups the inputs themselves describe (a trace's process-group
// metadata): name -> ranks, and where they were read ("" when none).
struct SourceGroups {
  std::map<std::string, std::vector<int>> groups;
  std::string origin;
};

class GraphSource {
 public:
  virtual ~GraphSource() = default;
  // What the source is, for messages: "traces PREFIX.<rank>.et".
  virtual std::string Describe() const = 0;
  // Before anything per NPU is built: an error unless the source has exactly
  // `npus` ranks (`network` names the network in the message). Sets the size of
  // rank 0's input and of all ranks' inputs in bytes (for the memory estimate).
  virtual Status Check(int npus, const std::string& network, uint64_t* rank0_bytes, uint64_t* total_bytes) const = 0;
  virtual Result<NpuGraph> Load(int rank, const GraphLoadOptions& options) const = 0;
  // True when rank `rank`'s input is known to give rank 0's graph without
  // building it (byte-identical trace files, the same generated class).
  virtual bool SameInputAsRank0(int rank) const = 0;
  // Rank classes the source knows (run/rank_classes.h): class id per
  // rank, or null. The contract: ranks of one class have the same graph except
  // for the peer ranks of sends and receives (RankPeers tells them) and the
  // collectives' groups (each the group of the same kind that holds the rank).
  virtual const std::vector<int>* DeclaredClasses() const { return nullptr; }
  // With DeclaredClasses: the peers of `rank`'s sends and receives in node
  // order, without building its graph; false when the source cannot tell.
  virtual bool RankPeers(int rank, std::vector<int>* peers) const { return false; }
  // Communicator groups the source defines (name -> ranks); empty: none.
  virtual std::map<std::string, std::vector<int>> CommGroups() const { return {}; }
  // For a run of `npus` NPUs (after Check and Digest): the process groups the
  // inputs carry, checked (workload/trace_groups.h); none by default.
  // `rank0_only`: rank 0's alone, unchecked against the other ranks (to say
  // what --comm-group-configuration overrides).
  virtual Result<SourceGroups> ProcessGroups(int npus, const SourceDigest& digest, bool rank0_only) const {
    return SourceGroups{};
  }
  // For a run of `npus` NPUs (after Check): what the graphs hold, for the
  // run's configuration hash, and which ranks' inputs are rank 0's. The
  // default: Describe() and SameInputAsRank0 for every rank.
  virtual Result<SourceDigest> Digest(int npus) const;
  // A generator's figures of its workload; null for trace files.
  virtual const WorkloadFigures* Figures() const { return nullptr; }
};

// PREFIX.<rank>.et, one file per NPU.
std::unique_ptr<GraphSource> TraceFileSource(std::string prefix);

}  // namespace orrery
