#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "extern/chakra.pb.h"
#include "run/run.h"

namespace orrery::testing {

// A fresh temporary directory, removed at destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }
  void Write(const std::string& name, const std::string& text) const;

 private:
  std::string path_;
};

// The whole file's bytes ("" when it cannot be read).
std::string ReadFileText(const std::string& path);

std::string NetworkYaml(const std::string& block, int npus, double bw, double lat);
std::string SystemJson(const std::string& algo, int splits, int endpoint_delay, double local_mem_bw,
                       int active_chunks = 1, const std::string& extra = "");

// Node builders for test traces.
ChakraProtoMsg::Node MakeNode(uint64_t id, ChakraProtoMsg::NodeType type);
void SetAttr(ChakraProtoMsg::Node* n, const char* name, uint64_t value);
void SetAttr(ChakraProtoMsg::Node* n, const char* name, const std::string& value);
void SetAttr(ChakraProtoMsg::Node* n, const char* name, const std::vector<bool>& value);
// A collective node: comm_type and comm_size.
ChakraProtoMsg::Node CollNode(uint64_t id, int comm_type, uint64_t bytes);
// Writes dir/<prefix>.<rank>.et for every rank with the nodes nodes_of(rank) returns.
void WriteTraces(const TempDir& dir, int npus, const std::function<std::vector<ChakraProtoMsg::Node>(int)>& nodes_of,
                 const std::string& prefix = "trace");

// One point-to-point message: a COMM_SEND on `src` and a COMM_RECV on `dst`.
struct P2PMsg {
  int src, dst;
  uint64_t bytes;
  uint64_t tag = 0;
};
// Writes dir/trace.<rank>.et for `npus` ranks with these messages (in order; all independent).
void WriteP2PTraces(const TempDir& dir, int npus, const std::vector<P2PMsg>& msgs);

// Runs a simulation over files in `dir`: trace prefix dir/trace, network.yml, system.json.
Result<RunReport> RunIn(const TempDir& dir, const std::string& backend = "analytical",
                        const std::string& symmetry = "auto");
// The same with the communicator groups of dir/groups.json.
Result<RunReport> RunInWithGroups(const TempDir& dir);
Tick MaxFinished(const RunReport& r);
// Every rank's collectives, each with its own rank (ForEachRankCollective), in
// the order of --collectives=FILE.csv: small runs only.
std::vector<CollectiveReport> EveryRankCollectives(const RunReport& r);
// --collectives=FILE.csv's text (WriteCollectivesCsv into a string).
std::string CollectivesCsv(const RunReport& r);
// The report without what produced it (RunReport::config_hash, config_json):
// for comparing runs of different inputs that must simulate the same.
inline RunReport WithoutConfig(RunReport r) {
  r.config_hash.clear();
  r.config_json.clear();
  return r;
}

// Runs the orrery binary; returns exit code and fills stderr text.
int RunCli(const std::string& args, std::string* err, const std::string& env = "");
// The same, keeping stdout in `out`.
int RunCliCapture(const std::string& args, std::string* out, std::string* err, const std::string& env = "");

}  // namespace orrery::testing
