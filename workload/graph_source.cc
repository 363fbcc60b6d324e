#include "workload/graph_source.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <limits>

#include "core/fnv.h"
#include "core/parse.h"
#include "core/tick.h"
#include "extern/json_util.h"
#include "workload/trace_groups.h"

namespace orrery {

namespace {

class TraceFiles : public GraphSource {
 public:
  explicit TraceFiles(std::string prefix) : prefix_(std::move(prefix)) {}

  std::string Describe() const override { return "traces " + prefix_ + ".<rank>.et"; }

  Status Check(int npus, const std::string& network, uint64_t* rank0_bytes, uint64_t* total_bytes) const override {
    *rank0_bytes = *total_bytes = 0;
    for (int r = 0; r < npus; ++r) {
      struct stat st;
      if (::stat(Path(r).c_str(), &st) != 0) return Missing(r, npus, network);
      *total_bytes = SatAdd(*total_bytes, static_cast<uint64_t>(st.st_size));
      if (r == 0) *rank0_bytes = static_cast<uint64_t>(st.st_size);
    }
    if (FILE* f = std::fopen(Path(npus).c_str(), "rb")) {
      std::fclose(f);
      return Status::Invalid(Path(npus) + ": there are more trace files than the network's " + std::to_string(npus) +
                             " NPUs (" + network + "); refusing to simulate a subset");
    }
    return Status::Ok();
  }

  Result<NpuGraph> Load(int rank, const GraphLoadOptions& options) const override {
    auto g = LoadNpuGraph(Path(rank), rank, options);
    // Only a file that is not there is missing: an error's text may quote a
    // group name or a trace's string that happens to say "does not exist".
    struct stat st;
    if (!g.ok() && ::stat(Path(rank).c_str(), &st) != 0 && errno == ENOENT) {
      return Missing(rank, options.num_npus, "");
    }
    return g;
  }

  Result<SourceGroups> ProcessGroups(int npus, const SourceDigest& digest, bool rank0_only) const override {
    std::vector<std::string> paths;
    for (int r = 0; r < npus; ++r) paths.push_back(Path(r));
    // Ranks marked as rank 0's are not read again.
    ORRERY_PARSE_OR_RETURN(TraceGroupTable table, ReadTraceGroupTables(paths, rank0_only ? std::vector<bool>(npus, true)
                                                                                         : digest.same_as_rank0));
    return SourceGroups{std::move(table.groups), std::move(table.origin)};
  }

  // Comparing bytes is much cheaper than parsing: byte-identical files are equal graphs.
  bool SameInputAsRank0(int rank) const override {
    const Result<std::string> rank0 = ReadTrace(Path(0));
    const Result<std::string> bytes = ReadTrace(Path(rank));
    return rank0.ok() && bytes.ok() && bytes.value() == rank0.value();
  }

  // One pass over the files: each file's bytes hashed (FNV-1a, 64 bits) and
  // compared with rank 0's. An unreadable file is left to Load to report.
  Result<SourceDigest> Digest(int npus) const override {
    SourceDigest d;
    d.same_as_rank0.assign(npus, false);
    const Result<std::string> rank0 = ReadTrace(Path(0));
    uint64_t all = kFnvOffset;
    for (int r = 0; r < npus; ++r) {
      const Result<std::string> bytes = r == 0 ? rank0 : ReadTrace(Path(r));
      const uint64_t h = bytes.ok() ? Fnv1a(kFnvOffset, bytes.value()) : 0;
      all = Fnv1a(all, std::to_string(h) + ";");
      d.same_as_rank0[r] = rank0.ok() && bytes.ok() && (r == 0 || bytes.value() == rank0.value());
    }
    d.text = "traces of " + std::to_string(npus) + " ranks, fnv1a64 " + HexU64(all);
    return d;
  }

 private:
  std::string Path(int rank) const { return prefix_ + "." + std::to_string(rank) + ".et"; }
  // A trace file whole, whatever its size (the digest must tell every two files apart).
  static Result<std::string> ReadTrace(const std::string& path) {
    return ReadTextFile(path, std::numeric_limits<uint64_t>::max());
  }
  Status Missing(int rank, int npus, const std::string& network) const {
    std::string what = Path(rank) + ": trace file for rank " + std::to_string(rank) + " does not exist";
    if (npus > 0) {
      what += "; the network" + (network.empty() ? std::string() : " (" + network + ")") + " has " +
              std::to_string(npus) + " NPUs, so traces " + prefix_ + ".0.et .. ." + std::to_string(npus - 1) +
              ".et are needed";
    }
    return Status::Invalid(what);
  }

  std::string prefix_;  // the only state: a source is shared by threads
};

}  // namespace

Result<SourceDigest> GraphSource::Digest(int npus) const {
  SourceDigest d;
  d.text = Describe();
  d.same_as_rank0.assign(npus, false);
  for (int r = 0; r < npus; ++r) d.same_as_rank0[r] = r == 0 || SameInputAsRank0(r);
  return d;
}

std::unique_ptr<GraphSource> TraceFileSource(std::string prefix) {
  return std::make_unique<TraceFiles>(std::move(prefix));
}

}  // namespace orrery
