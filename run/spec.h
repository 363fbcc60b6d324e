// The first stage of a run: a Spec is every input of a simulation read,
// parsed and checked once, defaults applied. It is a value: a sweep point is a
// Spec with fields replaced, many Specs run concurrently (each built into its
// own Simulation, run/build.h), and SpecHash names what a report came
// from.
//
//   RunConfig ──ResolveSpec──▶ Spec ──BuildSimulation──▶ Simulation ──Run──▶ RunReport
//   (paths, flags)   (files read here, once)   (queue, network, memory, executors)
//
// A Spec has two parts. The inputs (network dimensions, the parsed system
// JSON, memory settings, the graph source, run options) are what a caller
// replaces; CompleteSpec derives the rest from them (system options with the
// injection scale and custom algorithms, memory parameters, communicator
// groups, the graphs' digest), reading a file again only when what it depends
// on (the NPU count) changed.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/heterogeneity.h"
#include "core/status.h"
#include "extern/astra_config.h"
#include "extern/network_dims.h"
#include "network/backend.h"
#include "system/options.h"
#include "workload/executor.h"
#include "workload/graph_source.h"

namespace orrery {

class MemoryRegistry;

// --symmetry: kAuto simulates one representative rank when every rank
// provably runs the same schedule, else one per rank class when it can
// (run/symmetry.h, run/rank_classes.h); kOff simulates every rank.
enum class SymmetryMode { kAuto, kOff };
const char* SymmetryName(SymmetryMode mode);  // "auto", "off"
// "auto" or "off"; false for anything else.
bool ParseSymmetry(const std::string& text, SymmetryMode* mode);

// The inputs as the user named them: messages and the report's "config".
struct SpecFiles {
  std::string workload_prefix;  // PREFIX: reads PREFIX.<rank>.et
  std::string system;           // ASTRA-sim system JSON
  std::string network;          // ASTRA-sim or Orrery network YAML, or a topology notation
  std::string remote_memory;    // ASTRA-sim remote-memory JSON (optional)
  std::string memory_config;    // Orrery memory YAML (optional; overrides remote_memory)
  std::string comm_groups;      // communicator groups JSON (optional)
  std::string heterogeneity;    // per-NPU compute speeds and link bandwidths YAML (optional)
  // The report's "config" shows paths starting with `shown_prefix_from` with
  // `shown_prefix_to` instead (an example's temporary folder), so it is the same every run.
  std::string shown_prefix_from, shown_prefix_to;
};

// How the run goes, besides its input files: what a flag or a sweep's run.*
// axis sets.
struct RunOptions {
  std::string backend = "analytical";                 // a network backend's registered name (plugins add names)
  std::map<std::string, std::string> backend_params;  // e.g. remote-endpoint
  int iterations = 1;
  SymmetryMode symmetry = SymmetryMode::kAuto;
  // ASTRA-sim's --injection-scale: a given endpoint-delay x scale, truncated to whole ns as ASTRA-sim does.
  double injection_scale = 1.0;
  bool allow_oversubscription = false;  // over-capacity memory is a warning, not an error
  // --ctrl-deps=repair: drop the traces' dangling, self and cyclic control edges (GraphLoadOptions).
  bool repair_ctrl_deps = false;
  // --host-collectives=replay: host-side COMM_COLL nodes run as CPU ops (GraphLoadOptions).
  bool replay_host_collectives = false;
};

// What the run records besides its totals; none of it changes simulated times,
// so none of it enters the hash.
struct ObserveSpec {
  // Record every node's start, end and what it waited for, and find the critical
  // path (RunReport::critical_path): 32 bytes per node and iteration of each simulated rank.
  bool critical_path = false;
  bool link_stats = false;       // per-link bytes and busy time (backends that model links)
  bool collect_links = false;    // fill RunReport::links (as link_stats does) without listing them in the report
  bool all_collectives = false;  // RunReport::all_collectives: every simulated rank's collectives
  // --timeline, --timeline-ranks, --timeline-window (report/timeline.h); no timeline when the path is empty.
  std::string timeline_path, timeline_ranks, timeline_window;
};

// What a caller asks for: the files, the options, what to observe — the
// parts a Spec holds too, so ResolveSpec copies them whole.
struct RunConfig {
  SpecFiles files;
  // Graphs from elsewhere (a generator in memory, workload/graph_source.h);
  // when set, `files.workload_prefix` must be empty.
  std::shared_ptr<const GraphSource> source;
  // Inputs already parsed (a sweep point replaces fields of a base without
  // files): when set they are used instead of reading files.system /
  // files.network, which then only name them in messages.
  std::shared_ptr<const AstraSystemConfig> system;
  std::shared_ptr<const std::vector<Dim>> network_dims;
  RunOptions run;
  ObserveSpec observe;
};

// The plugins' registries a run may name things from.
struct Registries {
  const BackendRegistry* backends = nullptr;       // required
  const CollectiveRegistry* algorithms = nullptr;  // plugin collective algorithms (optional)
  const MemoryRegistry* memories = nullptr;        // memory backends (null: the built-ins)
};

// The memory, resolved (CompleteSpec): Orrery's memory YAML or ASTRA-sim's remote-memory JSON.
struct MemorySpec {
  std::string backend = "astra-sim";
  std::string source;                         // the file the settings came from, for messages
  std::map<std::string, std::string> params;  // the backend's settings (Orrery's own keys removed)
  std::map<std::string, int> lines;           // memory YAML: each key's line
  CapacityOptions capacity;
  Tick local_latency_ns = 0;
  int pool_via_dim = -1;
};

struct Spec {
  SpecFiles files;
  // --- inputs (a sweep replaces these, then calls CompleteSpec) ---
  std::vector<Dim> dims;
  AstraSystemConfig system;               // defaults applied
  AstraRemoteMemoryConfig remote_memory;  // ASTRA-sim JSON (none when not given)
  FlatYaml memory_yaml;                   // Orrery memory YAML, as read (when files.memory_config)
  std::shared_ptr<const GraphSource> source;
  RunOptions run;
  ObserveSpec observe;

  // --- derived (CompleteSpec) ---
  int npus = 0;
  SystemOptions options;  // endpoint delay scaled, plugin and custom algorithms bound
  MemorySpec memory;
  std::map<std::string, std::vector<int>> comm_groups;  // from the file or the source
  bool groups_from_file = false;
  // Where the groups came from, for the report ("" when there are none):
  // --comm-group-configuration, the traces' process-group metadata, or the generator.
  std::string groups_note;
  Heterogeneity heterogeneity;  // from files.heterogeneity (empty: every NPU and link as configured)
  SourceDigest graphs;
  uint64_t trace0_bytes = 0, trace_bytes = 0;  // the inputs' sizes, for the memory estimate
  // Caches keyed by what they depend on, so a sweep point reads no file again.
  int groups_npus = -1, graphs_npus = -1, custom_npus = -1, custom_dims = -1;
  const GraphSource* graphs_source = nullptr;
  const GraphSource* groups_source = nullptr;  // the source whose process groups comm_groups holds
  std::map<std::string, std::shared_ptr<const std::vector<CustomGraph>>> custom;  // by prefix
};

// Reads and checks every input `config` names (a field already parsed in
// `config` — system, network_dims, source — is taken as is), then CompleteSpec.
Result<Spec> ResolveSpec(const RunConfig& config, const Registries& registries);

// The inputs alone, read and parsed, not yet completed (the graph source may
// be missing): a sweep's base, whose points set the rest.
Result<Spec> ReadSpecInputs(const RunConfig& config, const Registries& registries);

// The network backend's name is one the registry has.
Status CheckBackendName(const std::string& backend, const Registries& registries);

// Derives the Spec's derived part from its inputs and checks them together
// (NPU count, dimensions named by the memory, ranks of the groups, one graph
// per NPU). Reads a file only when what it depends on changed.
Status CompleteSpec(Spec* spec, const Registries& registries);

// Every resolved input that decides the simulated result, one "key=value" per
// line in a fixed order; file names are left out (their content is in), so
// the same inputs under other names or formatted otherwise give the same text.
// What only observes the run (ObserveSpec) is left out; --injection-scale
// enters as the endpoint delay it gives.
std::string SpecCanonical(const Spec& spec);
// FNV-1a (64 bits) of SpecCanonical, as 16 hex digits.
std::string SpecHash(const Spec& spec);
// The report's "config" object as JSON text: the hash, the files as given and
// every resolved value (defaults included).
std::string SpecConfigJson(const Spec& spec);

}  // namespace orrery
