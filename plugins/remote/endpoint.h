// Parsing and resolving the remote backend's endpoints (`--remote-endpoint`,
// `orrery peer --listen`): HOST:PORT or unix:/path. A malformed value, a port
// outside the allowed range or a host that does not resolve is bad input
// (exit 2) naming the flag and the value.
#pragma once
#include <cstdint>
#include <string>

#include "core/status.h"

namespace orrery::remote {

struct Endpoint {
  bool unix_socket = false;
  std::string path;  // unix:/path
  std::string host;  // HOST:PORT
  uint16_t port = 0;
};

// `flag` names the value in errors ("--remote-endpoint"); `allow_port_zero`
// accepts port 0 (a listener: the system picks a free port).
Result<Endpoint> ParseEndpoint(const std::string& text, const std::string& flag, bool allow_port_zero);

}  // namespace orrery::remote
