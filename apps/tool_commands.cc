// `orrery trace ...`, `orrery topology ...`, `orrery plugins list`, `orrery peer`.

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <memory>

#include "apps/commands.h"
#include "core/output_file.h"
#include "core/units.h"
#include "extern/astra_config.h"
#include "extern/et_io.h"
#include "gen/generate.h"
#include "gen/toy_traces.h"
#include "network/describe.h"
#include "network/notation.h"
#include "plugins/remote/remote_backend.h"
#include "run/run.h"
#include "run/spec.h"
#include "workload/trace_tools.h"

namespace orrery::cli {

namespace {

constexpr int64_t kMaxNpus = int64_t{1} << 26;
constexpr uint64_t kMaxBytes = std::numeric_limits<int64_t>::max();  // comm_size is an int64 attribute

// After a generator wrote ranks 0..npus-1: higher ranks from an earlier run go.
Status RemoveStale(const std::string& prefix, int npus) {
  auto removed = RemoveStaleRankTraces(prefix, npus);
  if (!removed.ok()) return removed.status();
  if (!removed->empty()) {
    std::fprintf(stderr, "orrery: note: removed %zu stale trace file(s) of an earlier run with more ranks: %s%s\n",
                 removed->size(), removed->front().c_str(),
                 removed->size() > 1 ? (" .. " + removed->back()).c_str() : "");
  }
  return Status::Ok();
}

struct GenFlags {
  std::string out, npus = "8", layers = "24", allreduce_bytes = std::to_string(32 * kBytesPerMiB), fwd_us = "500",
                   bwd_us = "1000", activation_bytes = "0", straggler = "-1", straggler_percent = "",
                   collective = "ALL_REDUCE", bytes = std::to_string(kBytesPerGiB);
  bool offload = false;
};

int GenDp(const GenFlags& f) {
  if (f.out.empty()) return Fail(Status::Invalid("trace gen-dp needs --out=PREFIX"));
  DataParallelSpec spec;
  auto npus = IntFlag("--npus", f.npus, 1, kMaxNpus);
  auto layers = IntFlag("--layers", f.layers, 1, 1000000);
  auto ar = UintFlag("--allreduce-bytes", f.allreduce_bytes, 0, kMaxBytes);
  auto fwd = UintFlag("--fwd-us", f.fwd_us, 0, uint64_t{1} << 40);
  auto bwd = UintFlag("--bwd-us", f.bwd_us, 0, uint64_t{1} << 40);
  auto act = UintFlag("--activation-bytes", f.activation_bytes, 0, kMaxBytes);
  auto slow = IntFlag("--straggler", f.straggler, -1, kMaxNpus - 1);
  // --straggler alone: 20 % slower (the straggler); --straggler-percent alone is refused below.
  const std::string pct_text = !f.straggler_percent.empty() ? f.straggler_percent : f.straggler != "-1" ? "20" : "0";
  auto pct = UintFlag("--straggler-percent", pct_text, 0, 1000);
  for (const Status* st : {&npus.status(), &layers.status(), &ar.status(), &fwd.status(), &bwd.status(), &act.status(),
                           &slow.status(), &pct.status()}) {
    if (!st->ok()) return Fail(*st);
  }
  spec.npus = static_cast<int>(npus.value());
  spec.layers = static_cast<int>(layers.value());
  spec.allreduce_bytes = ar.value();
  spec.fwd_us = fwd.value();
  spec.bwd_us = bwd.value();
  spec.activation_bytes = act.value();
  spec.offload = f.offload;
  spec.slow_rank = static_cast<int>(slow.value());
  spec.slow_percent = pct.value();
  if (auto st = WriteDataParallelTraces(spec, f.out); !st.ok()) return Fail(st);
  if (auto st = RemoveStale(f.out, spec.npus); !st.ok()) return Fail(st);
  return 0;
}

int GenColl(const GenFlags& f) {
  if (f.out.empty()) return Fail(Status::Invalid("trace gen-coll needs --out=PREFIX"));
  std::vector<std::string> names;
  for (int t = 0; t < kNumCollectiveKinds; ++t) names.push_back(CollectiveName(static_cast<CollectiveKind>(t)));
  if (auto st = EnumFlag("--collective", f.collective, names); !st.ok()) return Fail(st);
  uint64_t type = 0;
  while (names[type] != f.collective) ++type;
  auto npus = IntFlag("--npus", f.npus, 1, kMaxNpus);
  if (!npus.ok()) return Fail(npus.status());
  auto bytes = UintFlag("--bytes", f.bytes, 0, kMaxBytes);
  if (!bytes.ok()) return Fail(bytes.status());
  const int n = static_cast<int>(npus.value());
  if (auto st = WriteSingleCollectiveTraces(n, static_cast<CollectiveKind>(type), bytes.value(), f.out); !st.ok())
    return Fail(st);
  if (auto st = RemoveStale(f.out, n); !st.ok()) return Fail(st);
  return 0;
}

int Generate(const std::string& network, const std::string& out) {
  if (out.empty()) return Fail(Status::Invalid("topology generate needs --out=PATH.yml"));
  auto dims = ReadNetworkDims(network);
  if (!dims.ok()) return Fail(dims.status());
  std::string base = out;
  if (base.size() > 4 && base.substr(base.size() - 4) == ".yml") base = base.substr(0, base.size() - 4);
  const std::string orrery_path = base + ".orrery.yml";
  if (Status st = CheckOutputsAreNotInputs({{"--out", out}, {"--out's Orrery YAML", orrery_path}},
                                           {{"NETWORK", network}});
      !st.ok()) {
    return Fail(st);
  }
  std::string astra;
  const bool expressible = WriteAstraSimYaml(dims.value(), &astra);
  if (Status st = WriteFileWhole(orrery_path, WriteOrreryYaml(dims.value())); !st.ok()) return Fail(st);
  if (Status st = WriteFileWhole(out, expressible ? astra : WriteOrreryYaml(dims.value()), "--out"); !st.ok()) {
    return Fail(st);
  }
  if (expressible) {
    std::fprintf(stderr, "wrote %s (ASTRA-sim format) and %s (Orrery format)\n", out.c_str(), orrery_path.c_str());
  } else {
    std::fprintf(stderr,
                 "wrote %s and %s in Orrery format (RingUni, Mesh and links_per_npu have no ASTRA-sim equivalent)\n",
                 out.c_str(), orrery_path.c_str());
  }
  return 0;
}

int Describe(const std::string& network, const std::string& bytes_text) {
  auto bytes = UintFlag("--bytes", bytes_text, 1, kMaxBytes);
  if (!bytes.ok()) return Fail(bytes.status());
  auto dims = ReadNetworkDims(network);
  if (!dims.ok()) return Fail(dims.status());
  std::fputs(DescribeTopology(dims.value(), bytes.value()).c_str(), stdout);
  return 0;
}

int PluginsList(const std::vector<std::string>& flags) {
  auto set = BuildRegistrySet(flags);
  if (!set.ok()) return Fail(set.status());
  const RegistrySet& r = *set.value();
  for (const auto& p : r.loaded) {
    std::printf("%s %s (ABI %u) from %s\n", p.name.c_str(), p.version.c_str(), p.abi_version, p.path.c_str());
    for (const auto& b : p.network_backends) {
      std::printf("  network backend %s: %s\n", b.c_str(), r.backends.Find(b)->description.c_str());
    }
    for (const auto& a : p.collective_algorithms) {
      std::printf("  collective algorithm %s: %s\n", a.c_str(), r.algorithms.Find(a)->description.c_str());
    }
    for (const auto& m : p.memory_backends) {
      std::printf("  memory backend %s: %s\n", m.c_str(), r.memories.Find(m)->description.c_str());
    }
  }
  if (r.loaded.empty()) std::printf("no plugins given (use --plugin=PATH)\n");
  return 0;
}

int Peer(const std::string& listen, const std::string& connections_text) {
  if (auto st = AddressFlag("--listen", listen, 0); !st.ok()) return Fail(st);  // port 0: any free port
  auto connections = IntFlag("--connections", connections_text, 0, std::numeric_limits<int>::max());
  if (!connections.ok()) return Fail(connections.status());
  auto st = ServeRemotePeer(listen, static_cast<int>(connections.value()), [](const std::string& where) {
    std::fprintf(stderr, "orrery peer: serving the analytical and congestion-aware models on %s\n", where.c_str());
  });
  return st.ok() ? 0 : Fail(st);
}

// --ctrl-deps and --host-collectives of the trace tools, as `orrery run` takes them.
struct TraceReadFlags {
  std::string ctrl_deps = "strict", host_collectives = "refuse";
  void Add(CLI::App* app) {
    app->add_option("--ctrl-deps", ctrl_deps, "strict or repair: as orrery run --ctrl-deps")
        ->type_name("MODE")
        ->capture_default_str();
    app->add_option("--host-collectives", host_collectives, "refuse or replay: as orrery run --host-collectives")
        ->type_name("MODE")
        ->capture_default_str();
  }
  Result<TraceReadOptions> Options() const {
    ORRERY_RETURN_IF_ERROR(EnumFlag("--ctrl-deps", ctrl_deps, {"strict", "repair"}));
    ORRERY_RETURN_IF_ERROR(EnumFlag("--host-collectives", host_collectives, {"refuse", "replay"}));
    return TraceReadOptions{ctrl_deps == "repair", host_collectives == "replay"};
  }
};

}  // namespace

namespace {

// trace inspect, check, to-json, from-json: reading and converting traces.
void AddTraceReadCommands(Commands* commands, CLI::App* trace) {
  auto file = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  auto read = std::make_shared<TraceReadFlags>();
  CLI::App* inspect = commands->AddLeaf(
      trace, "inspect", "node counts by type, GPU and CPU compute, collectives, process groups, dependency depth",
      [file, read] {
        const Result<TraceReadOptions> options = read->Options();
        if (!options.ok()) return Fail(options.status());
        auto r = InspectTrace(*file, options.value());
        if (!r.ok()) return Fail(r.status());
        std::fputs(r.value().c_str(), stdout);
        return 0;
      });
  inspect->add_option("FILE", *file, "the .et trace")->required();
  read->Add(inspect);
  auto limit = std::make_shared<std::string>("100");
  CLI::App* check = commands->AddLeaf(trace, "check",
                                      "every problem of the traces PREFIX.<rank>.et (up to --limit), as run reads them",
                                      [file, read, limit] {
                                        const Result<TraceReadOptions> options = read->Options();
                                        if (!options.ok()) return Fail(options.status());
                                        const Result<int64_t> n = IntFlag("--limit", *limit, 1, 1000000);
                                        if (!n.ok()) return Fail(n.status());
                                        auto r = CheckTraces(*file, static_cast<size_t>(n.value()), options.value());
                                        if (!r.ok()) return Fail(r.status());
                                        std::fputs(r->text.c_str(), stdout);
                                        return r->problems ? 2 : 0;
                                      });
  check->add_option("PREFIX", *file, "the traces' prefix (or one of its files, PREFIX.<rank>.et)")->required();
  check->add_option("--limit", *limit, "problems listed at most (all are counted)")
      ->type_name("N")
      ->capture_default_str();
  read->Add(check);
  CLI::App* to_json = commands->AddLeaf(trace, "to-json",
                                        "one JSON object per line: the metadata, then each node (stdout by default)",
                                        [file, out] {
                                          auto st = TraceToJson(*file, *out);
                                          return st.ok() ? 0 : Fail(st);
                                        });
  to_json->add_option("FILE", *file, "the .et trace")->required();
  to_json->add_option("--out", *out, "the JSON-lines file to write (default: stdout)")->type_name("F.jsonl");
  CLI::App* from_json = commands->AddLeaf(trace, "from-json", "the inverse of to-json (byte-exact round trip)",
                                          [file, out] {
                                            if (out->empty())
                                              return Fail(Status::Invalid("trace from-json needs --out=PATH"));
                                            auto st = TraceFromJson(*file, *out);
                                            return st.ok() ? 0 : Fail(st);
                                          });
  from_json->add_option("FILE", *file, "the JSON-lines file")->required();
  from_json->add_option("--out", *out, "the .et trace to write")->type_name("F.et");
}

// trace gen-dp, gen-coll: synthetic traces.
void AddTraceGenCommands(Commands* commands, CLI::App* trace) {
  auto g = std::make_shared<GenFlags>();
  CLI::App* dp = commands->AddLeaf(trace, "gen-dp", "write a data-parallel training loop, PREFIX.<rank>.et per NPU",
                                   [g] { return GenDp(*g); });
  dp->add_option("--out", g->out, "trace prefix to write (higher-rank files of an earlier run are removed)")
      ->type_name("PREFIX");
  dp->add_option("--npus", g->npus, "number of NPUs (ranks)")->type_name("N")->capture_default_str();
  dp->add_option("--layers", g->layers, "number of layers")->type_name("L")->capture_default_str();
  dp->add_option("--allreduce-bytes", g->allreduce_bytes, "all-reduce size per layer in bytes")
      ->type_name("B")
      ->capture_default_str();
  dp->add_option("--fwd-us", g->fwd_us, "forward compute per layer (us)")->type_name("US")->capture_default_str();
  dp->add_option("--bwd-us", g->bwd_us, "backward compute per layer (us)")->type_name("US")->capture_default_str();
  dp->add_option("--activation-bytes", g->activation_bytes, "each forward layer's output kept until its backward")
      ->type_name("B")
      ->capture_default_str();
  dp->add_flag("--offload", g->offload,
               "store activations to remote memory after the forward, reload before the backward");
  dp->add_option("--straggler", g->straggler, "one slow rank: its forward and backward compute take longer (-1: none)")
      ->type_name("RANK")
      ->capture_default_str();
  dp->add_option("--straggler-percent", g->straggler_percent, "how much longer the straggler computes (default 20)")
      ->type_name("P");
  CLI::App* coll = commands->AddLeaf(trace, "gen-coll", "write one collective per rank (microbenchmarks)",
                                     [g] { return GenColl(*g); });
  coll->add_option("--out", g->out, "trace prefix to write (higher-rank files of an earlier run are removed)")
      ->type_name("PREFIX");
  coll->add_option("--npus", g->npus, "number of NPUs (ranks)")->type_name("N")->capture_default_str();
  coll->add_option("--collective", g->collective, "ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER, ALL_TO_ALL, BROADCAST, ...")
      ->type_name("TYPE")
      ->capture_default_str();
  coll->add_option("--bytes", g->bytes, "comm_size in bytes")->type_name("B")->capture_default_str();
}

}  // namespace

void AddTraceCommands(Commands* commands, CLI::App* root) {
  CLI::App* trace = commands->AddGroup(root, "trace", "inspect, convert and generate Chakra traces");
  AddTraceReadCommands(commands, trace);
  AddTraceGenCommands(commands, trace);
}

void AddTopologyCommands(Commands* commands, CLI::App* root) {
  CLI::App* topo = commands->AddGroup(root, "topology", "generate and describe networks");
  auto network = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  auto bytes = std::make_shared<std::string>(std::to_string(kBytesPerGiB));
  CLI::App* gen = commands->AddLeaf(topo, "generate",
                                    "write net.yml (ASTRA-sim format when expressible) and net.orrery.yml",
                                    [network, out] { return Generate(*network, *out); });
  gen->add_option("NETWORK", *network, "topology notation, e.g. \"Ring(8,50GB/s,500ns)_Switch(4,25GB/s,1us)\"")
      ->required();
  gen->add_option("--out", *out, "the network YAML to write")->type_name("PATH.yml");
  CLI::App* desc = commands->AddLeaf(topo, "describe", "NPUs, links, switches, bisection and ideal all-reduce time",
                                     [network, bytes] { return Describe(*network, *bytes); });
  desc->add_option("NETWORK", *network, "a network YAML or a topology notation")->required();
  desc->add_option("--bytes", *bytes, "all-reduce size for the ideal time")->type_name("B")->capture_default_str();
}

void AddPluginsCommands(Commands* commands, CLI::App* root) {
  CLI::App* plugins = commands->AddGroup(root, "plugins", "plugins: list what they register");
  auto paths = std::make_shared<std::vector<std::string>>();
  CLI::App* list = commands->AddLeaf(plugins, "list", "name, version, ABI and what each plugin registers",
                                     [paths] { return PluginsList(*paths); });
  list->add_option("--plugin", *paths, "a plugin shared library (repeatable; ORRERY_PLUGINS=a.so:b.so too)")
      ->type_name("PATH.so")
      ->allow_extra_args(false);
}

void AddPeerCommand(Commands* commands, CLI::App* root) {
  auto listen = std::make_shared<std::string>("127.0.0.1:7070");
  auto connections = std::make_shared<std::string>("0");
  CLI::App* peer = commands->AddLeaf(root, "peer", "the reference remote-backend peer (serves the built-in models)",
                                     [listen, connections] { return Peer(*listen, *connections); });
  peer->add_option("--listen", *listen, "where to listen: HOST:PORT or unix:/path")
      ->type_name("ADDR")
      ->capture_default_str();
  peer->add_option("--connections", *connections, "serve this many runs, then exit (0: forever)")
      ->type_name("N")
      ->capture_default_str();
}

void AddGenCommand(Commands* commands, CLI::App* root) {
  commands->AddPassThrough(root, "gen", "generate per-rank workloads from a model and a parallelism strategy",
                           [](const std::vector<std::string>& args) {
                             return RunGenCommand(args, std::cout, std::cerr);
                           });
}

}  // namespace orrery::cli
