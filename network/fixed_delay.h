// A built-in backend whose delivery time is known the moment a message is
// sent (the analytical one). The system layer may then schedule a built-in
// algorithm's delivery itself, straight to the receiving stream, with no
// message slot and no lookup at delivery. Not part of the plugin interface:
// found with dynamic_cast on the backend; a backend without it gets every
// message through NetworkBackend::Send.
#pragma once
#include <cstdint>

#include "core/tick.h"

namespace orrery {

class FixedDelayBackend {
 public:
  // Counts the message in the backend's statistics exactly as Send(src, dst,
  // bytes, token) would and returns the delay Send would schedule it after.
  virtual Tick Delay(int src, int dst, uint64_t bytes) = 0;

 protected:
  ~FixedDelayBackend() = default;
};

}  // namespace orrery
