// "pool": one disaggregated memory pool shared by all NPUs.
//   sharing: fifo -> `ports` first-in-first-out servers; an access takes the
//                    port that frees first (lowest index on ties) and costs
//                    latency + bytes / bandwidth on it.
//   sharing: fair -> every access first waits `latency`, then transfers with
//                    the pool's bandwidth split equally among all transfers in
//                    progress (processor sharing); N equal concurrent accesses
//                    all finish at latency + N * bytes / bandwidth.
#include <cmath>
#include <limits>

#include "core/limits.h"
#include "core/parse.h"
#include "memory/backend.h"

namespace orrery {

namespace {

constexpr uint32_t kTransferStart = 1;
constexpr uint32_t kCompletion = 2;

class PoolMemory : public MemoryBackend, public EventHandler {
 public:
  PoolMemory(const MemoryContext& ctx, Tick latency, double bytes_per_ns, int ports, bool fair)
      : ctx_(ctx), latency_(latency), bw_(bytes_per_ns), fair_(fair), port_free_(ports, 0) {}

  bool enabled() const override { return true; }

  void Access(int npu, MemOp, uint64_t bytes, uint64_t token) override {
    const Tick now = ctx_.queue->Now();
    stats_.accesses++;
    stats_.bytes += bytes;
    if (!fair_) {
      size_t best = 0;
      for (size_t p = 1; p < port_free_.size(); ++p) {
        if (port_free_[p] < port_free_[best]) best = p;
      }
      const Tick start = std::max(now, port_free_[best]);
      stats_.wait_ns += start - now;
      port_free_[best] = SatAdd(SatAdd(start, latency_), TicksFromDouble(static_cast<double>(bytes) / bw_));
      ctx_.queue->ScheduleAt(port_free_[best], ctx_.sink, ctx_.done_kind, token);
      return;
    }
    if (bytes == 0) {
      ctx_.queue->ScheduleAfter(latency_, ctx_.sink, ctx_.done_kind, token);
      return;
    }
    const uint32_t slot = static_cast<uint32_t>(xfers_.size());
    xfers_.push_back(Transfer{token, static_cast<double>(bytes), false});
    ctx_.queue->ScheduleAfter(latency_, this, kTransferStart, slot);
  }

  void HandleEvent(uint32_t kind, uint64_t arg) override {
    Settle();
    if (kind == kTransferStart) {
      xfers_[arg].active = true;
      ++active_;
    } else if (arg != generation_) {
      return;  // a completion planned before the set of transfers changed
    }
    // Finish every transfer that is done (remaining within half a byte). The
    // sink may start new accesses, so it hears about completions only after
    // the bookkeeping is consistent.
    std::vector<uint64_t> done;
    for (auto& x : xfers_) {
      if (x.active && x.remaining <= 0.5) {
        x.active = false;
        --active_;
        done.push_back(x.token);
      }
    }
    PlanNext();
    for (uint64_t token : done) ctx_.sink->HandleEvent(ctx_.done_kind, token);
  }

  MemoryStats stats() const override { return stats_; }

 private:
  struct Transfer {
    uint64_t token;
    double remaining;
    bool active;
  };

  // Drains the bytes moved since the last change at the shared rate.
  void Settle() {
    const Tick now = ctx_.queue->Now();
    if (active_ > 0 && now > last_) {
      const double moved = static_cast<double>(now - last_) * bw_ / active_;
      for (auto& x : xfers_) {
        if (x.active) x.remaining -= moved;
      }
    }
    last_ = now;
  }

  void PlanNext() {
    ++generation_;
    if (active_ == 0) {
      // Keep the slot vector from growing without bound.
      bool any = false;
      for (const auto& x : xfers_) any |= x.remaining > 0.5;
      if (!any) xfers_.clear();
      return;
    }
    double least = std::numeric_limits<double>::max();
    for (const auto& x : xfers_) {
      if (x.active) least = std::min(least, x.remaining);
    }
    const double wait = std::ceil(std::max(0.0, least) * active_ / bw_ - 1e-9);
    const Tick in = TicksFromDouble(wait);
    ctx_.queue->ScheduleAfter(in, this, kCompletion, generation_);
  }

  MemoryContext ctx_;
  Tick latency_;
  double bw_;
  bool fair_;
  std::vector<Tick> port_free_;
  std::vector<Transfer> xfers_;
  int active_ = 0;
  Tick last_ = 0;
  uint64_t generation_ = 0;
  MemoryStats stats_;
};

}  // namespace

Result<std::unique_ptr<MemoryBackend>> MakePoolMemory(const MemoryContext& ctx) {
  ORRERY_RETURN_IF_ERROR(CheckMemoryKeys(ctx, {"backend", "latency_ns", "bandwidth_gbps", "ports", "sharing"}, "pool"));
  uint64_t lat = 0;
  int64_t ports = 1;
  if (!ctx.Get("latency_ns").empty()) {
    ORRERY_PARSE_OR_RETURN(lat, ParseUint(ctx.Get("latency_ns"), ctx.At("latency_ns"), 0, kMaxLatencyNs));
  }
  if (ctx.Get("bandwidth_gbps").empty()) {
    return ValueError(ctx.At("bandwidth_gbps"), "\"\"", "missing (the pool backend needs it)",
                      DescribeRange(kBandwidthGBps));
  }
  ORRERY_PARSE_OR_RETURN(const double bw,
                         ParseDouble(ctx.Get("bandwidth_gbps"), ctx.At("bandwidth_gbps"), kBandwidthGBps));
  if (!ctx.Get("ports").empty()) {
    ORRERY_PARSE_OR_RETURN(ports, ParseInt(ctx.Get("ports"), ctx.At("ports"), 1, kMaxPoolPorts));
  }
  const std::string sharing = ctx.Get("sharing").empty() ? "fifo" : ctx.Get("sharing");
  if (sharing != "fifo" && sharing != "fair") {
    return ValueError(ctx.At("sharing"), "\"" + sharing + "\"", "unknown sharing", "fifo, fair");
  }
  // GB/s here is 10^9 bytes per second, as in ASTRA-sim's remote memory.
  return std::unique_ptr<MemoryBackend>(
      new PoolMemory(ctx, TicksFromDouble(lat), bw, static_cast<int>(ports), sharing == "fair"));
}

}  // namespace orrery
