// The `orrery` command line: run, trace. Flags are defined here only; the
// libraries take plain option structs.
#include <gflags/gflags.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <unistd.h>

#include "apps/examples.h"
#include "apps/trace_tools.h"
#include "memory/backend.h"
#include "plugins/loader.h"
#include "plugins/remote/remote_backend.h"
#include "extern/astra_config.h"
#include "extern/et_io.h"
#include "network/describe.h"
#include "network/notation.h"
#include "workload/simulation.h"

DEFINE_string(workload_configuration, "", "trace prefix: reads PREFIX.<rank>.et for every NPU");
DEFINE_string(system_configuration, "", "ASTRA-sim system JSON");
DEFINE_string(network_configuration, "", "ASTRA-sim network YAML");
DEFINE_string(remote_memory_configuration, "", "ASTRA-sim remote-memory JSON (optional)");
DEFINE_string(memory_configuration, "", "Orrery memory YAML: backend (pool, astra-sim, or a plugin's) and its settings");
DEFINE_string(comm_group_configuration, "", "communicator groups JSON {\"<id>\": [ranks]} (optional)");
DEFINE_string(network_backend, "analytical", "network backend; 'help' lists them");
DEFINE_string(report_format, "text", "text, json or csv");
DEFINE_int32(iterations, 1, "how many times each NPU runs its graph");
DEFINE_string(remote_endpoint, "", "remote backend: the peer, host:port or unix:/path");
DEFINE_string(remote_model, "analytical", "remote backend: which model to ask the peer for");
DEFINE_int32(remote_timeout_ms, 10000, "remote backend: how long to wait for each answer of the peer");
DEFINE_string(listen, "127.0.0.1:7070", "peer: where to listen, host:port or unix:/path");
DEFINE_int32(connections, 0, "peer: serve this many runs, then exit (0: forever)");
DEFINE_bool(allow_oversubscription, false, "memory over capacity is a warning in the report, not an error");
DEFINE_bool(link_stats, false, "report bytes and busy time per link (congestion-aware backend)");
DEFINE_string(symmetry, "auto", "auto: simulate one representative rank when every rank provably runs the same schedule; off: simulate every rank");
DEFINE_string(example, "", "run an embedded example instead of input files: default, data-parallel");
DEFINE_string(out, "", "output path (trace to-json/from-json/gen)");
DEFINE_int32(npus, 8, "trace gen: number of NPUs");
DEFINE_int32(layers, 24, "trace gen: number of layers");
DEFINE_uint64(allreduce_bytes, 32ull << 20, "trace gen-dp: all-reduce size per layer in bytes");
DEFINE_uint64(fwd_us, 500, "trace gen-dp: forward COMP duration per layer (us)");
DEFINE_uint64(bwd_us, 1000, "trace gen-dp: backward COMP duration per layer (us)");
DEFINE_uint64(activation_bytes, 0, "trace gen-dp: bytes of each forward layer's output kept until its backward");
DEFINE_bool(offload, false, "trace gen-dp: store activations to the remote tier after the forward, reload before the backward");
DEFINE_string(collective, "ALL_REDUCE", "trace gen-coll: the collective (ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER, ALL_TO_ALL, ...)");
DEFINE_uint64(bytes, 1ull << 30, "trace gen-coll: comm_size in bytes; topology describe: all-reduce size");

namespace {

std::vector<std::string> g_plugins;  // --plugin=PATH, repeatable (collected before gflags runs)

int Fail(const orrery::Status& st) {
  std::fprintf(stderr, "orrery: %s\n", st.message().c_str());
  return st.exit_code() == 0 ? 1 : st.exit_code();
}

const char* kUsage =
    "usage: orrery <command> [flags]\n"
    "commands:\n"
    "  run     simulate ASTRA-sim inputs: --workload-configuration=PREFIX --system-configuration=F.json\n"
    "          --network-configuration=F.yml [--remote-memory-configuration=F.json]\n"
    "          [--comm-group-configuration=F.json] [--network-backend=analytical|congestion-aware]\n"
    "          [--report-format=text|json|csv] [--iterations=N] | --example=default\n"
    "  topology generate NOTATION --out=net.yml   (writes net.yml for ASTRA-sim and net.orrery.yml)\n"
    "          describe net.yml|NOTATION [--bytes=B]\n"
    "  peer    --listen=127.0.0.1:7070|unix:/path [--connections=N]   (reference remote-backend peer)\n"
    "  plugins list --plugin=PATH.so [...]   (name, version, ABI and what each plugin registers)\n"
    "          (any command takes --plugin=PATH.so, repeatable, to load network backends)\n"
    "  trace   inspect FILE.et | to-json FILE.et --out=F.jsonl | from-json F.jsonl --out=FILE.et |\n"
    "          gen-dp --npus=N --layers=L --allreduce-bytes=B --out=PREFIX |\n"
    "          gen-coll --npus=N --collective=ALL_GATHER --bytes=B --out=PREFIX\n";

// Loads every --plugin into the registries; prints nothing on success.
orrery::Status LoadPlugins(orrery::BackendRegistry* backends, std::vector<orrery::LoadedPlugin>* loaded,
                           orrery::CollectiveRegistry* algorithms = nullptr, orrery::MemoryRegistry* memories = nullptr) {
  orrery::PluginRegistries regs;
  regs.network = backends;
  regs.collectives = algorithms;
  regs.memory = memories;
  for (const std::string& path : g_plugins) {
    auto p = orrery::LoadPlugin(path, &regs);
    if (!p.ok()) return p.status();
    if (loaded) loaded->push_back(p.value());
  }
  return orrery::Status::Ok();
}

int Plugins(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]) != "list") {
    return Fail(orrery::Status::Invalid("usage: orrery plugins list --plugin=PATH [--plugin=PATH ...]"));
  }
  orrery::BackendRegistry backends = orrery::DefaultBackends();
  orrery::CollectiveRegistry algorithms;
  orrery::MemoryRegistry memories;
  orrery::RegisterBuiltinMemoryBackends(&memories);
  std::vector<orrery::LoadedPlugin> loaded;
  if (auto st = LoadPlugins(&backends, &loaded, &algorithms, &memories); !st.ok()) return Fail(st);
  for (const auto& p : loaded) {
    std::printf("%s %s (ABI %u) from %s\n", p.name.c_str(), p.version.c_str(), p.abi_version, p.path.c_str());
    for (const auto& b : p.network_backends) {
      std::printf("  network backend %s: %s\n", b.c_str(), backends.Find(b)->description.c_str());
    }
    for (const auto& a : p.collective_algorithms) {
      std::printf("  collective algorithm %s: %s\n", a.c_str(), algorithms.Find(a)->description.c_str());
    }
    for (const auto& m : p.memory_backends) {
      std::printf("  memory backend %s: %s\n", m.c_str(), memories.Find(m)->description.c_str());
    }
  }
  if (loaded.empty()) std::printf("no plugins given (use --plugin=PATH)\n");
  return 0;
}

int Peer() {
  auto st = orrery::ServeRemotePeer(FLAGS_listen, FLAGS_connections, [](const std::string& where) {
    std::fprintf(stderr, "orrery peer: serving the analytical and congestion-aware models on %s\n", where.c_str());
  });
  return st.ok() ? 0 : Fail(st);
}

// Optional backends built as plugins (ns3) load on demand from the build tree
// or from <prefix>/lib/orrery/plugins next to the installed binary.
void FindOptionalPlugin(const orrery::BackendRegistry& backends) {
  if ((FLAGS_network_backend != "ns3" && FLAGS_network_backend != "help") || backends.Find("ns3")) return;
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  std::string dir = n > 0 ? std::string(self, static_cast<size_t>(n)) : "";
  dir = dir.substr(0, dir.rfind('/'));
  for (const std::string& candidate : {dir + "/../lib/orrery/plugins/liborrery_ns3.so", dir + "/../plugins/liborrery_ns3.so"}) {
    if (access(candidate.c_str(), R_OK) == 0) {
      g_plugins.push_back(candidate);
      return;
    }
  }
}

int Run() {
  orrery::BackendRegistry backends = orrery::DefaultBackends();
  orrery::RegisterRemoteBackend(&backends);
  FindOptionalPlugin(backends);
  orrery::CollectiveRegistry algorithms;
  orrery::MemoryRegistry memories;
  orrery::RegisterBuiltinMemoryBackends(&memories);
  if (auto st = LoadPlugins(&backends, nullptr, &algorithms, &memories); !st.ok()) return Fail(st);
  if (FLAGS_network_backend == "help") {
    std::printf("network backends:\n%s", backends.Help().c_str());
    return 0;
  }
  if (FLAGS_network_backend == "ns3" && !backends.Find("ns3")) {
    return Fail(orrery::Status::Invalid(
        "--network-backend=ns3: this orrery was built without ns-3; install libns3-dev, libgsl-dev and ns3 "
        "(scripts/setup.sh does) and rebuild"));
  }
  if (FLAGS_network_backend == "help") {
    std::printf("network backends:\n%s", backends.Help().c_str());
    return 0;
  }
  orrery::RunConfig cfg;
  std::string tmpdir;
  if (!FLAGS_example.empty()) {
    char tmpl[] = "/tmp/orrery-example-XXXXXX";
    if (!mkdtemp(tmpl)) return Fail(orrery::Status::Env("cannot create a temporary directory"));
    tmpdir = tmpl;
    if (auto st = orrery::WriteExample(FLAGS_example, tmpdir, &cfg); !st.ok()) return Fail(st);
  } else {
    cfg.workload_prefix = FLAGS_workload_configuration;
    cfg.system_path = FLAGS_system_configuration;
    cfg.network_path = FLAGS_network_configuration;
    cfg.memory_path = FLAGS_remote_memory_configuration;
    cfg.memory_config_path = FLAGS_memory_configuration;
    cfg.comm_group_path = FLAGS_comm_group_configuration;
  }
  cfg.backend = FLAGS_network_backend;
  cfg.iterations = FLAGS_iterations;
  cfg.symmetry = FLAGS_symmetry;
  cfg.link_stats = FLAGS_link_stats;
  cfg.allow_oversubscription = FLAGS_allow_oversubscription;
  cfg.backend_params["remote-endpoint"] = FLAGS_remote_endpoint;
  cfg.backend_params["remote-model"] = FLAGS_remote_model;
  cfg.backend_params["remote-timeout-ms"] = std::to_string(FLAGS_remote_timeout_ms);
  if (FLAGS_report_format != "text" && FLAGS_report_format != "json" && FLAGS_report_format != "csv") {
    return Fail(orrery::Status::Invalid("--report-format = \"" + FLAGS_report_format + "\": valid: text, json, csv"));
  }
  auto report = orrery::RunSimulation(cfg, backends, &algorithms, &memories);
  if (!tmpdir.empty()) std::system(("rm -rf '" + tmpdir + "'").c_str());
  if (!report.ok()) return Fail(report.status());
  if (FLAGS_report_format == "json") {
    std::fputs(orrery::FormatReportJson(report.value()).c_str(), stdout);
  } else if (FLAGS_report_format == "csv") {
    std::fputs(orrery::FormatReportCsv(report.value()).c_str(), stdout);
  } else {
    std::fputs(orrery::FormatReportText(report.value()).c_str(), stdout);
  }
  return 0;
}

int Trace(int argc, char** argv) {
  if (argc < 2) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  const std::string sub = argv[1];
  if (sub == "gen-dp") {
    if (FLAGS_out.empty()) return Fail(orrery::Status::Invalid("trace gen-dp needs --out=PREFIX"));
    orrery::DataParallelSpec spec;
    spec.npus = FLAGS_npus;
    spec.layers = FLAGS_layers;
    spec.allreduce_bytes = FLAGS_allreduce_bytes;
    spec.activation_bytes = FLAGS_activation_bytes;
    spec.fwd_us = FLAGS_fwd_us;
    spec.bwd_us = FLAGS_bwd_us;
    spec.offload = FLAGS_offload;
    if (spec.npus < 1 || spec.layers < 1) return Fail(orrery::Status::Invalid("trace gen-dp: --npus and --layers must be >= 1"));
    if (auto st = orrery::WriteDataParallelTraces(spec, FLAGS_out); !st.ok()) return Fail(st);
    return 0;
  }
  if (sub == "gen-coll") {
    if (FLAGS_out.empty()) return Fail(orrery::Status::Invalid("trace gen-coll needs --out=PREFIX"));
    int type = -1;
    for (int t = 0; t <= 9; ++t) {
      if (FLAGS_collective == orrery::CollectiveName(t)) type = t;
    }
    if (type < 0) {
      return Fail(orrery::Status::Invalid("--collective = \"" + FLAGS_collective +
                                          "\": valid: ALL_REDUCE, REDUCE, ALL_GATHER, GATHER, SCATTER, BROADCAST, "
                                          "ALL_TO_ALL, REDUCE_SCATTER, REDUCE_SCATTER_BLOCK, BARRIER"));
    }
    if (FLAGS_npus < 1) return Fail(orrery::Status::Invalid("trace gen-coll: --npus must be >= 1"));
    if (auto st = orrery::WriteSingleCollectiveTraces(FLAGS_npus, type, FLAGS_bytes, FLAGS_out); !st.ok()) return Fail(st);
    return 0;
  }
  if (argc < 3) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  const std::string file = argv[2];
  if (sub == "inspect") {
    auto r = orrery::InspectTrace(file);
    if (!r.ok()) return Fail(r.status());
    std::fputs(r.value().c_str(), stdout);
    return 0;
  }
  if (sub == "to-json" || sub == "from-json") {
    if (FLAGS_out.empty()) return Fail(orrery::Status::Invalid("trace " + sub + " needs --out=PATH"));
    auto st = sub == "to-json" ? orrery::TraceToJson(file, FLAGS_out) : orrery::TraceFromJson(file, FLAGS_out);
    return st.ok() ? 0 : Fail(st);
  }
  return Fail(orrery::Status::Invalid("unknown trace subcommand '" + sub + "'; valid: inspect, to-json, from-json, gen-dp, gen-coll"));
}

orrery::Result<std::vector<orrery::Dim>> LoadDims(const std::string& what) {
  if (what.find('(') != std::string::npos && access(what.c_str(), R_OK) != 0) return orrery::ParseTopologyNotation(what);
  auto net = orrery::ReadAstraNetworkYaml(what);
  if (!net.ok()) return net.status();
  std::vector<orrery::Dim> dims;
  for (const auto& d : net->dims) {
    orrery::Dim x;
    orrery::BlockFromName(d.block, &x.block);
    x.npus = d.npus;
    x.bandwidth_gbps = d.bandwidth_gbps;
    x.latency_ns = d.latency_ns;
    x.links_per_npu = d.links_per_npu;
    dims.push_back(x);
  }
  return dims;
}

int TopologyCmd(int argc, char** argv) {
  if (argc < 3) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  const std::string sub = argv[1];
  auto dims = LoadDims(argv[2]);
  if (!dims.ok()) return Fail(dims.status());
  if (sub == "describe") {
    std::fputs(orrery::DescribeTopology(dims.value(), FLAGS_bytes).c_str(), stdout);
    return 0;
  }
  if (sub == "generate") {
    if (FLAGS_out.empty()) return Fail(orrery::Status::Invalid("topology generate needs --out=PATH.yml"));
    std::string base = FLAGS_out;
    if (base.size() > 4 && base.substr(base.size() - 4) == ".yml") base = base.substr(0, base.size() - 4);
    const std::string orrery_path = base + ".orrery.yml";
    std::string astra;
    const bool expressible = orrery::WriteAstraSimYaml(dims.value(), &astra);
    auto write = [](const std::string& path, const std::string& text) {
      FILE* f = std::fopen(path.c_str(), "w");
      if (!f) return false;
      std::fputs(text.c_str(), f);
      return std::fclose(f) == 0;
    };
    if (!write(orrery_path, orrery::WriteOrreryYaml(dims.value()))) {
      return Fail(orrery::Status::Env(orrery_path + ": cannot write"));
    }
    if (expressible) {
      if (!write(FLAGS_out, astra)) return Fail(orrery::Status::Env(FLAGS_out + ": cannot write"));
      std::fprintf(stderr, "wrote %s (ASTRA-sim format) and %s (Orrery format)\n", FLAGS_out.c_str(), orrery_path.c_str());
    } else {
      if (!write(FLAGS_out, orrery::WriteOrreryYaml(dims.value()))) {
        return Fail(orrery::Status::Env(FLAGS_out + ": cannot write"));
      }
      std::fprintf(stderr,
                   "wrote %s and %s in Orrery format (RingUni, Mesh and links_per_npu have no ASTRA-sim equivalent)\n",
                   FLAGS_out.c_str(), orrery_path.c_str());
    }
    return 0;
  }
  return Fail(orrery::Status::Invalid("unknown topology subcommand '" + sub + "'; valid: generate, describe"));
}

}  // namespace

int main(int argc, char** argv) {
  gflags::SetUsageMessage(kUsage);
  if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "help") {
    std::fputs(kUsage, stderr);
    return argc < 2 ? 2 : 0;
  }
  const std::string cmd = argv[1];
  // Plugins named in the environment (ORRERY_PLUGINS=a.so:b.so) load first.
  if (const char* env = std::getenv("ORRERY_PLUGINS")) {
    std::string list = env;
    for (size_t start = 0; start <= list.size();) {
      const size_t end = std::min(list.find(':', start), list.size());
      if (end > start) g_plugins.push_back(list.substr(start, end - start));
      start = end + 1;
    }
  }
  // --plugin may be given several times; gflags keeps only the last value of a
  // flag, so plugins are collected (and removed) here.
  {
    int w = 2;
    for (int r = 2; r < argc; ++r) {
      const std::string a = argv[r];
      if (a.rfind("--plugin=", 0) == 0) {
        g_plugins.push_back(a.substr(9));
      } else if (a == "--plugin" && r + 1 < argc) {
        g_plugins.push_back(argv[++r]);
      } else {
        argv[w++] = argv[r];
      }
    }
    argc = w;
  }
  // gflags parses the flags after the command; unknown flags are errors.
  argv[1] = argv[0];
  int sub_argc = argc - 1;
  char** sub_argv = argv + 1;
  gflags::ParseCommandLineFlags(&sub_argc, &sub_argv, true);
  if (cmd == "run") return Run();
  if (cmd == "trace") return Trace(sub_argc, sub_argv);
  if (cmd == "topology") return TopologyCmd(sub_argc, sub_argv);
  if (cmd == "plugins") return Plugins(sub_argc, sub_argv);
  if (cmd == "peer") return Peer();
  std::fprintf(stderr, "orrery: unknown command '%s'\n%s", cmd.c_str(), kUsage);
  return 2;
}
