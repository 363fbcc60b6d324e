#include "memory/backend.h"

#include <algorithm>

#include "core/limits.h"
#include "core/parse.h"
#include "extern/json_util.h"
#include "memory/remote_memory.h"

namespace orrery {

Status MemoryRegistry::Register(const std::string& name, std::string description, MemoryFactory factory) {
  return entries_.Add(name, Entry{std::move(description), std::move(factory)});
}

const MemoryRegistry::Entry* MemoryRegistry::Find(const std::string& name) const { return entries_.Find(name); }

std::vector<std::string> MemoryRegistry::Names() const { return entries_.Names(); }

std::string MemoryRegistry::Help() const { return entries_.Help(); }

std::string MemoryRegistry::Unknown(const std::string& name) const { return entries_.Unknown(name); }

Where MemoryContext::At(const std::string& key) const {
  int line = 0;
  if (lines) {
    auto it = lines->find(key);
    if (it != lines->end()) line = it->second;
  }
  return Where{source, line, key};
}

std::string MemoryContext::Get(const std::string& key) const {
  if (!params) return "";
  auto it = params->find(key);
  return it == params->end() ? "" : it->second;
}

Status CheckMemoryKeys(const MemoryContext& ctx, const std::vector<std::string>& valid, const std::string& backend) {
  if (!ctx.params) return Status::Ok();
  for (const auto& [key, value] : *ctx.params) {
    if (std::find(valid.begin(), valid.end(), key) == valid.end()) {
      const Where at = ctx.At(key);
      std::string msg = UnknownKeyMessage(key, valid);
      msg.insert(("unknown key '" + key + "'").size(), " for the " + backend + " backend");
      return Status::Invalid(Where{at.file, at.line, ""}.Describe() + ": " + msg);
    }
  }
  return Status::Ok();
}

namespace {

// ASTRA-sim's remote memory as a backend: FIFO servers, closed form.
class AstraSimMemory : public MemoryBackend {
 public:
  AstraSimMemory(const MemoryContext& ctx, RemoteMemoryOptions o) : ctx_(ctx), model_(o, ctx.npus) {}
  bool enabled() const override { return model_.enabled(); }
  void Access(int npu, MemOp, uint64_t bytes, uint64_t token) override {
    const Tick now = ctx_.queue->Now();
    const Tick done = model_.Access(npu, bytes, now);
    stats_.accesses++;
    stats_.bytes += bytes;
    stats_.wait_ns += done - now - model_.ServiceTime(bytes);
    ctx_.queue->ScheduleAt(done, ctx_.sink, ctx_.done_kind, token);
  }
  MemoryStats stats() const override { return stats_; }

 private:
  MemoryContext ctx_;
  RemoteMemory model_;
  MemoryStats stats_;
};

// ASTRA-sim's remote-memory settings, from its JSON (already checked there) or
// from the memory YAML with `backend: astra-sim`.
Result<RemoteMemoryOptions> AstraSimOptions(const MemoryContext& ctx) {
  ORRERY_RETURN_IF_ERROR(CheckMemoryKeys(ctx,
                                         {"backend", "memory-type", "remote-mem-latency", "remote-mem-bw", "num-nodes",
                                          "num-npus-per-node"},
                                         "astra-sim"));
  RemoteMemoryOptions o;
  const std::string types = "NO_MEMORY_EXPANSION, PER_NPU_MEMORY_EXPANSION, PER_NODE_MEMORY_EXPANSION, MEMORY_POOL";
  const std::string type = ctx.Get("memory-type");
  // No memory-type: no remote tier (capacity settings alone are a valid configuration).
  if (type.empty() || type == "NO_MEMORY_EXPANSION") return o;
  if (type == "PER_NPU_MEMORY_EXPANSION") o.mode = RemoteMemoryKind::kPerNpu;
  else if (type == "PER_NODE_MEMORY_EXPANSION") o.mode = RemoteMemoryKind::kPerNode;
  else if (type == "MEMORY_POOL") o.mode = RemoteMemoryKind::kPool;
  else return ValueError(ctx.At("memory-type"), "\"" + type + "\"", "unknown memory type", types);
  auto need = [&](const char* key, const std::string& allowed) -> Result<std::string> {
    const std::string v = ctx.Get(key);
    if (v.empty()) return ValueError(ctx.At(key), "\"\"", "missing (memory-type " + type + " needs it)", allowed);
    return v;
  };
  ORRERY_PARSE_OR_RETURN(const std::string lat, need("remote-mem-latency", DescribeUintRange(0, kMaxLatencyNs)));
  ORRERY_PARSE_OR_RETURN(o.latency_ns, ParseUint(lat, ctx.At("remote-mem-latency"), 0, kMaxLatencyNs));
  ORRERY_PARSE_OR_RETURN(const std::string bw, need("remote-mem-bw", DescribeRange(kBandwidthGBps)));
  ORRERY_PARSE_OR_RETURN(o.bytes_per_ns, ParseDouble(bw, ctx.At("remote-mem-bw"), kBandwidthGBps));
  const int64_t npus = std::max(ctx.npus, 1);
  int64_t per = 1;
  if (!ctx.Get("num-npus-per-node").empty()) {
    ORRERY_PARSE_OR_RETURN(per, ParseInt(ctx.Get("num-npus-per-node"), ctx.At("num-npus-per-node"), 1, npus));
  }
  if (!ctx.Get("num-nodes").empty()) {
    ORRERY_PARSE_OR_RETURN(const int64_t nodes, ParseInt(ctx.Get("num-nodes"), ctx.At("num-nodes"), 1, npus));
    int64_t total = 0;
    if (!MulWithin(nodes, per, kMaxNpus, &total) || total != npus) {
      return ValueError(ctx.At("num-nodes"), std::to_string(nodes),
                        "num-nodes x num-npus-per-node (" + std::to_string(per) + ") is not the network's " +
                            std::to_string(npus) + " NPUs",
                        "num-nodes = " + std::to_string(npus / per) +
                            " when num-npus-per-node = " + std::to_string(per) + " divides " + std::to_string(npus));
    }
  }
  o.npus_per_node = static_cast<int>(per);
  return o;
}

}  // namespace

Result<std::unique_ptr<MemoryBackend>> MakePoolMemory(const MemoryContext& ctx);

void RegisterBuiltinMemoryBackends(MemoryRegistry* registry) {
  (void)registry->Register("astra-sim", "ASTRA-sim's remote memory: none, per-NPU, per-node or one pool; FIFO servers",
                           [](const MemoryContext& ctx) -> Result<std::unique_ptr<MemoryBackend>> {
                             ORRERY_PARSE_OR_RETURN(const RemoteMemoryOptions o, AstraSimOptions(ctx));
                             return std::unique_ptr<MemoryBackend>(new AstraSimMemory(ctx, o));
                           });
  (void)registry->Register("pool", "one shared pool: several FIFO ports, or bandwidth shared fairly (sharing: fair)",
                           MakePoolMemory);
}

}  // namespace orrery
