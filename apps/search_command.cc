// `orrery search`: strategy search for a transformer on a cluster (issue 12).
// Enumerates every strategy, pre-filters by divisibility and memory, ranks
// the survivors by the symbolic cost and simulates the top-k in full.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>

#include "core/units.h"
#include "apps/commands.h"
#include "extern/astra_config.h"
#include "gen/model.h"
#include "explore/search.h"
#include "explore/search_run.h"
#include "run/run.h"

namespace orrery::cli {

namespace {

struct SearchFlags {
  std::string model, npus, global_batch, network, system, memory, remote_memory, csv;
  std::string hbm_gb = "80", top = "20", jobs = "2", time_limit;
};

int Search(const SearchFlags& f) {
  const auto start = std::chrono::steady_clock::now();
  auto need = [](const std::string& value, const char* flag, const char* what) {
    return value.empty() ? Status::Invalid(std::string("'orrery search' needs ") + flag + "=" + what) : Status::Ok();
  };
  for (const Status& st : {need(f.model, "--model", "NAME|FILE.yml (a preset of 'orrery gen --list-models' or a model YAML)"),
                           need(f.npus, "--npus", "N"), need(f.global_batch, "--global-batch", "G"),
                           need(f.network, "--network", "NET (a network YAML or a notation such as \"Switch(8,300GB/s,1us)_Switch(128,25GB/s,2us)\")"),
                           need(f.system, "--system", "F.json (ASTRA-sim system JSON with the roofline: roofline-enabled, peak-perf, local-mem-bw)")}) {
    if (!st.ok()) return Fail(st);
  }
  auto npus = IntFlag("--npus", f.npus, 1, int64_t{1} << 26);
  if (!npus.ok()) return Fail(npus.status());
  auto batch = IntFlag("--global-batch", f.global_batch, 1, int64_t{1} << 40);
  if (!batch.ok()) return Fail(batch.status());
  auto top = IntFlag("--top", f.top, 1, 100000);
  if (!top.ok()) return Fail(top.status());
  auto jobs = IntFlag("--jobs", f.jobs, 1, 256);
  if (!jobs.ok()) return Fail(jobs.status());
  auto hbm = DoubleFlag("--hbm-gb", f.hbm_gb, kPositive);
  if (!hbm.ok()) return Fail(hbm.status());
  double time_limit = -1;
  if (!f.time_limit.empty()) {
    auto t = DoubleFlag("--time-limit", f.time_limit, kNonNegative);
    if (!t.ok()) return Fail(t.status());
    time_limit = t.value();
  }
  if (!f.memory.empty() && !f.remote_memory.empty()) {
    return Fail(Status::Invalid("--memory and --remote-memory name the same thing (the run's remote memory); give one"));
  }
  auto model = gen::LoadModel(f.model);
  if (!model.ok()) return Fail(model.status());
  if (model->kind != gen::ModelKind::kTransformer) {
    return Fail(Status::Invalid("--model = \"" + f.model + "\": a DLRM; 'orrery search' searches transformer strategies "
                                "(tp, cp, ep, pp, dp); allowed: a transformer preset or YAML"));
  }
  auto dims = ReadNetworkDims(f.network);
  if (!dims.ok()) return Fail(dims.status().Prefixed("--network: "));
  int64_t network_npus = 1;
  for (const Dim& d : dims.value()) network_npus *= d.npus;
  if (network_npus != npus.value()) {
    return Fail(Status::Invalid("--npus = " + std::to_string(npus.value()) + " but the network (" + f.network + ") has " +
                                std::to_string(network_npus) + " NPUs; they must be equal"));
  }
  auto sys = ReadAstraSystemJson(f.system);
  if (!sys.ok()) return Fail(sys.status().Prefixed("--system: "));
  if (!sys->roofline_enabled || sys->peak_perf_tflops <= 0) {
    return Fail(Status::Invalid("--system = \"" + f.system + "\": roofline-enabled is 0 or peak-perf is missing; the "
                                "generated compute is timed by the roofline; allowed: a system JSON with "
                                "\"roofline-enabled\": 1, \"peak-perf\" and \"local-mem-bw\" (orrery gen --device=a100 "
                                "--system-out=F.json writes one)"));
  }
  gen::SearchSpace space;
  space.npus = npus.value();
  space.global_batch = batch.value();
  space.hbm_bytes = static_cast<uint64_t>(GBToBytes(hbm.value()));
  gen::CostModel cost;
  cost.peak_flops_per_s = TflopsToFlopsPerSecond(sys->peak_perf_tflops);
  cost.mem_bytes_per_s = BytesPerNsToBytesPerSecond(sys->local_mem_bw);
  cost.dims = dims.value();
  cost.splits = sys->preferred_dataset_splits;
  cost.endpoint_delay_s = static_cast<double>(sys->endpoint_delay_ns) * kSecondsPerNs;

  const gen::SearchResult result = gen::SearchStrategies(model.value(), space, cost, static_cast<size_t>(top.value()));
  const uint64_t survivors = result.pruned[static_cast<int>(gen::PruneReason::kSurvives)];
  const double ranked_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::fprintf(stderr, "orrery search: pre-filter: %llu strategies in %.3f s (%.0f per second, one thread); "
               "%llu survive; ranked by the symbolic cost in %.3f s since start\n",
               static_cast<unsigned long long>(result.enumerated), result.prefilter_seconds,
               result.prefilter_seconds > 0 ? static_cast<double>(result.enumerated) / result.prefilter_seconds : 0.0,
               static_cast<unsigned long long>(survivors), ranked_s);
  if (survivors == 0) {
    std::string reasons;
    for (int k = 1; k < gen::kNumPruneReasons; ++k) {
      if (result.pruned[k] == 0) continue;
      reasons += std::string(reasons.empty() ? "" : ", ") + gen::PruneReasonText(static_cast<gen::PruneReason>(k)) +
                 " (" + std::to_string(result.pruned[k]) + ")";
    }
    return Fail(Status::Invalid("no strategy survives: " + model->name + " on " + std::to_string(npus.value()) +
                                " NPUs with global batch " + std::to_string(batch.value()) + ": " +
                                std::to_string(result.enumerated) + " enumerated, pruned by " + reasons +
                                "; allowed: a global batch divisible by b*dp*ep for some b in 1,2,4,8, more --hbm-gb, "
                                "or an NPU count whose factors divide the model's shape"));
  }

  gen::SimulateOptions sim;
  sim.system_path = f.system;
  sim.network = f.network;
  sim.memory_path = f.remote_memory;
  sim.memory_config_path = f.memory;
  sim.jobs = static_cast<int>(jobs.value());
  sim.time_limit_s = time_limit;
  sim.start = start;
  const auto sim_start = std::chrono::steady_clock::now();
  const std::vector<gen::Simulated> sims = gen::SimulateCandidates(model.value(), result.top, sim);
  size_t done = 0;
  for (const auto& s : sims) done += s.done ? 1 : 0;
  const double sim_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - sim_start).count();
  std::fprintf(stderr, "orrery search: simulated %zu of %zu in %.1f s on %lld jobs (%.1f per minute)\n", done,
               sims.size(), sim_s, static_cast<long long>(jobs.value()), sim_s > 0 ? done * 60.0 / sim_s : 0.0);

  gen::SearchHeader h{model->name, npus.value(), batch.value(), hbm.value(), f.network, f.system};
  std::fputs(gen::FormatSearchText(h, result, sims).c_str(), stdout);
  if (!f.csv.empty()) {
    std::ofstream csv(f.csv);
    csv << gen::FormatSearchCsv(result, sims);
    if (!csv) return Fail(Status::Env(f.csv + ": cannot write the CSV"));
  }
  return 0;
}

}  // namespace

void AddSearchCommand(Commands* commands, CLI::App* root) {
  auto f = std::make_shared<SearchFlags>();
  CLI::App* s = commands->AddLeaf(root, "search",
                                  "search parallelism strategies of a transformer: pre-filter, symbolic ranking, top-k simulated",
                                  [f] { return Search(*f); });
  s->add_option("--model", f->model, "a preset (orrery gen --list-models) or a model YAML")->type_name("NAME|FILE.yml");
  s->add_option("--npus", f->npus, "NPUs; tp*cp*ep*pp*dp equals it and the network's NPU count")->type_name("N");
  s->add_option("--global-batch", f->global_batch, "samples per iteration G = b*m*dp*ep")->type_name("G");
  s->add_option("--network", f->network, "network YAML or topology notation")->type_name("NET");
  s->add_option("--system", f->system, "ASTRA-sim system JSON with the roofline (peak-perf, local-mem-bw)")
      ->type_name("F.json");
  s->add_option("--memory", f->memory, "Orrery memory YAML for the simulations (optional)")->type_name("F.yml");
  s->add_option("--remote-memory", f->remote_memory, "ASTRA-sim remote-memory JSON for the simulations (optional)")
      ->type_name("F.json");
  s->add_option("--hbm-gb", f->hbm_gb, "HBM per NPU for the memory pre-filter")->type_name("GB")->capture_default_str();
  s->add_option("--top", f->top, "simulate the K best by symbolic cost (1..100000)")->type_name("K")->capture_default_str();
  s->add_option("--jobs", f->jobs, "simulation threads (1..256)")->type_name("N")->capture_default_str();
  s->add_option("--time-limit", f->time_limit, "start no simulation after this many seconds (from the start)")
      ->type_name("SECONDS");
  s->add_option("--csv", f->csv, "also write the table as CSV")->type_name("FILE");
}

}  // namespace orrery::cli
