// The network backend interface that built-ins and plugins implement. The
// system layer matches sends with receives itself; a backend only moves bytes
// and reports each message's delivery.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/event_queue.h"
#include "core/heterogeneity.h"
#include "core/registry.h"
#include "core/status.h"
#include "network/topology.h"

namespace orrery {

// Delivery notifications are events: the backend schedules
// sink->HandleEvent(kind, token) at the delivery time.
struct BackendContext {
  EventQueue* queue = nullptr;
  const Topology* topology = nullptr;
  EventHandler* sink = nullptr;
  uint32_t delivered_kind = 0;
  // Backend-specific settings (e.g. "remote-endpoint"), from the command line,
  // and kMultiDimChargeParam from the system configuration.
  const std::map<std::string, std::string>* params = nullptr;
  // A backend that fails mid-run (a remote peer going away) stores why here;
  // the run stops at the next event and reports it.
  Status* failure = nullptr;
  // Per-NPU link bandwidth factors (--heterogeneity; core/heterogeneity.h): null
  // when there are none. The analytical backend applies them; a run refuses
  // them with any other backend.
  const Heterogeneity* heterogeneity = nullptr;
};

// How the analytical backend charges a message between NPUs that differ in
// several dimensions: "every" (each of them in turn, dimension 0 first: the
// default) or "lowest" (the lowest of them only: ASTRA-sim's congestion-unaware
// backend). A run sets it from the system JSON's group-collective-model
// (docs/parity.md, "Communicator groups").
inline constexpr const char* kMultiDimChargeParam = "multi-dim-charge";

struct DimStats {
  uint64_t messages = 0;
  uint64_t bytes = 0;
  Tick busy_ns = 0;  // summed link busy time (congestion-aware) or serialization time
};

struct LinkStat {
  std::string name;  // e.g. "dim1 Switch up npu 12", "dim0 Ring npu 3 -> npu 4"
  int dim = 0;
  uint64_t bytes = 0;
  Tick busy_ns = 0;
};

class NetworkBackend {
 public:
  virtual ~NetworkBackend() = default;
  // Per-link statistics, for backends that model individual links.
  virtual std::vector<LinkStat> Links() const { return {}; }
  // Moves `bytes` from `src` to `dst`; schedules the delivery event with `token`.
  virtual void Send(int src, int dst, uint64_t bytes, uint64_t token) = 0;
  virtual const std::vector<DimStats>& dim_stats() const = 0;
};

using BackendFactory = std::function<Result<std::unique_ptr<NetworkBackend>>(const BackendContext&)>;

class BackendRegistry {
 public:
  struct Entry {
    std::string description;
    BackendFactory factory;
  };
  Status Register(const std::string& name, std::string description, BackendFactory factory);
  const Entry* Find(const std::string& name) const;
  std::string Help() const;  // one line per backend
  std::vector<std::string> Names() const;
  // "unknown network backend (did you mean ...?); valid: ..."
  std::string Unknown(const std::string& name) const;

 private:
  NameRegistry<Entry> entries_{"network backend"};
};

// Registers analytical (congestion-unaware) and congestion-aware.
void RegisterBuiltinBackends(BackendRegistry* registry);

}  // namespace orrery
