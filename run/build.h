// The second and third stages of a run: a Simulation is built from a Spec
// (run/spec.h) — the event queue, topology, network backend, memory,
// collective engine and per-NPU executors it owns — then run to the end, and
// asked for its report. It reads no configuration file (graphs are loaded from
// the Spec's source); each Simulation is independent of every other, so
// several run on several threads.
#pragma once
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/event_queue.h"
#include "core/status.h"
#include "network/backend.h"
#include "network/topology.h"
#include "report/timeline.h"
#include "run/rank_classes.h"
#include "run/run.h"
#include "run/spec.h"
#include "system/collective_engine.h"
#include "workload/executor.h"

namespace orrery {

class MemoryBackend;
class ProgressMeter;

// A cooperative stop for Simulation::Run: with a deadline or a cancel flag the
// loop runs its events in batches of kEventsPerCheck and, between batches,
// reads the clock and the flag (never per event). Without either the loop is
// the plain one. When it fires, Run returns an error naming the simulated time
// reached and sets `stopped`.
struct RunStop {
  static constexpr uint64_t kEventsPerCheck = 1 << 16;
  bool has_deadline = false;
  std::chrono::steady_clock::time_point deadline{};
  const std::atomic<bool>* cancel = nullptr;  // optional; true: stop
  std::string reason = "the time limit";      // "stopped at <reason>"
  bool stopped = false;                       // set by Run when it stopped the loop

  bool active() const { return has_deadline || cancel != nullptr; }
  // True once the deadline has passed or the flag is set (reads the clock).
  bool Due() const {
    if (cancel && cancel->load(std::memory_order_relaxed)) return true;
    return has_deadline && std::chrono::steady_clock::now() >= deadline;
  }
  // Due() when active, and then `stopped` set: what a long step outside the
  // event loop (a generation, the graphs a build loads) looks at between its
  // parts.
  bool Fire() {
    if (!active() || !Due()) return false;
    stopped = true;
    return true;
  }
};

// `inner` with the stop looked at before every rank's graph it loads and
// every rank's peers it lists (the symmetry and rank-class decisions of a
// large workload's build do both for many ranks): once it fired, Load fails
// naming the rank ("stopped at <reason> while building (before loading rank
// R's graph)") and RankPeers lists none, so the build ends at the next graph
// it loads and RunSpec before running. `stop` outlives the source.
std::shared_ptr<const GraphSource> StoppableSource(std::shared_ptr<const GraphSource> inner, RunStop* stop);

class Simulation {
 public:
  ~Simulation();
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  // Decides symmetry, loads the graphs, builds everything. `registries`
  // names the backends' factories (the Spec already checked the names).
  static Result<std::unique_ptr<Simulation>> Build(const Spec& spec, const Registries& registries);

  // Runs the event loop to the end (once). `progress` (optional) hears, every
  // few thousand events, the simulated time, the events run and the ranks
  // finished; `stop` (optional) ends the loop early (see RunStop).
  Status Run(ProgressMeter* progress = nullptr, RunStop* stop = nullptr);

  // After Run: the report (the Spec's hash and configuration included).
  Result<RunReport> Report();

  bool symmetric() const { return symmetric_; }

 private:
  explicit Simulation(const Spec& spec);
  // Building (run/build.cc), in this order.
  Status BuildParts(const Registries& registries);
  Status DecideRanksToSimulate(const GraphLoadOptions& lo, std::vector<NpuGraph>* graphs);
  Status PrepareObserversOnClasses(GraphLoadOptions lo);
  TimelineClasses TimelineClassView();
  Status CheckFitsInMemory() const;
  Result<std::map<std::string, int>> BuildEngine();
  Status LoadGraphs(const GraphLoadOptions& lo, std::vector<NpuGraph>* graphs);
  Status BuildMemory(const Registries& registries);
  Status CheckMemoryNodes(const std::vector<NpuGraph>& graphs) const;
  Status BuildBackend(const Registries& registries);
  ComputeModel MakeComputeModel() const;
  Status BuildObservers(ExecutorHooks* hooks);

  // The report's parts (run/run.cc).
  uint64_t TotalsScale() const;
  RunReport ReportTotals() const;
  std::vector<NpuReport> ReportNpus(Tick* finished) const;
  DimReport ReportDim(int d, Tick finished) const;
  GeneratedReport ReportGenerated(Tick finished) const;
  void AddAllCollectives(RunReport& rep) const;
  void AddClasses(RunReport& rep) const;
  Status ReportLinks(RunReport* rep);
  Status ReportCriticalPath(RunReport* rep);

  int RanksFinished() const;
  // The loop in batches (a progress meter or a stop): false when `stop` fired.
  bool RunBatched(ProgressMeter* progress, RunStop* stop);

  // Forwards memory completions to the executor, which is created after the memory.
  struct Forward : EventHandler {
    EventHandler* to = nullptr;
    void HandleEvent(uint32_t kind, uint64_t arg) override { to->HandleEvent(kind, arg); }
  };

  Spec spec_;  // a copy: the backends keep pointers into its parameters
  bool symmetric_ = false;
  std::string symmetry_note_;
  ClassDecision classes_;  // rank classes (run/rank_classes.h); the engine points into its map
  // With classes and a timeline: the shown ranks' own graphs (not representatives), and per rank its graph.
  std::vector<NpuGraph> shown_graphs_;
  std::vector<const NpuGraph*> class_graph_of_;
  std::map<std::string, int> group_index_;  // communicator groups by name, as the engine numbers them
  GraphLoadOptions load_options_;           // how graphs were read (groups: group_index_)
  EventQueue queue_;
  Topology topology_;
  std::unique_ptr<CollectiveEngine> engine_;
  Forward mem_sink_;
  std::unique_ptr<MemoryBackend> memory_;
  Status backend_failure_;
  std::map<std::string, std::string>
      backend_params_;  // the run's backend settings: --backend flags and kMultiDimChargeParam
  std::unique_ptr<NetworkBackend> backend_;
  std::unique_ptr<NodeRecorder> recorder_;
  std::unique_ptr<TimelineWriter> timeline_;
  std::unique_ptr<Executor> exec_;
  bool ran_ = false;
};

// BuildSimulation + Run + Report. `stop` (optional) is also looked at before
// the build and before the run.
Result<RunReport> RunSpec(const Spec& spec, const Registries& registries, ProgressMeter* progress = nullptr,
                          RunStop* stop = nullptr);

}  // namespace orrery
