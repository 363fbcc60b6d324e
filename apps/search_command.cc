// `orrery search`: strategy search for a transformer on a cluster (issue 12).
// Enumerates every strategy, pre-filters by divisibility and memory, ranks
// the survivors by the symbolic cost and simulates the top-k in full.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>

#include "apps/commands.h"
#include "core/output_file.h"
#include "core/units.h"
#include "explore/search.h"
#include "explore/search_run.h"
#include "extern/astra_config.h"
#include "gen/gen_args.h"
#include "gen/model.h"
#include "run/run.h"

namespace orrery::cli {

namespace {

struct SearchFlags {
  std::string model, npus, global_batch, network, system, memory, remote_memory, csv;
  std::string hbm_gb = "80", top = "20", jobs = "2", time_limit, simulate = "stable";
  bool quiet = false, progress = false, keep_twins = false;
  std::vector<std::string> plugins;
};

// The flags read and checked, and the inputs they name.
struct SearchInputs {
  int64_t npus = 0, batch = 0, top = 0, jobs = 0;
  double hbm_gb = 0, time_limit_s = -1;
  bool until_stable = true;
  gen::ModelDesc model;
  std::vector<Dim> dims;
  AstraSystemConfig system;
};

Status RequiredFlags(const SearchFlags& f) {
  auto need = [](const std::string& value, const char* flag, const char* what) {
    return value.empty() ? Status::Invalid(std::string("'orrery search' needs ") + flag + "=" + what) : Status::Ok();
  };
  for (const Status& st :
       {need(f.model, "--model", "NAME|FILE.yml (a preset of 'orrery gen --list-models' or a model YAML)"),
        need(f.npus, "--npus", "N"), need(f.global_batch, "--global-batch", "G"),
        need(f.network, "--network",
             "NET (a network YAML or a notation such as \"Switch(8,300GB/s,1us)_Switch(128,25GB/s,2us)\")"),
        need(f.system, "--system",
             "F.json (ASTRA-sim system JSON with the roofline: roofline-enabled, peak-perf, local-mem-bw)")}) {
    if (!st.ok()) return st;
  }
  return Status::Ok();
}

Status ReadSearchNumbers(const SearchFlags& f, SearchInputs* in) {
  ORRERY_PARSE_OR_RETURN(in->npus, IntFlag("--npus", f.npus, 1, int64_t{1} << 26));
  ORRERY_PARSE_OR_RETURN(in->batch, IntFlag("--global-batch", f.global_batch, 1, int64_t{1} << 40));
  ORRERY_PARSE_OR_RETURN(in->top, IntFlag("--top", f.top, 1, 100000));
  ORRERY_PARSE_OR_RETURN(in->jobs, IntFlag("--jobs", f.jobs, 1, 256));
  ORRERY_PARSE_OR_RETURN(in->hbm_gb, DoubleFlag("--hbm-gb", f.hbm_gb, gen::kHbmGbRange));
  if (!f.time_limit.empty()) {
    ORRERY_PARSE_OR_RETURN(in->time_limit_s, DoubleFlag("--time-limit", f.time_limit, kNonNegative));
  }
  if (!f.memory.empty() && !f.remote_memory.empty()) {
    return Status::Invalid("--memory and --remote-memory name the same thing (the run's remote memory); give one");
  }
  if (f.simulate != "stable" && f.simulate != "all") {
    return Status::Invalid("--simulate = \"" + f.simulate +
                           "\": allowed: stable (stop once no candidate left can beat the best simulated), all "
                           "(every one of --top)");
  }
  in->until_stable = f.simulate == "stable";
  if (f.quiet && f.progress) {
    return Status::Invalid(
        "--quiet and --progress contradict each other; give one (--quiet: no progress lines, "
        "--progress: progress lines even when stderr is not a terminal)");
  }
  return Status::Ok();
}

// The model, the network and the system JSON, each checked for what a search needs.
Status ReadSearchFiles(const SearchFlags& f, SearchInputs* in) {
  ORRERY_PARSE_OR_RETURN(in->model, gen::LoadModel(f.model));
  if (in->model.kind != gen::ModelKind::kTransformer) {
    return Status::Invalid("--model = \"" + f.model +
                           "\": a DLRM; 'orrery search' searches transformer strategies "
                           "(tp, cp, ep, pp, dp); allowed: a transformer preset or YAML");
  }
  auto dims = ReadNetworkDims(f.network);
  if (!dims.ok()) return dims.status().Prefixed("--network: ");
  in->dims = std::move(dims.value());
  int64_t network_npus = 1;
  for (const Dim& d : in->dims) network_npus *= d.npus;
  if (network_npus != in->npus) {
    return Status::Invalid("--npus = " + std::to_string(in->npus) + " but the network (" + f.network + ") has " +
                           std::to_string(network_npus) + " NPUs; they must be equal");
  }
  // The memory files the simulations read: a bad one ends the search here, not in every candidate.
  if (!f.memory.empty()) {
    if (auto m = ReadFlatYaml(f.memory); !m.ok()) return m.status().Prefixed("--memory: ");
  }
  if (!f.remote_memory.empty()) {
    if (auto m = ReadAstraRemoteMemoryJson(f.remote_memory); !m.ok()) return m.status().Prefixed("--remote-memory: ");
  }
  auto sys = ReadAstraSystemJson(f.system);
  if (!sys.ok()) return sys.status().Prefixed("--system: ");
  in->system = std::move(sys.value());
  if (!in->system.roofline_enabled || in->system.peak_perf_tflops <= 0) {
    return Status::Invalid("--system = \"" + f.system +
                           "\": roofline-enabled is 0 or peak-perf is missing; the "
                           "generated compute is timed by the roofline; allowed: a system JSON with "
                           "\"roofline-enabled\": 1, \"peak-perf\" and \"local-mem-bw\" (orrery gen --device=a100 "
                           "--system-out=F.json writes one)");
  }
  return Status::Ok();
}

// Progress on stderr: redrawn on a terminal, plain lines with --progress, none with --quiet.
gen::SearchProgress::Mode ProgressMode(const SearchFlags& f) {
  if (f.progress) return gen::SearchProgress::Mode::kLines;
  return !f.quiet && isatty(STDERR_FILENO) != 0 ? gen::SearchProgress::Mode::kTerminal
                                                : gen::SearchProgress::Mode::kOff;
}

// Enumerates, pre-filters and ranks every strategy by the symbolic cost.
gen::SearchResult RankStrategies(const SearchFlags& f, const SearchInputs& in, gen::SearchProgress* progress,
                                 std::chrono::steady_clock::time_point start) {
  gen::SearchSpace space;
  space.npus = in.npus;
  space.global_batch = in.batch;
  space.hbm_bytes = static_cast<uint64_t>(GBToBytes(in.hbm_gb));
  const gen::CostModel cost = gen::CostModelOf(in.system, in.dims);
  gen::RankOptions ro;
  ro.top = static_cast<size_t>(in.top);
  ro.merge_twins = !f.keep_twins;
  ro.by_lower_bound = in.until_stable;
  ro.progress = [progress](const gen::RankProgress& p) {
    progress->Ranking(p.visited, p.total, p.best ? SecondsToMs(p.best->cost.total_s) : -1.0);
  };
  gen::SearchResult result = gen::SearchStrategies(in.model, space, cost, ro);
  const uint64_t survivors = result.pruned[static_cast<int>(gen::PruneReason::kSurvives)];
  const double ranked_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::fprintf(stderr,
               "orrery search: pre-filter: %llu strategies in %.3f s (%.0f per second, one thread); "
               "%llu survive, %llu distinct; ranked by the symbolic cost in %.3f s since start\n",
               static_cast<unsigned long long>(result.enumerated), result.prefilter_seconds,
               result.prefilter_seconds > 0 ? static_cast<double>(result.enumerated) / result.prefilter_seconds : 0.0,
               static_cast<unsigned long long>(survivors), static_cast<unsigned long long>(result.distinct), ranked_s);
  return result;
}

Status NoSurvivorError(const SearchInputs& in, const gen::SearchResult& result) {
  std::string reasons;
  for (int k = 1; k < gen::kNumPruneReasons; ++k) {
    if (result.pruned[k] == 0) continue;
    reasons += std::string(reasons.empty() ? "" : ", ") + gen::PruneReasonText(static_cast<gen::PruneReason>(k)) +
               " (" + std::to_string(result.pruned[k]) + ")";
  }
  return Status::Invalid("no strategy survives: " + in.model.name + " on " + std::to_string(in.npus) +
                         " NPUs with global batch " + std::to_string(in.batch) + ": " +
                         std::to_string(result.enumerated) + " enumerated, pruned by " + reasons +
                         "; allowed: a global batch divisible by b*dp*ep for some b in 1,2,4,8, more --hbm-gb, "
                         "or an NPU count whose factors divide the model's shape");
}

std::vector<gen::Simulated> SimulateTop(const SearchFlags& f, const SearchInputs& in, const gen::SearchResult& result,
                                        const Registries& registries, gen::SearchProgress* progress,
                                        std::chrono::steady_clock::time_point start, gen::WinnerStatus* winner) {
  gen::SimulateOptions sim;
  sim.system_path = f.system;
  sim.network = f.network;
  sim.memory_path = f.remote_memory;
  sim.memory_config_path = f.memory;
  sim.jobs = static_cast<int>(in.jobs);
  sim.time_limit_s = in.time_limit_s;
  sim.start = start;
  sim.registries = &registries;
  sim.stop_when_stable = in.until_stable;
  sim.rest_lower_s = result.rest_lower_s;
  sim.progress = progress;
  const auto sim_start = std::chrono::steady_clock::now();
  std::vector<gen::Simulated> sims = gen::SimulateCandidates(in.model, result.top, sim, winner);
  progress->Finish();
  size_t done = 0, stopped = 0;
  for (const auto& s : sims) done += s.done ? 1 : 0, stopped += s.stopped ? 1 : 0;
  const double sim_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - sim_start).count();
  std::fprintf(stderr, "orrery search: simulated %zu of %zu in %.1f s on %lld jobs (%.1f per minute)%s\n", done,
               sims.size(), sim_s, static_cast<long long>(in.jobs), sim_s > 0 ? done * 60.0 / sim_s : 0.0,
               stopped > 0 ? (", " + std::to_string(stopped) + " stopped at the time limit").c_str() : "");
  if (winner->stable) {
    std::fprintf(stderr, "orrery search: the winner was stable %.1f s after the start\n", winner->stable_after_s);
  }
  return sims;
}

int Search(const SearchFlags& f) {
  const auto start = std::chrono::steady_clock::now();
  SearchInputs in;
  for (Status st : {RequiredFlags(f), ReadSearchNumbers(f, &in)}) {
    if (!st.ok()) return Fail(st);
  }
  std::vector<NamedFile> inputs = {{"--model", f.model},
                                   {"--network", f.network},
                                   {"--system", f.system},
                                   {"--memory", f.memory},
                                   {"--remote-memory", f.remote_memory}};
  for (const std::string& plugin : f.plugins) inputs.push_back({"--plugin", plugin});
  if (Status st = CheckOutputsAreNotInputs({{"--csv", f.csv}}, inputs); !st.ok()) return Fail(st);
  if (Status st = ReadSearchFiles(f, &in); !st.ok()) return Fail(st);
  auto set = BuildRegistrySet(f.plugins);
  if (!set.ok()) return Fail(set.status());
  const Registries registries{&set.value()->backends, &set.value()->algorithms, &set.value()->memories};
  gen::SearchProgress progress(ProgressMode(f), start);
  const gen::SearchResult result = RankStrategies(f, in, &progress, start);
  if (result.pruned[static_cast<int>(gen::PruneReason::kSurvives)] == 0) return Fail(NoSurvivorError(in, result));
  gen::WinnerStatus winner;
  const std::vector<gen::Simulated> sims = SimulateTop(f, in, result, registries, &progress, start, &winner);
  gen::SearchHeader h{in.model.name, in.npus, in.batch, in.hbm_gb, f.network, f.system};
  std::fputs(gen::FormatSearchText(h, result, sims, winner).c_str(), stdout);
  if (!f.csv.empty()) {
    if (Status st = WriteFileWhole(f.csv, gen::FormatSearchCsv(result, sims), "--csv"); !st.ok()) return Fail(st);
  }
  return 0;
}

}  // namespace

void AddSearchCommand(Commands* commands, CLI::App* root) {
  auto f = std::make_shared<SearchFlags>();
  CLI::App* s = commands->AddLeaf(
      root, "search", "search parallelism strategies of a transformer: pre-filter, symbolic ranking, top-k simulated",
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
  s->add_option("--top", f->top, "simulate at most the K best by symbolic cost (1..100000)")
      ->type_name("K")
      ->capture_default_str();
  s->add_option("--simulate", f->simulate,
                "stable: stop once the best simulated time is at most every unsimulated candidate's lower bound; "
                "all: every one of --top")
      ->type_name("stable|all")
      ->capture_default_str();
  s->add_option("--jobs", f->jobs, "simulation threads (1..256)")->type_name("N")->capture_default_str();
  s->add_option("--time-limit", f->time_limit,
                "after this many seconds (from the start) start no simulation and stop the running ones (reported "
                "as stopped)")
      ->type_name("SECONDS");
  s->add_flag("--keep-twins", f->keep_twins,
              "rank and simulate twins (ZeRO-1/2, rank orders that run identically) separately instead of once");
  s->add_flag("--quiet", f->quiet,
              "no progress lines on stderr (by default one redrawn line when stderr is a terminal)");
  s->add_flag("--progress", f->progress,
              "progress lines on stderr (ranking, candidates simulated, best so far, elapsed) at most once a second, "
              "even when stderr is not a terminal");
  s->add_option("--csv", f->csv, "also write the table as CSV")->type_name("FILE");
  s->add_option("--plugin", f->plugins,
                "load a plugin shared library whose backends or algorithms the system names (repeatable)")
      ->type_name("PATH.so")
      ->allow_extra_args(false);
}

}  // namespace orrery::cli
