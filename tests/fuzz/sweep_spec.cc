// Fuzz target: a sweep spec (explore/sweep.h) with its axes, zipped lists,
// explicit points and filters (explore/sweep_filter.h), read with small caps
// and its points planned (each resolved into a Spec and hashed, as
// `sweep --dry-run` does) — never simulated. The spec sits beside the fixed
// inputs, so a base of `network: base_network.yml`, `system: base_system.json`
// and `workload: base` reads them; `system: roofline_system.json` has the
// roofline a `generate:` base needs.
#include <cstddef>
#include <cstdint>

#include "explore/sweep.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

constexpr char kRooflineSystem[] =
    R"({"roofline-enabled": 1, "peak-perf": 300, "local-mem-bw": 2000, "preferred-dataset-splits": 2,
"all-reduce-implementation": ["ring"], "all-gather-implementation": ["ring"],
"reduce-scatter-implementation": ["ring"], "all-to-all-implementation": ["ring"]})";

bool MakeInputs() {
  orrery::fuzz::BaseNetwork(), orrery::fuzz::BaseSystem(), orrery::fuzz::BaseTraces(), orrery::fuzz::BaseGroups();
  orrery::fuzz::WriteInput("roofline_system.json", reinterpret_cast<const uint8_t*>(kRooflineSystem),
                           sizeof(kRooflineSystem) - 1);
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace orrery;
  static const bool made = MakeInputs();
  (void)made;
  const std::string path = fuzz::WriteInput("spec.yml", data, size);
  sweep::SweepLimits limits;  // the fuzzer's milliseconds, not a user's hours
  limits.enumerated = 20000;
  limits.points = 2000;
  limits.values = 20000;
  auto spec = sweep::ReadSweepSpec(path, limits);
  fuzz::Note("spec", spec.status());
  if (!spec.ok()) return 0;
  sweep::Options options;
  options.max_plan_points = 16;
  options.shard_count = 2;  // every other point: the shard arithmetic too
  fuzz::Note("plan", sweep::MakePlan(spec.value(), options).status());
  return 0;
}
