// Congestion-unaware analytical backend: a message between NPUs that differ in
// one dimension takes hops * latency + bytes / bandwidth on that dimension,
// truncated to whole ns (ASTRA-sim's formula). Messages that differ in several
// dimensions pay each dimension in turn (dimension-order routing).
#include "network/backend.h"

namespace orrery {

namespace {

class AnalyticalBackend : public NetworkBackend {
 public:
  explicit AnalyticalBackend(const BackendContext& ctx) : ctx_(ctx), stats_(ctx.topology->num_dims()) {}

  void Send(int src, int dst, uint64_t bytes, uint64_t token) override {
    const Topology& t = *ctx_.topology;
    Tick delay = 0;
    for (int d = 0; d < t.num_dims(); ++d) {
      const int a = t.Coord(src, d), b = t.Coord(dst, d);
      if (a == b) continue;
      const double ser = static_cast<double>(bytes) / t.BytesPerNs(d);
      // Saturating: a delay past 2^64 ns reaches the queue as kTickMax, an error.
      delay = SatAdd(delay, TicksFromDouble(t.Hops(d, a, b) * t.dims()[d].latency_ns + ser));
      stats_[d].messages++;
      stats_[d].bytes += bytes;
      stats_[d].busy_ns = SatAdd(stats_[d].busy_ns, SatMul(TicksFromDouble(ser), static_cast<Tick>(t.Hops(d, a, b))));
    }
    ctx_.queue->ScheduleAfter(delay, ctx_.sink, ctx_.delivered_kind, token);
  }
  const std::vector<DimStats>& dim_stats() const override { return stats_; }

 private:
  BackendContext ctx_;
  std::vector<DimStats> stats_;
};

}  // namespace

std::unique_ptr<NetworkBackend> MakeCongestionAwareBackend(const BackendContext& ctx);

void RegisterBuiltinBackends(BackendRegistry* registry) {
  (void)registry->Register(
      "analytical", "congestion-unaware: hops*latency + bytes/bandwidth per message (ASTRA-sim analytical)",
      [](const BackendContext& ctx) -> Result<std::unique_ptr<NetworkBackend>> {
        return std::unique_ptr<NetworkBackend>(new AnalyticalBackend(ctx));
      });
  (void)registry->Register(
      "congestion-aware", "per-link FIFO queues, hop by hop, dimension-order routing",
      [](const BackendContext& ctx) -> Result<std::unique_ptr<NetworkBackend>> {
        return MakeCongestionAwareBackend(ctx);
      });
}

}  // namespace orrery
