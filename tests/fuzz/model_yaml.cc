// Fuzz target: the generator's model YAML (gen/model.h: a transformer, or a
// DLRM with `kind: dlrm`). An accepted model has its parameters counted and,
// for a transformer, every strategy on 2 NPUs pre-filtered and ranked by the
// symbolic cost (explore/search.h); nothing is simulated.
#include <cstddef>
#include <cstdint>

#include "explore/search.h"
#include "gen/dlrm_model.h"
#include "gen/model.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace orrery;
  const std::string path = fuzz::WriteInput("model.yml", data, size);
  auto m = gen::LoadModel(path);
  fuzz::Note("model", m.status());
  if (!m.ok()) return 0;
  (void)gen::ParamCount(m.value());
  if (m->kind == gen::ModelKind::kDlrm) {
    (void)gen::DescribeDlrm(m->dlrm);
    (void)gen::DlrmTopInput(m->dlrm);
    (void)gen::DlrmLookupsPerSample(m->dlrm);
    return 0;
  }
  gen::SearchSpace space;
  space.npus = 2;
  space.global_batch = 8;
  gen::CostModel cost;
  cost.peak_flops_per_s = 1e15;
  cost.mem_bytes_per_s = 2e12;
  cost.dims = {Dim{Block::kRing, 2, 50, 500, 1}};
  (void)gen::SearchStrategies(m.value(), space, cost, 4);
  return 0;
}
