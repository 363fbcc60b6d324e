// `orrery run`: simulate ASTRA-sim inputs (or an embedded example).
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <sstream>

#include "apps/commands.h"
#include "core/output_file.h"
#include "gen/device.h"
#include "gen/gen_source.h"
#include "plugins/remote/remote_backend.h"
#include "run/build.h"
#include "run/examples.h"
#include "run/run.h"
#include "run/spec.h"
#include "workload/progress.h"

namespace orrery::cli {

namespace {

struct RunFlags {
  std::string workload, generate, system, network, remote_memory, memory, comm_group, heterogeneity, example;
  std::string backend = "analytical";
  std::vector<std::string> plugins;
  std::string remote_endpoint, remote_model = "analytical", remote_timeout_ms = "10000";
  bool allow_oversubscription = false;
  std::string ctrl_deps = "strict";
  std::string host_collectives = "refuse";
  std::string report_format = "text";
  bool link_stats = false;
  bool critical_path = false;
  std::string timeline, timeline_ranks, timeline_window;
  std::string collectives_csv, links_csv;
  std::string iterations = "1", symmetry = "auto";
  // ASTRA-sim's own flags, accepted so its command lines run unchanged.
  std::string logging_configuration, logging_folder, num_queues_per_dim = "1", compute_scale = "1", comm_scale = "1",
                                                     injection_scale = "1";
  bool rendezvous_protocol = false;
  bool quiet = false, progress = false;
  CLI::App* app = nullptr;
};

bool Given(const CLI::App* app, const char* flag) { return app->get_option(flag)->count() > 0; }

// ASTRA-sim flags: honoured where Orrery models them, else one note on stderr.
Status AstraSimFlags(const RunFlags& f, RunConfig* cfg) {
  auto note = [](const std::string& flag, const std::string& why) {
    std::fprintf(stderr, "orrery: note: %s has no effect: %s\n", flag.c_str(), why.c_str());
  };
  const CLI::App* app = f.app;
  if (Given(app, "--logging-configuration")) note("--logging-configuration", "Orrery logs through glog; use -v N");
  if (Given(app, "--logging-folder")) note("--logging-folder", "Orrery writes no log files; logs go to stderr");
  if (Given(app, "--num-queues-per-dim")) {
    auto q = IntFlag("--num-queues-per-dim", f.num_queues_per_dim, 1, 1024);
    if (!q.ok()) return q.status();
    if (q.value() != 1) note("--num-queues-per-dim", "Orrery models one queue per dimension (ASTRA-sim's default)");
  }
  if (Given(app, "--compute-scale")) {
    auto s = DoubleFlag("--compute-scale", f.compute_scale, kPositive);
    if (!s.ok()) return s.status();
    note("--compute-scale", "ASTRA-sim defines it but never reads it");
  }
  if (Given(app, "--comm-scale")) {
    auto s = DoubleFlag("--comm-scale", f.comm_scale, kPositive);
    if (!s.ok()) return s.status();
    note("--comm-scale", "ASTRA-sim stores it but never uses it (communication sizes are unscaled there too)");
  }
  if (Given(app, "--rendezvous-protocol")) {
    note("--rendezvous-protocol", "ASTRA-sim passes it to the system layer, which never uses it");
  }
  auto inj = DoubleFlag("--injection-scale", f.injection_scale, DoubleRange{0, 1e6, false});
  if (!inj.ok()) return inj.status();
  cfg->run.injection_scale = inj.value();
  return Status::Ok();
}

// The checks of the flags alone, before any input is read.
Status CheckRunFlags(const RunFlags& f, RunConfig* cfg) {
  ORRERY_RETURN_IF_ERROR(EnumFlag("--report-format", f.report_format, {"text", "json", "csv"}));
  ORRERY_RETURN_IF_ERROR(EnumFlag("--symmetry", f.symmetry, {"auto", "off"}));
  ORRERY_RETURN_IF_ERROR(EnumFlag("--ctrl-deps", f.ctrl_deps, {"strict", "repair"}));
  ORRERY_RETURN_IF_ERROR(EnumFlag("--host-collectives", f.host_collectives, {"refuse", "replay"}));
  ParseSymmetry(f.symmetry, &cfg->run.symmetry);
  ORRERY_PARSE_OR_RETURN(const int64_t iterations, IntFlag("--iterations", f.iterations, 1, 1000000));
  cfg->run.iterations = static_cast<int>(iterations);
  ORRERY_PARSE_OR_RETURN(const int64_t timeout, IntFlag("--remote-timeout-ms", f.remote_timeout_ms, 1, 86400000));
  if (!f.remote_endpoint.empty()) ORRERY_RETURN_IF_ERROR(AddressFlag("--remote-endpoint", f.remote_endpoint, 1));
  for (const char* flag : {"--timeline-ranks", "--timeline-window"}) {
    if (Given(f.app, flag) && f.timeline.empty()) {
      return Status::Invalid(std::string(flag) + " selects what --timeline=FILE writes; give --timeline too");
    }
  }
  if (Given(f.app, "--timeline") && f.timeline.empty()) {
    return Status::Invalid("--timeline = \"\": empty; allowed: a file path in an existing, writable directory");
  }
  if (f.backend == "remote") {  // only the remote backend reads them (the configuration hash has only what is used)
    cfg->run.backend_params["remote-endpoint"] = f.remote_endpoint;
    cfg->run.backend_params["remote-model"] = f.remote_model;
    cfg->run.backend_params["remote-timeout-ms"] = std::to_string(timeout);
  }
  return AstraSimFlags(f, cfg);
}

// A temporary folder, removed with everything in it when this goes.
struct TempFolder {
  std::filesystem::path path;
  ~TempFolder() {
    std::error_code ec;
    if (!path.empty()) std::filesystem::remove_all(path, ec);
  }
};

// --example=NAME: the example's inputs written into a temporary folder.
Status ExampleInputs(const RunFlags& f, RunConfig* cfg, TempFolder* tmp) {
  for (const char* input :
       {"--workload-configuration", "--system-configuration", "--network-configuration",
        "--remote-memory-configuration", "--memory-configuration", "--comm-group-configuration", "--generate"}) {
    if (Given(f.app, input)) {
      return Status::Invalid("--example=" + f.example + " runs embedded inputs; it cannot be combined with " + input +
                             " (give either the example or the input files)");
    }
  }
  char tmpl[] = "/tmp/orrery-example-XXXXXX";
  if (!mkdtemp(tmpl)) return Status::Env("cannot create a temporary directory");
  tmp->path = tmpl;
  ORRERY_RETURN_IF_ERROR(WriteExample(f.example, tmp->path.string(), cfg));
  cfg->files.shown_prefix_from = tmp->path.string();  // the report's config names the example, not the temporary folder
  cfg->files.shown_prefix_to = "<example " + f.example + ">";
  return Status::Ok();
}

// The input files as named, and --generate's workload built in memory.
Status FileInputs(const RunFlags& f, RunConfig* cfg) {
  if (f.workload.empty() && f.generate.empty() && f.system.empty() && f.network.empty()) {
    return Status::Invalid(
        "'orrery run' needs --workload-configuration (or --generate), --system-configuration "
        "and --network-configuration, or --example=default; 'orrery run --help' lists its flags");
  }
  if (Given(f.app, "--generate")) {
    for (const char* input : {"--workload-configuration", "--comm-group-configuration"}) {
      if (Given(f.app, input)) {
        return Status::Invalid(
            "--generate builds the workload and its communicator groups in memory; it cannot "
            "be combined with " +
            std::string(input));
      }
    }
    if (f.generate.find("--offload") != std::string::npos && f.remote_memory.empty() && f.memory.empty()) {
      return Status::Invalid("--generate=\"" + f.generate +
                             "\": --offload moves data to a remote memory; give "
                             "--remote-memory-configuration (ASTRA-sim JSON) or --memory-configuration (Orrery YAML)");
    }
    ORRERY_PARSE_OR_RETURN(cfg->source, gen::GeneratedSource(f.generate, f.network));
  }
  cfg->files.workload_prefix = f.workload;
  cfg->files.system = f.system;
  cfg->files.network = f.network;
  cfg->files.remote_memory = f.remote_memory;
  cfg->files.memory_config = f.memory;
  cfg->files.comm_groups = f.comm_group;
  cfg->files.heterogeneity = f.heterogeneity;
  return Status::Ok();
}

void ObserveFromFlags(const RunFlags& f, RunConfig* cfg) {
  cfg->run.backend = f.backend;
  cfg->observe.link_stats = f.link_stats;
  cfg->observe.critical_path = f.critical_path;
  cfg->observe.timeline_path = f.timeline;
  cfg->observe.timeline_ranks = f.timeline_ranks;
  cfg->observe.timeline_window = f.timeline_window;
  cfg->observe.all_collectives = f.report_format == "json" || !f.collectives_csv.empty();
  cfg->observe.collect_links = !f.links_csv.empty();
  cfg->run.allow_oversubscription = f.allow_oversubscription;
  cfg->run.repair_ctrl_deps = f.ctrl_deps == "repair";
  cfg->run.replay_host_collectives = f.host_collectives == "replay";
}

// --generate's --system-out: the system JSON of its --device, as 'orrery gen
// --system-out' writes it ("" when not asked for).
Result<std::string> GeneratedSystemJson(const RunFlags& f, std::string* path) {
  if (!Given(f.app, "--generate")) return std::string();
  ORRERY_PARSE_OR_RETURN(const gen::GenOptions o, gen::ReadGenerateArguments(f.generate));
  *path = o.system_out;
  if (o.system_out.empty()) return std::string();
  ORRERY_PARSE_OR_RETURN(const gen::DevicePreset d, gen::FindDevice(o.device));
  // No algorithm lists (dims 0), as `orrery gen --system-out` without --network writes.
  return gen::DeviceSystemJson(d, {o.efficiency, o.device, 0, o.group_collective_model});
}

// The files a run writes besides the report — --collectives, --links and
// --generate's --system-out — created before the run (a bad path fails at
// once) as temporary files and renamed over their paths after it
// (core/output_file.h): a failed run leaves none behind and changes no file.
class RunOutputs {
 public:
  Status Open(const RunFlags& f) {
    for (Export& e : exports_) {
      e.path = e.flag == std::string("--links") ? f.links_csv : f.collectives_csv;
      if (!Given(f.app, e.flag)) continue;
      ORRERY_PARSE_OR_RETURN(e.file, OutputFile::Create(e.path, e.flag));
    }
    ORRERY_PARSE_OR_RETURN(system_json_, GeneratedSystemJson(f, &system_path_));
    if (system_path_.empty()) return Status::Ok();
    ORRERY_PARSE_OR_RETURN(system_out_, OutputFile::Create(system_path_, "--system-out"));
    return Status::Ok();
  }

  Status Write(const RunReport& report, const std::string& backend) {
    for (Export& e : exports_) {
      if (!e.file.is_open()) continue;
      const bool links = e.flag == std::string("--links");
      if (links) {
        ORRERY_RETURN_IF_ERROR(e.file.Write(FormatLinksCsv(report)));
      } else {  // streamed: block by block into the file
        ORRERY_RETURN_IF_ERROR(WriteCollectivesCsv(report, [&e](std::string_view text) { return e.file.Write(text); }));
      }
      ORRERY_RETURN_IF_ERROR(e.file.Commit());
      if (links && report.links.empty()) {
        std::fprintf(
            stderr, "orrery: note: --links: %s\n",
            report.messages == 0
                ? "no message crossed the network"
                : ("backend " + backend + " has no per-link statistics; the file has only its header").c_str());
      }
    }
    if (!system_out_.is_open()) return Status::Ok();
    ORRERY_RETURN_IF_ERROR(system_out_.Write(system_json_));
    ORRERY_RETURN_IF_ERROR(system_out_.Commit());
    std::fprintf(stderr, "orrery: note: wrote %s (--generate's --system-out)\n", system_path_.c_str());
    return Status::Ok();
  }

 private:
  struct Export {
    const char* flag;
    std::string path;
    OutputFile file;
  };
  Export exports_[2] = {{"--collectives", "", {}}, {"--links", "", {}}};
  std::string system_path_, system_json_;
  OutputFile system_out_;
};

// An output flag naming an input file would destroy it: refused before anything is read.
Status CheckOutputsAgainstInputs(const RunFlags& f) {
  std::vector<NamedFile> inputs;
  for (const std::string& trace : TraceFilesOf(f.workload)) inputs.push_back({"--workload-configuration", trace});
  for (const auto& [flag, path] : {std::pair<const char*, const std::string*>{"--system-configuration", &f.system},
                                   {"--network-configuration", &f.network},
                                   {"--remote-memory-configuration", &f.remote_memory},
                                   {"--memory-configuration", &f.memory},
                                   {"--comm-group-configuration", &f.comm_group},
                                   {"--heterogeneity", &f.heterogeneity}}) {
    inputs.push_back({flag, *path});
  }
  for (const std::string& plugin : f.plugins) inputs.push_back({"--plugin", plugin});
  std::istringstream generate(f.generate);  // the files --generate reads: its --model, --device
  std::string system_out;
  for (std::string a; generate >> a;) {
    const size_t eq = a.find('=');
    if (eq == std::string::npos || a.rfind("--", 0) != 0) continue;
    if (a.compare(0, eq, "--system-out") == 0) {
      system_out = a.substr(eq + 1);
    } else if (std::filesystem::is_regular_file(a.substr(eq + 1))) {
      inputs.push_back({"--generate's " + a.substr(0, eq), a.substr(eq + 1)});
    }
  }
  const std::vector<NamedFile> outputs = {{"--collectives", f.collectives_csv},
                                          {"--links", f.links_csv},
                                          {"--timeline", f.timeline},
                                          {"--generate's --system-out", system_out}};
  return CheckOutputsAreNotInputs(outputs, inputs);
}

void PrintReport(const std::string& format, const RunReport& report) {
  if (format == "json") {
    std::fputs(FormatReportJson(report).c_str(), stdout);
  } else if (format == "csv") {
    std::fputs(FormatReportCsv(report).c_str(), stdout);
  } else {
    std::fputs(FormatReportText(report).c_str(), stdout);
  }
}

int Run(const RunFlags& f) {
  auto set = BuildRegistrySet(f.plugins, f.backend);
  if (!set.ok()) return Fail(set.status());
  const RegistrySet& r = *set.value();
  if (f.backend == "help") {
    std::printf("network backends:\n%s", r.backends.Help().c_str());
    return 0;
  }
  if (f.backend == "ns3" && !r.backends.Find("ns3")) {
    return Fail(Status::Invalid(
        "--network-backend=ns3: this orrery was built without ns-3; install libns3-dev, libgsl-dev and ns3 "
        "(scripts/setup.sh does) and rebuild"));
  }
  RunConfig cfg;
  if (Status st = CheckRunFlags(f, &cfg); !st.ok()) return Fail(st);
  if (Status st = CheckOutputsAgainstInputs(f); !st.ok()) return Fail(st);
  TempFolder example;
  if (Status st = f.example.empty() ? FileInputs(f, &cfg) : ExampleInputs(f, &cfg, &example); !st.ok()) return Fail(st);
  cfg.files.heterogeneity = f.heterogeneity;  // an example's cluster may be made heterogeneous too
  ObserveFromFlags(f, &cfg);
  RunOutputs exports;
  if (Status st = exports.Open(f); !st.ok()) return Fail(st);
  if (f.quiet && f.progress) {
    return Fail(
        Status::Invalid("--quiet and --progress contradict each other; give one (--quiet: no progress line, "
                        "--progress: a progress line per update even when stderr is not a terminal)"));
  }
  // The stages (run/spec.h, run/build.h), with a progress meter on stderr.
  const Registries registries{&r.backends, &r.algorithms, &r.memories};
  auto spec = ResolveSpec(cfg, registries);
  if (!spec.ok()) return Fail(spec.status());
  ProgressMeter meter(f.progress                   ? ProgressMeter::Mode::kLines
                      : !f.quiet && isatty(2) != 0 ? ProgressMeter::Mode::kTerminal
                                                   : ProgressMeter::Mode::kOff);
  auto report = RunSpec(spec.value(), registries, &meter);
  if (!report.ok()) return Fail(report.status());
  if (Status st = exports.Write(report.value(), cfg.run.backend); !st.ok()) return Fail(st);
  PrintReport(f.report_format, report.value());
  return 0;
}

}  // namespace

namespace {

void AddRunInputsFlags(CLI::App* run, RunFlags* f) {
  const std::string group = "Inputs";
  run->add_option("--workload-configuration", f->workload, "Chakra traces PREFIX.<rank>.et, one per NPU")
      ->type_name("PREFIX")
      ->group(group);
  run->add_option("--generate", f->generate,
                  "generate the workload in memory from 'orrery gen' flags instead of reading traces, "
                  "e.g. \"--model=llama3-8b --tp=8 --dp=2\"")
      ->type_name("\"GEN FLAGS\"")
      ->group(group);
  run->add_option("--system-configuration", f->system, "ASTRA-sim system JSON")->type_name("F.json")->group(group);
  run->add_option("--network-configuration", f->network,
                  "ASTRA-sim network YAML, Orrery's network YAML, or a topology notation string")
      ->type_name("F.yml")
      ->group(group);
  run->add_option("--comm-group-configuration", f->comm_group,
                  "communicator groups JSON {\"<name>\": [ranks...]} (optional)")
      ->type_name("F.json")
      ->group(group);
  run->add_option("--heterogeneity", f->heterogeneity,
                  "per-NPU compute speeds and per-NPU link bandwidths YAML (optional; docs/formats.md, "
                  "\"Heterogeneous clusters\")")
      ->type_name("F.yml")
      ->group(group);
  run->add_option("--ctrl-deps", f->ctrl_deps,
                  "strict: a trace's dangling, self or cyclic control edge (ctrl_deps) is an error; repair: "
                  "drop them and say how many per rank (operator-tree ctrl_deps of early Chakra converters)")
      ->type_name("MODE")
      ->capture_default_str()
      ->group(group);
  run->add_option("--host-collectives", f->host_collectives,
                  "refuse: a COMM_COLL node with is_cpu_op and neither comm_type nor comm_size (a collective's "
                  "host call, as early Chakra converters wrote it) is an error; replay: run it as a CPU op")
      ->type_name("MODE")
      ->capture_default_str()
      ->group(group);
  run->add_option("--example", f->example,
                  "run an embedded example instead of input files: " + ExampleNames() +
                      " (not together with input-file flags)")
      ->type_name("NAME")
      ->group(group);
}

void AddRunNetworkFlags(CLI::App* run, RunFlags* f) {
  const std::string group = "Network backend";
  run->add_option("--network-backend", f->backend,
                  "analytical (congestion-unaware), congestion-aware, remote, ns3, or a plugin's; 'help' lists them")
      ->type_name("NAME")
      ->capture_default_str()
      ->group(group);
  run->add_option("--plugin", f->plugins, "load a plugin shared library (repeatable)")
      ->type_name("PATH.so")
      ->allow_extra_args(false)
      ->group(group);
  run->add_option("--remote-endpoint", f->remote_endpoint, "remote backend: the peer, HOST:PORT or unix:/path")
      ->type_name("ADDR")
      ->group(group);
  run->add_option("--remote-model", f->remote_model, "remote backend: which model to ask the peer for")
      ->type_name("NAME")
      ->capture_default_str()
      ->group(group);
  run->add_option("--remote-timeout-ms", f->remote_timeout_ms,
                  "remote backend: how long to wait for each answer of the peer, 1..86400000 ms")
      ->type_name("MS")
      ->capture_default_str()
      ->group(group);
}

void AddRunMemoryFlags(CLI::App* run, RunFlags* f) {
  const std::string group = "Memory";
  run->add_option("--remote-memory-configuration", f->remote_memory,
                  "ASTRA-sim remote-memory JSON (optional; default: no remote memory)")
      ->type_name("F.json")
      ->group(group);
  run->add_option("--memory-configuration", f->memory,
                  "Orrery memory YAML (backend and settings); overrides the remote-memory JSON")
      ->type_name("F.yml")
      ->group(group);
  run->add_flag("--allow-oversubscription", f->allow_oversubscription,
                "memory over capacity is a warning in the report, not an error")
      ->group(group);
}

void AddRunOutputFlags(CLI::App* run, RunFlags* f) {
  const std::string group = "Output";
  run->add_option("--report-format", f->report_format, "text, json or csv, on stdout (logs and errors: stderr)")
      ->type_name("FMT")
      ->capture_default_str()
      ->group(group);
  run->add_flag("--link-stats", f->link_stats, "report bytes and busy time of the busiest links")->group(group);
  run->add_flag("--critical-path", f->critical_path,
                "find the critical path of the NPU that finishes last; the bottleneck line names what dominates it")
      ->group(group);
  run->add_option("--timeline", f->timeline,
                  "write a Chrome trace-event timeline (Perfetto, chrome://tracing): one process per NPU")
      ->type_name("FILE")
      ->group(group);
  run->add_option("--timeline-ranks", f->timeline_ranks, "the NPUs the timeline shows, e.g. 0-7,1024 (default: all)")
      ->type_name("LIST")
      ->group(group);
  run->add_option("--timeline-window", f->timeline_window,
                  "only spans that overlap this simulated interval, in ns (default: the whole run)")
      ->type_name("START_NS-END_NS")
      ->group(group);
  run->add_option("--collectives", f->collectives_csv,
                  "write every rank's collectives (node, type, bytes, algorithm, start, end) as CSV")
      ->type_name("FILE.csv")
      ->group(group);
  run->add_option("--links", f->links_csv,
                  "write every link's bytes and busy time as CSV (backends with per-link statistics)")
      ->type_name("FILE.csv")
      ->group(group);
}

void AddRunControlFlags(CLI::App* run, RunFlags* f) {
  const std::string group = "Run control";
  run->add_flag("--quiet", f->quiet,
                "no progress line on stderr (by default one shows after ~2 s when stderr is a terminal)")
      ->group(group);
  run->add_flag("--progress", f->progress,
                "print progress (simulated time, events/s, ranks finished) on stderr, one line per update, "
                "even when stderr is not a terminal")
      ->group(group);
  run->add_option("--iterations", f->iterations, "run each NPU's graph N times back to back, 1..1000000")
      ->type_name("N")
      ->capture_default_str()
      ->group(group);
  run->add_option("--symmetry", f->symmetry,
                  "auto: simulate one representative rank when every rank provably runs the same schedule, "
                  "else one per rank class (ranks equal up to renaming) when possible; off: simulate every rank")
      ->type_name("MODE")
      ->capture_default_str()
      ->group(group);
}

void AddRunAstraSimFlags(CLI::App* run, RunFlags* f) {
  const std::string group = "ASTRA-sim compatibility (accepted so ASTRA-sim command lines run unchanged)";
  run->add_option("--logging-configuration", f->logging_configuration, "ASTRA-sim's logger setup; no effect (use -v)")
      ->type_name("F")
      ->group(group);
  run->add_option("--logging-folder", f->logging_folder, "ASTRA-sim's log folder; no effect (logs go to stderr)")
      ->type_name("DIR")
      ->group(group);
  run->add_option("--num-queues-per-dim", f->num_queues_per_dim, "ASTRA-sim's queues per dimension; Orrery models 1")
      ->type_name("N")
      ->group(group);
  run->add_option("--compute-scale", f->compute_scale, "unused by ASTRA-sim; no effect")->type_name("X")->group(group);
  run->add_option("--comm-scale", f->comm_scale, "unused by ASTRA-sim's system layer; no effect")
      ->type_name("X")
      ->group(group);
  run->add_option("--injection-scale", f->injection_scale,
                  "multiplies endpoint-delay, as in ASTRA-sim (truncated to ns)")
      ->type_name("X")
      ->capture_default_str()
      ->group(group);
  run->add_flag("--rendezvous-protocol", f->rendezvous_protocol, "unused by ASTRA-sim's system layer; no effect")
      ->group(group);
}

}  // namespace

void AddRunCommand(Commands* commands, CLI::App* root) {
  auto f = std::make_shared<RunFlags>();
  CLI::App* run = commands->AddLeaf(root, "run", "simulate ASTRA-sim inputs (or an embedded example); report on stdout",
                                    [f] { return Run(*f); });
  f->app = run;
  run->footer(
      "Typical: orrery run --workload-configuration=PREFIX --system-configuration=F.json --network-configuration=F.yml "
      "\n     or: orrery run --example=default");
  for (auto add : {AddRunInputsFlags, AddRunNetworkFlags, AddRunMemoryFlags, AddRunOutputFlags, AddRunControlFlags,
                   AddRunAstraSimFlags}) {
    add(run, f.get());
  }
}

}  // namespace orrery::cli
