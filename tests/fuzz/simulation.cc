// Fuzz target, end to end: a fuzzed trace for rank 1 beside fixed traces for
// the other ranks of a 4-NPU ring, run through the whole engine. Inputs are
// capped (node count) so a run stays short.
#include <cstddef>
#include <cstdint>
#include <filesystem>

#include "extern/et_io.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace orrery;
  const std::string& base = fuzz::BaseTraces();
  const std::string prefix = fuzz::Scratch() + "/sim";
  static const bool copied = [&] {
    for (int r = 0; r < fuzz::kRanks; ++r) {
      std::filesystem::copy_file(base + "." + std::to_string(r) + ".et", prefix + "." + std::to_string(r) + ".et",
                                 std::filesystem::copy_options::overwrite_existing);
    }
    return true;
  }();
  (void)copied;
  const std::string path = fuzz::WriteInput("sim.1.et", data, size);
  // Cap the work: at most 512 nodes.
  EtReader reader;
  if (!reader.Open(path).ok()) return 0;
  ChakraProtoMsg::Node node;
  int nodes = 0;
  for (;;) {
    auto more = reader.Next(&node);
    if (!more.ok()) return 0;
    if (!more.value()) break;
    if (++nodes > 512) return 0;
  }
  for (SymmetryMode symmetry : {SymmetryMode::kAuto, SymmetryMode::kOff}) {
    RunConfig c;
    c.files.workload_prefix = prefix;
    c.run.symmetry = symmetry;
    fuzz::Note("run", fuzz::RunSmall(c).status());
  }
  return 0;
}
