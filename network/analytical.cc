// Congestion-unaware analytical backend: a message between NPUs that differ in
// one dimension takes hops * latency + bytes / bandwidth on that dimension,
// truncated to whole ns (ASTRA-sim's formula). Messages that differ in several
// dimensions pay each dimension in turn (dimension-order routing), or, as
// ASTRA-sim does, the lowest of them only (kMultiDimChargeParam = "lowest").
#include <algorithm>
#include <unordered_map>

#include "network/backend.h"
#include "network/fixed_delay.h"

namespace orrery {

namespace {

// Exact division of 32-bit values by a fixed divisor without a divide
// instruction (Lemire, Kaser, Kurz: "Faster remainder by direct computation",
// 2019): q = high 64 bits of M * a with M = floor((2^64 - 1) / d) + 1, exact
// for every a and d below 2^32 (d = 1 is taken apart: M would wrap to 0).
struct FastDiv {
  uint64_t m = 0;
  uint32_t d = 1;
  explicit FastDiv(uint32_t divisor) : m(divisor > 1 ? ~uint64_t{0} / divisor + 1 : 0), d(divisor) {}
  uint32_t Div(uint32_t a) const {
    return d == 1 ? a : static_cast<uint32_t>((static_cast<unsigned __int128>(m) * a) >> 64);
  }
};

class AnalyticalBackend : public NetworkBackend, public FixedDelayBackend {
 public:
  explicit AnalyticalBackend(const BackendContext& ctx)
      : ctx_(ctx), stats_(ctx.topology->num_dims()), recent_(ctx.topology->num_dims()) {
    uint32_t stride = 1;
    for (const Dim& d : ctx.topology->dims()) {
      radix_.emplace_back(static_cast<uint32_t>(d.npus));
      stride_.push_back(stride);
      stride *= static_cast<uint32_t>(d.npus);
    }
    het_ = ctx.heterogeneity && !ctx.heterogeneity->link.empty() ? ctx.heterogeneity : nullptr;
    if (ctx.params) {
      auto it = ctx.params->find(kMultiDimChargeParam);
      lowest_only_ = it != ctx.params->end() && it->second == "lowest";
    }
  }

  void Send(int src, int dst, uint64_t bytes, uint64_t token) override {
    ctx_.queue->ScheduleAfter(Delay(src, dst, bytes), ctx_.sink, ctx_.delivered_kind, token);
  }

  Tick Delay(int src, int dst, uint64_t bytes) override {
    const Topology& t = *ctx_.topology;
    Tick delay = 0;
    ForEachCrossed(src, dst, [&](int d, int a, int b) {
      const int hops = t.Hops(d, a, b);
      const double factor = het_ ? LegFactor(src, dst, d, a, b) : 1.0;
      HopPrice p;
      if (factor != 1.0) {  // a leg at its NPUs' own bandwidth (--heterogeneity): priced apart
        p = PriceHops(hops, t.dims()[d].latency_ns, t.BytesPerNs(d) * factor, bytes);
      } else {
        // A collective's messages on one dimension mostly repeat (bytes, hops):
        // the last pair's times are kept, computed by the same formula.
        Recent& m = recent_[d];
        if (m.bytes != bytes || m.hops != hops) {
          const HopPrice fresh = PriceHops(hops, t.dims()[d].latency_ns, t.BytesPerNs(d), bytes);
          m.bytes = bytes;
          m.hops = hops;
          m.delay = fresh.delay;
          m.busy = fresh.busy;
        }
        p.delay = m.delay;
        p.busy = m.busy;
      }
      // Saturating: a delay past 2^64 ns reaches the queue as kTickMax, an error.
      delay = SatAdd(delay, p.delay);
      stats_[d].messages++;
      stats_[d].bytes += bytes;
      stats_[d].busy_ns = SatAdd(stats_[d].busy_ns, p.busy);
      return !lowest_only_;
    });
    return delay;
  }
  FixedRoute* RouteOf(int src, int dst) override {
    const Topology& t = *ctx_.topology;
    int crossed = -1, hops = 0;
    bool several = false;
    double factor = 1.0;
    ForEachCrossed(src, dst, [&](int d, int a, int b) {
      if (crossed >= 0) {
        several = true;  // a second dimension: no route
        return false;
      }
      crossed = d;
      hops = t.Hops(d, a, b);
      if (het_) factor = LegFactor(src, dst, d, a, b);
      return !lowest_only_;  // charged on the lowest dimension only: its route
    });
    if (several || crossed < 0) return nullptr;  // two dimensions or none
    // A leg at its NPUs' own bandwidth (--heterogeneity): Delay prices it.
    if (factor != 1.0) return nullptr;
    // Made on first use (a sender asks once per peer): at most one per
    // dimension and distance, and nodes of an unordered_map do not move.
    const uint64_t key = (static_cast<uint64_t>(crossed) << 32) | static_cast<uint32_t>(hops);
    auto it = routes_.find(key);
    if (it == routes_.end()) {
      it = routes_.emplace(key, FixedRoute(&stats_[crossed], hops, t.dims()[crossed].latency_ns, t.BytesPerNs(crossed)))
               .first;
    }
    return &it->second;
  }
  const std::vector<DimStats>& dim_stats() const override { return stats_; }

 private:
  // Calls f(d, a, b) for each dimension d in which src and dst differ (a and
  // b their coordinates there), dimension 0 first, while f returns true. The
  // coordinates come digit by digit (mixed radix); once the remaining digits
  // agree no further dimension is crossed.
  template <typename F>
  void ForEachCrossed(int src, int dst, F f) const {
    uint32_t s = static_cast<uint32_t>(src), r = static_cast<uint32_t>(dst);
    const int dims = static_cast<int>(radix_.size());
    for (int d = 0; d < dims && s != r; ++d) {
      const FastDiv& n = radix_[d];
      const uint32_t qs = n.Div(s), qr = n.Div(r);
      const int a = static_cast<int>(s - qs * n.d), b = static_cast<int>(r - qr * n.d);
      s = qs;
      r = qr;
      if (a != b && !f(d, a, b)) return;
    }
  }
  // The bandwidth factor of the leg of src -> dst in dimension d (coordinates a
  // -> b there): the smaller of its two ends' (core/heterogeneity.h). Under
  // dimension-order routing the leg starts at the NPU with dst's coordinates
  // below d and src's from d up.
  double LegFactor(int src, int dst, int d, int a, int b) const {
    const uint32_t stride = stride_[d];
    const uint32_t low = static_cast<uint32_t>(dst) % stride;
    const uint32_t from = static_cast<uint32_t>(src) - static_cast<uint32_t>(src) % stride + low;
    const uint32_t to = from + static_cast<uint32_t>(b) * stride - static_cast<uint32_t>(a) * stride;
    return std::min(het_->LinkFactor(static_cast<int>(from), d), het_->LinkFactor(static_cast<int>(to), d));
  }
  // Per dimension: the last message's size and hops, its delay and busy time.
  struct Recent {
    uint64_t bytes = ~uint64_t{0};  // no message has this size (sizes are at most 2^48)
    int hops = -1;
    Tick delay = 0, busy = 0;
  };
  BackendContext ctx_;
  std::vector<DimStats> stats_;
  std::vector<Recent> recent_;
  std::vector<FastDiv> radix_;                       // per dimension: its size
  std::vector<uint32_t> stride_;                     // per dimension: the rank distance of one step in it
  const Heterogeneity* het_ = nullptr;               // link factors (--heterogeneity), null when none
  bool lowest_only_ = false;                         // kMultiDimChargeParam = "lowest"
  std::unordered_map<uint64_t, FixedRoute> routes_;  // (dim << 32 | hops): one-dimension routes (RouteOf)
};

}  // namespace

std::unique_ptr<NetworkBackend> MakeCongestionAwareBackend(const BackendContext& ctx);

void RegisterBuiltinBackends(BackendRegistry* registry) {
  (void)registry->Register("analytical",
                           "congestion-unaware: hops*latency + bytes/bandwidth per message (ASTRA-sim analytical)",
                           [](const BackendContext& ctx) -> Result<std::unique_ptr<NetworkBackend>> {
                             return std::unique_ptr<NetworkBackend>(new AnalyticalBackend(ctx));
                           });
  (void)registry->Register("congestion-aware", "per-link FIFO queues, hop by hop, dimension-order routing",
                           [](const BackendContext& ctx) -> Result<std::unique_ptr<NetworkBackend>> {
                             return MakeCongestionAwareBackend(ctx);
                           });
}

}  // namespace orrery
