// An example network backend plugin: an ideal crossbar. Every message takes
// the latency and bandwidth of the dimension it would leave first, as if each
// NPU had a dedicated, uncontended link to every other NPU.
#include <cstdio>
#include <memory>

#include "network/backend.h"
#include "plugins/sdk/orrery_plugin.h"

namespace {

class IdealCrossbar : public orrery::NetworkBackend {
 public:
  explicit IdealCrossbar(const orrery::BackendContext& ctx) : ctx_(ctx), stats_(ctx.topology->num_dims()) {}

  void Send(int src, int dst, uint64_t bytes, uint64_t token) override {
    const orrery::Topology& t = *ctx_.topology;
    int d = 0;
    while (d + 1 < t.num_dims() && t.Coord(src, d) == t.Coord(dst, d)) ++d;
    const double delay = t.dims()[d].latency_ns + static_cast<double>(bytes) / t.BytesPerNs(d);
    stats_[d].messages++;
    stats_[d].bytes += bytes;
    ctx_.queue->ScheduleAfter(static_cast<orrery::Tick>(delay), ctx_.sink, ctx_.delivered_kind, token);
  }
  const std::vector<orrery::DimStats>& dim_stats() const override { return stats_; }

 private:
  orrery::BackendContext ctx_;
  std::vector<orrery::DimStats> stats_;
};

bool Register(orrery::PluginRegistries* registries, char* error, size_t error_size) {
  orrery::Status st = registries->network->Register(
      "ideal-crossbar", "every pair of NPUs has its own link: latency + bytes/bandwidth, no contention",
      [](const orrery::BackendContext& ctx) -> orrery::Result<std::unique_ptr<orrery::NetworkBackend>> {
        return std::unique_ptr<orrery::NetworkBackend>(new IdealCrossbar(ctx));
      });
  if (!st.ok()) std::snprintf(error, error_size, "%s", st.message().c_str());
  return st.ok();
}

const OrreryPluginInfo kInfo = {ORRERY_PLUGIN_ABI_VERSION, "ideal-crossbar", "1.0.0", &Register};

}  // namespace

extern "C" ORRERY_EXPORT const OrreryPluginInfo* orrery_plugin_info(void) { return &kInfo; }
