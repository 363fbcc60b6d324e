#include "tests/fuzz/fuzz_util.h"

#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "extern/et_io.h"

namespace orrery::fuzz {
namespace {

void Fail(const char* what) {
  std::fprintf(stderr, "fuzz_util: %s\n", what);
  std::abort();
}

void RemoveScratch();

std::string MakeScratch() {
  // Outputs are synced to disk (core/output_file.h), which on a disk costs
  // most of an input's time: the scratch folder is in memory (/dev/shm)
  // unless TMPDIR names another place.
  std::string base = std::filesystem::temp_directory_path().string();
  if (std::getenv("TMPDIR") == nullptr && access("/dev/shm", W_OK) == 0) base = "/dev/shm";
  std::string tmpl = base + "/orrery-fuzz-XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr) Fail("cannot create a scratch folder");
  return tmpl;
}

void RemoveScratch() {
  std::error_code ec;
  std::filesystem::remove_all(Scratch(), ec);
}

void AddUint(ChakraProtoMsg::Node* n, const char* name, uint64_t v) {
  auto* a = n->add_attr();
  a->set_name(name);
  a->set_uint64_val(v);
}

std::string WriteText(const std::string& name, const std::string& text) {
  const std::string path = Scratch() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

std::string MakeTraces() {
  const std::string prefix = Scratch() + "/base";
  for (int r = 0; r < kRanks; ++r) {
    EtWriter w;
    if (!w.Open(prefix + "." + std::to_string(r) + ".et", ChakraProtoMsg::GlobalMetadata()).ok()) Fail("open trace");
    ChakraProtoMsg::Node comp;
    comp.set_id(0);
    comp.set_type(ChakraProtoMsg::COMP_NODE);
    comp.set_duration_micros(1);
    ChakraProtoMsg::Node load;
    load.set_id(1);
    load.set_type(ChakraProtoMsg::MEM_LOAD_NODE);
    load.add_data_deps(0);
    AddUint(&load, "tensor_size", 1024);
    ChakraProtoMsg::Node coll;
    coll.set_id(2);
    coll.set_type(ChakraProtoMsg::COMM_COLL_NODE);
    coll.add_data_deps(1);
    AddUint(&coll, "comm_type", 0);
    AddUint(&coll, "comm_size", 4096);
    auto* pg = coll.add_attr();
    pg->set_name("pg_name");
    pg->set_string_val("0");
    ChakraProtoMsg::Node send;
    send.set_id(3);
    send.set_type(ChakraProtoMsg::COMM_SEND_NODE);
    send.add_data_deps(2);
    AddUint(&send, "comm_dst", (r + 1) % kRanks);
    AddUint(&send, "comm_size", 64);
    ChakraProtoMsg::Node recv;
    recv.set_id(4);
    recv.set_type(ChakraProtoMsg::COMM_RECV_NODE);
    recv.add_data_deps(2);
    AddUint(&recv, "comm_src", (r + kRanks - 1) % kRanks);
    AddUint(&recv, "comm_size", 64);
    for (const auto* n : {&comp, &load, &coll, &send, &recv}) {
      if (!w.Write(*n).ok()) Fail("write trace");
    }
    if (!w.Close().ok()) Fail("close trace");
  }
  return prefix;
}

}  // namespace

const std::string& Scratch() {
  static const std::string dir = [] {
    std::string d = MakeScratch();
    return d;
  }();
  static const bool registered = (std::atexit(RemoveScratch), true);
  (void)registered;
  return dir;
}

std::string WriteInput(const std::string& name, const uint8_t* data, size_t size) {
  const std::string path = Scratch() + "/" + name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!out) Fail("cannot write the fuzz input");
  return path;
}

std::string FreshDir(const std::string& name) {
  const std::string dir = Scratch() + "/" + name;
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  std::filesystem::create_directories(dir, ec);
  if (ec) Fail("cannot make a fresh folder");
  return dir;
}

Bundle SplitBundle(const uint8_t* data, size_t size, std::string* head) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  Bundle files;
  std::string* into = head;
  if (head) head->clear();
  for (size_t pos = 0; pos < text.size();) {
    size_t nl = text.find('\n', pos);
    nl = nl == std::string::npos ? text.size() : nl + 1;
    const std::string line = text.substr(pos, nl - pos);
    pos = nl;
    if (line.rfind("@@ ", 0) == 0 && files.size() < 16) {
      std::string name;
      for (char c : line.substr(3)) {
        if (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-') name += c;
      }
      if (name.empty() || name == "." || name == "..") name = "unnamed";
      files.emplace_back(name, "");
      into = &files.back().second;
    } else if (into) {
      *into += line;
    }
  }
  return files;
}

void WriteBundle(const Bundle& files, const std::string& dir) {
  for (const auto& [name, text] : files) {
    std::ofstream out(dir + "/" + name, std::ios::binary | std::ios::trunc);
    out << text;
  }
}

void Note(const std::string& what, const Status& status) {
  static const bool verbose = std::getenv("ORRERY_FUZZ_VERBOSE") != nullptr;
  if (!verbose) return;
  const std::string text = status.ok() ? std::string("ok") : status.message().substr(0, 300);
  std::fprintf(stderr, "  %s: %s\n", what.c_str(), text.c_str());
}

const std::string& BaseNetwork() {
  static const std::string p = WriteText("base_network.yml", "topology: [ Ring ]\nnpus_count: [ " +
                                                                 std::to_string(kRanks) +
                                                                 " ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n");
  return p;
}

const std::string& BaseSystem() {
  static const std::string p =
      WriteText("base_system.json",
                R"({"scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1,
"preferred-dataset-splits": 2, "all-reduce-implementation": ["ring"], "all-gather-implementation": ["ring"],
"reduce-scatter-implementation": ["ring"], "all-to-all-implementation": ["ring"],
"collective-optimization": "localBWAware", "local-mem-bw": 1600})");
  return p;
}

const std::string& BaseMemory() {
  static const std::string p = WriteText("base_memory.yml", "backend: pool\nlatency_ns: 500\nbandwidth_gbps: 50\n");
  return p;
}

const std::string& BaseTraces() {
  static const std::string p = MakeTraces();
  return p;
}

const std::string& BaseGroups() {
  static const std::string p = WriteText("base_groups.json", "{\"0\": [0, 1, 2, 3]}\n");
  return p;
}

Result<RunReport> RunSmall(RunConfig c, bool own_groups) {
  // The fixed traces' all-reduce names pg_name "0": a group must exist (it never runs over all NPUs unnamed).
  if (c.files.comm_groups.empty() && !own_groups) c.files.comm_groups = BaseGroups();
  if (c.files.workload_prefix.empty()) c.files.workload_prefix = BaseTraces();
  if (c.files.network.empty()) c.files.network = BaseNetwork();
  if (c.files.system.empty()) c.files.system = BaseSystem();
  // The fixed traces load from remote memory: without a memory of its own the run gets the fixed pool.
  if (c.files.memory_config.empty() && c.files.remote_memory.empty()) c.files.memory_config = BaseMemory();
  static const BackendRegistry backends = DefaultBackends();
  return RunSimulation(c, backends);
}

}  // namespace orrery::fuzz
