// The reference peer's sessions, apart from the listening socket: one client
// served on a connected stream (ServeRemotePeer calls it for every accepted
// connection; tests and the fuzz target on a socket pair).
#pragma once
#include <utility>  // before Boost.Asio under C++20

#include <boost/asio.hpp>
#include <chrono>
#include <cstdint>

#include "core/status.h"

namespace orrery::remote {

struct SessionLimits {
  // How long to wait for the hello after a client connects, and for each later frame.
  std::chrono::milliseconds hello_timeout{60000};
  std::chrono::milliseconds frame_timeout{std::chrono::hours(24)};
  // The most memory a client's network model may take (0: the machine's physical memory).
  uint64_t max_model_bytes = 0;
};

// Serves one client until it says bye or closes: Ok, or why the session ended
// badly (a frame that does not parse, a refused hello, an impossible advance,
// an exception from Boost or the model). Never throws.
Status ServePeerSession(boost::asio::io_context& io, boost::asio::local::stream_protocol::socket& sock,
                        const SessionLimits& limits = {});
Status ServePeerSession(boost::asio::io_context& io, boost::asio::ip::tcp::socket& sock,
                        const SessionLimits& limits = {});

}  // namespace orrery::remote
