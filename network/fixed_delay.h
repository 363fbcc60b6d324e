// A built-in backend whose delivery time is known the moment a message is
// sent (the analytical one). The system layer may then schedule a built-in
// algorithm's delivery itself, straight to the receiving stream, with no
// message slot and no lookup at delivery. Not part of the plugin interface:
// found with dynamic_cast on the backend; a backend without it gets every
// message through NetworkBackend::Send.
#pragma once
#include <cstdint>

#include "core/tick.h"
#include "network/backend.h"

namespace orrery {

// The analytical formula for `hops` links of one dimension (latency_ns and
// bytes_per_ns that dimension's): the delay a message of `bytes` takes, and
// the link time it adds to the dimension's busy total.
struct HopPrice {
  Tick delay = 0, busy = 0;
};
inline HopPrice PriceHops(int hops, double latency_ns, double bytes_per_ns, uint64_t bytes) {
  const double ser = static_cast<double>(bytes) / bytes_per_ns;
  return HopPrice{TicksFromDouble(hops * latency_ns + ser), SatMul(TicksFromDouble(ser), static_cast<Tick>(hops))};
}

// Messages between two NPUs that differ in one dimension, `hops` links apart
// in it: the sender keeps this (FixedDelayBackend::RouteOf) and charges each
// message here, inline, with the statistics and delay Delay() would give,
// without finding coordinates again or a virtual call.
class FixedRoute {
 public:
  FixedRoute(DimStats* stats, int hops, double latency_ns, double bytes_per_ns)
      : stats_(stats), hops_(hops), latency_ns_(latency_ns), bytes_per_ns_(bytes_per_ns) {}
  // The last size charged is `bytes` (Charge then needs no pricing).
  bool Priced(uint64_t bytes) const { return bytes == bytes_; }
  Tick Charge(uint64_t bytes) {
    if (bytes != bytes_) Price(bytes);  // a collective's messages mostly repeat their size
    stats_->messages++;
    stats_->bytes += bytes;
    stats_->busy_ns = SatAdd(stats_->busy_ns, price_.busy);
    return price_.delay;
  }

 private:
  void Price(uint64_t bytes) {
    bytes_ = bytes;
    price_ = PriceHops(hops_, latency_ns_, bytes_per_ns_, bytes);
  }
  DimStats* stats_;
  uint64_t bytes_ = ~uint64_t{0};  // no message has this size (sizes are at most 2^48)
  HopPrice price_;
  int hops_;
  double latency_ns_, bytes_per_ns_;
};

class FixedDelayBackend {
 public:
  // Counts the message in the backend's statistics exactly as Send(src, dst,
  // bytes, token) would and returns the delay Send would schedule it after.
  virtual Tick Delay(int src, int dst, uint64_t bytes) = 0;
  // The route from `src` to `dst` when they differ in exactly one dimension
  // (it lives as long as the backend), else nullptr: use Delay. A routed
  // message never reaches Delay, so Charge must count and price it exactly
  // as Delay(src, dst, bytes) would.
  virtual FixedRoute* RouteOf(int src, int dst) = 0;

 protected:
  ~FixedDelayBackend() = default;
};

}  // namespace orrery
