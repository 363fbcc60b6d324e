// A sweep point made concrete (explore/sweep.h): the base's inputs read once
// into an orrery::Spec, and each point that Spec with the point's fields
// replaced, completed and hashed.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "explore/sweep.h"
#include "gen/gen_args.h"
#include "run/spec.h"
#include "workload/graph_source.h"

namespace orrery::sweep {

// A double with every digit it has (%.17g).
std::string ExactNumber(double v);

// The base, read once: its inputs as a Spec (run/spec.h) that every
// point copies and replaces fields of, the system JSON document whose
// keys points replace, and the generator's options (when the base generates
// its workload) whose flags points replace.
struct Base {
  orrery::Spec spec;
  nlohmann::json system;
  std::optional<gen::GenOptions> generate;  // read, not finished (gen/gen_args.h)
};

Result<Base> ReadBase(const SweepSpec& spec, const Registries& registries);

struct Prepared {
  orrery::Spec spec;
  std::string hash;
  std::string error;                        // the point cannot run (a generator error): a row, not the end of the sweep
  std::optional<gen::GenOptions> generate;  // the point's generator options, finished (generated workloads)
};

class Preparer {
 public:
  Preparer(const SweepSpec& spec, const Base& base, const Registries& registries)
      : spec_(spec), base_(base), registries_(registries) {}

  // Spec-level errors (a network or system value the readers refuse) end
  // the sweep before anything runs; generator errors become the point's row.
  Result<Prepared> Prepare(uint64_t index, const std::vector<Assignment>& point);

 private:
  void GeneratePoint(const std::vector<Assignment>& point, Prepared* p);
  struct Entry {
    std::shared_ptr<const GraphSource> source;
    std::string error;
  };
  const SweepSpec& spec_;
  const Base& base_;
  const Registries& registries_;
  std::map<std::string, Entry> generated_;
};

}  // namespace orrery::sweep
