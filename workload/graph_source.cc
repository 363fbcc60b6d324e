#include "workload/graph_source.h"

#include <sys/stat.h>

#include <cstdio>
#include <optional>

#include "core/tick.h"
#include "extern/json_util.h"

namespace orrery {

namespace {

class TraceFiles : public GraphSource {
 public:
  explicit TraceFiles(std::string prefix) : prefix_(std::move(prefix)) {}

  std::string Describe() const override { return "traces " + prefix_ + ".<rank>.et"; }

  Status Check(int npus, const std::string& network, uint64_t* rank0_bytes, uint64_t* total_bytes) const override {
    npus_ = npus;
    network_ = network;
    *rank0_bytes = *total_bytes = 0;
    for (int r = 0; r < npus; ++r) {
      struct stat st;
      if (::stat(Path(r).c_str(), &st) != 0) return Missing(r);
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
    if (!g.ok() && g.status().message().find("does not exist") != std::string::npos) return Missing(rank);
    return g;
  }

  // Comparing bytes is much cheaper than parsing: byte-identical files are equal graphs.
  bool SameInputAsRank0(int rank) const override {
    if (!rank0_bytes_) rank0_bytes_ = ReadTextFile(Path(0));
    if (!rank0_bytes_->ok()) return false;
    const Result<std::string> bytes = ReadTextFile(Path(rank));
    return bytes.ok() && bytes.value() == rank0_bytes_->value();
  }

 private:
  std::string Path(int rank) const { return prefix_ + "." + std::to_string(rank) + ".et"; }
  Status Missing(int rank) const {
    std::string what = Path(rank) + ": trace file for rank " + std::to_string(rank) + " does not exist";
    if (npus_ > 0) {
      what += "; the network (" + network_ + ") has " + std::to_string(npus_) + " NPUs, so traces " + prefix_ +
              ".0.et .. ." + std::to_string(npus_ - 1) + ".et are needed";
    }
    return Status::Invalid(what);
  }

  std::string prefix_;
  mutable int npus_ = 0;
  mutable std::string network_;
  mutable std::optional<Result<std::string>> rank0_bytes_;
};

}  // namespace

std::unique_ptr<GraphSource> TraceFileSource(std::string prefix) { return std::make_unique<TraceFiles>(std::move(prefix)); }

}  // namespace orrery
