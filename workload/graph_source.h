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
  // For a run of `npus` NPUs (after Check): what the graphs hold, for the
  // run's configuration hash, and which ranks' inputs are rank 0's. The
  // default: Describe() and SameInputAsRank0 for every rank.
  virtual Result<SourceDigest> Digest(int npus) const;
};

// PREFIX.<rank>.et, one file per NPU.
std::unique_ptr<GraphSource> TraceFileSource(std::string prefix);

}  // namespace orrery
