#include "memory/backend.h"

#include <algorithm>

#include "memory/remote_memory.h"

namespace orrery {

Status MemoryRegistry::Register(const std::string& name, std::string description, MemoryFactory factory) {
  if (entries_.count(name)) return Status::Invalid("memory backend '" + name + "' is already registered");
  entries_[name] = Entry{std::move(description), std::move(factory)};
  return Status::Ok();
}

const MemoryRegistry::Entry* MemoryRegistry::Find(const std::string& name) const {
  auto it = entries_.find(name);
  return it == entries_.end() ? nullptr : &it->second;
}

std::vector<std::string> MemoryRegistry::Names() const {
  std::vector<std::string> v;
  for (const auto& [n, e] : entries_) v.push_back(n);
  return v;
}

std::string MemoryRegistry::Help() const {
  std::string out;
  for (const auto& [name, e] : entries_) out += "  " + name + std::string(20 - std::min<size_t>(19, name.size()), ' ') + e.description + "\n";
  return out;
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

std::string Get(const MemoryContext& c, const char* key) {
  if (!c.params) return "";
  auto it = c.params->find(key);
  return it == c.params->end() ? "" : it->second;
}

}  // namespace

Result<std::unique_ptr<MemoryBackend>> MakePoolMemory(const MemoryContext& ctx);

void RegisterBuiltinMemoryBackends(MemoryRegistry* registry) {
  (void)registry->Register(
      "astra-sim", "ASTRA-sim's remote memory: none, per-NPU, per-node or one pool; FIFO servers",
      [](const MemoryContext& ctx) -> Result<std::unique_ptr<MemoryBackend>> {
        RemoteMemoryOptions o;
        const std::string type = Get(ctx, "memory-type");
        if (type == "PER_NPU_MEMORY_EXPANSION") o.mode = RemoteMemoryMode::kPerNpu;
        else if (type == "PER_NODE_MEMORY_EXPANSION") o.mode = RemoteMemoryMode::kPerNode;
        else if (type == "MEMORY_POOL") o.mode = RemoteMemoryMode::kPool;
        else o.mode = RemoteMemoryMode::kNone;
        if (o.mode != RemoteMemoryMode::kNone) {
          o.latency_ns = std::stoull(Get(ctx, "remote-mem-latency"));
          o.bytes_per_ns = std::stod(Get(ctx, "remote-mem-bw"));
          const std::string per = Get(ctx, "num-npus-per-node");
          o.npus_per_node = per.empty() ? 1 : std::stoi(per);
        }
        return std::unique_ptr<MemoryBackend>(new AstraSimMemory(ctx, o));
      });
  (void)registry->Register("pool", "one shared pool: several FIFO ports, or bandwidth shared fairly (sharing: fair)",
                           MakePoolMemory);
}

}  // namespace orrery
