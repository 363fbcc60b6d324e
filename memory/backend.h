// The memory backend interface that built-ins and plugins implement: an
// access of `bytes` by an NPU completes after a time the backend models
// (contention included); the backend then calls
// sink->HandleEvent(done_kind, token) at that time.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/event_queue.h"
#include "core/registry.h"
#include "core/status.h"

namespace orrery {

struct Where;  // core/parse.h

enum class MemOp { kLoad, kStore };

struct MemoryContext {
  EventQueue* queue = nullptr;
  int npus = 0;
  EventHandler* sink = nullptr;
  uint32_t done_kind = 0;
  // Settings: "memory-type", "remote-mem-latency", "remote-mem-bw", "num-npus-per-node", ... as strings.
  const std::map<std::string, std::string>* params = nullptr;
  // Where the settings came from, for error messages: the file, and each key's
  // 1-based line when the file has lines (may be null).
  std::string source = "memory configuration";
  const std::map<std::string, int>* lines = nullptr;
  // The setting `key` as an error location: "mem.yml:3: bandwidth_gbps".
  Where At(const std::string& key) const;
  // The setting's text, or "" when absent.
  std::string Get(const std::string& key) const;
};

// An error naming the first setting not in `valid` (with did-you-mean), or Ok.
Status CheckMemoryKeys(const MemoryContext& ctx, const std::vector<std::string>& valid, const std::string& backend);

struct MemoryStats {
  uint64_t accesses = 0;
  uint64_t bytes = 0;
  Tick wait_ns = 0;  // queueing before service, summed
};

class MemoryBackend {
 public:
  virtual ~MemoryBackend() = default;
  // False when this backend has no tier to serve MEM nodes (ASTRA-sim's NO_MEMORY_EXPANSION).
  virtual bool enabled() const = 0;
  virtual void Access(int npu, MemOp op, uint64_t bytes, uint64_t token) = 0;
  virtual MemoryStats stats() const { return {}; }
};

using MemoryFactory = std::function<Result<std::unique_ptr<MemoryBackend>>(const MemoryContext&)>;

class MemoryRegistry {
 public:
  struct Entry {
    std::string description;
    MemoryFactory factory;
  };
  Status Register(const std::string& name, std::string description, MemoryFactory factory);
  const Entry* Find(const std::string& name) const;
  std::vector<std::string> Names() const;
  std::string Help() const;
  // "unknown memory backend (did you mean ...?); valid: ..."
  std::string Unknown(const std::string& name) const;

 private:
  NameRegistry<Entry> entries_{"memory backend"};
};

// Registers "astra-sim": ASTRA-sim's remote memory (none, per-NPU, per-node, pool).
void RegisterBuiltinMemoryBackends(MemoryRegistry* registry);

}  // namespace orrery
