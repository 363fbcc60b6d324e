// The search's lower bound against the simulation on search spaces too large
// for the test suite (tests/explore/search_bound_test.cc has the small ones):
// every survivor simulated, none may finish before its bound. Prints one line
// per space (survivors, the tightest bound) and every violation; exit 1 on
// any. Run by bench/search_bound.sh.
#include <cstdio>
#include <string>
#include <vector>

#include "tests/explore/search_bound_util.h"
#include "tests/gen/gen_test_util.h"

namespace {

using orrery::gen::BoundCheck;
using orrery::gen::BoundSpace;

using orrery::gen::testing::TinyModel;

struct Case {
  std::string name;
  BoundSpace space;
};

std::vector<Case> Cases() {
  std::vector<Case> cases;
  auto add = [&](std::string name, orrery::gen::ModelDesc m, int64_t npus, int64_t batch, std::string net,
                 std::string extra = "") {
    BoundSpace b;
    b.model = std::move(m);
    b.npus = npus;
    b.global_batch = batch;
    b.network = std::move(net);
    b.system_extra = std::move(extra);
    cases.push_back({std::move(name), b});
  };
  orrery::gen::ModelDesc moe = TinyModel(4, 32);
  moe.experts = 4, moe.top_k = 2, moe.expert_ffn = 128, moe.moe_layer_freq = 2;
  add("dense 16 NPUs, Ring(4) x Switch(4)", TinyModel(4, 32), 16, 16, "Ring(4,4GB/s,500ns)_Switch(4,1GB/s,2us)");
  add("dense 16 NPUs, Switch(2) x Switch(8), hierarchical", TinyModel(4, 32), 16, 16,
      "Switch(2,4GB/s,500ns)_Switch(8,1GB/s,2us)", R"(, "group-collective-model": "hierarchical")");
  add("dense 16 NPUs, Ring(16), 2 active chunks", TinyModel(4, 32), 16, 16, "Ring(16,2GB/s,1us)",
      R"(, "active-chunks-per-dimension": 2)");
  add("dense 12 NPUs, Switch(4) x Ring(3) (boundaries that do not chain)", TinyModel(4, 32), 12, 12,
      "Switch(4,4GB/s,500ns)_Ring(3,1GB/s,2us)");
  add("MoE 16 NPUs, Switch(4) x Ring(4)", moe, 16, 16, "Switch(4,4GB/s,500ns)_Ring(4,1GB/s,1us)");
  add("dense 8 layers 32 NPUs, Ring(2) x Switch(4) x Switch(4)", TinyModel(8, 64), 32, 32,
      "Ring(2,8GB/s,200ns)_Switch(4,4GB/s,500ns)_Switch(4,1GB/s,2us)");
  // GPT-3 175B on 1,024 NPUs (bench/search_gpt3.sh's inputs): the 40
  // candidates of least lower bound, where the branch and bound decides.
  auto gpt3 = orrery::gen::LoadModel("gpt3-175b");
  if (gpt3.ok()) {
    add("GPT-3 175B 1,024 NPUs, the 40 of least lower bound", gpt3.value(), 1024, 1536,
        "Switch(8,300GB/s,1us)_Switch(128,25GB/s,2us)");
    BoundSpace& b = cases.back().space;
    b.system_json = R"({"roofline-enabled": 1, "peak-perf": 156.0, "local-mem-bw": 2039.0, )"
                    R"("preferred-dataset-splits": 4, "endpoint-delay": 10, "active-chunks-per-dimension": 1})";
    b.top = 40;
    b.time_limit_s = 900;
  }
  return cases;
}

}  // namespace

int main() {
  bool ok = true;
  for (const Case& c : Cases()) {
    const BoundCheck r = orrery::gen::CheckEverySurvivor(c.space);
    std::printf(
        "%s: %zu simulated (%zu with ep > 1, %zu stopped at the time limit); tightest bound %.4f of its "
        "simulated time: %s\n",
        c.name.c_str(), r.simulated, r.with_ep, r.stopped, r.tightest, r.tightest_text.c_str());
    if (!r.violations.empty()) {
      std::printf("VIOLATIONS:\n%s", r.violations.c_str());
      ok = false;
    }
    std::fflush(stdout);
  }
  return ok ? 0 : 1;
}
