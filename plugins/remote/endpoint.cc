#include "plugins/remote/endpoint.h"

#include <sys/un.h>

#include "core/parse.h"

namespace orrery::remote {

Result<Endpoint> ParseEndpoint(const std::string& text, const std::string& flag, bool allow_port_zero) {
  const std::string what = flag + " = \"" + text + "\"";
  Endpoint ep;
  if (text.rfind("unix:", 0) == 0) {
    ep.unix_socket = true;
    ep.path = text.substr(5);
    if (ep.path.empty()) return Status::Invalid(what + ": unix: needs a socket path (unix:/path)");
    // The kernel keeps the path in sockaddr_un::sun_path with its terminating NUL.
    constexpr size_t kMaxPath = sizeof(sockaddr_un::sun_path) - 1;
    if (ep.path.size() > kMaxPath) {
      return Status::Invalid(what + ": the socket path is " + std::to_string(ep.path.size()) +
                             " bytes long; allowed: at most " + std::to_string(kMaxPath) +
                             " bytes (sizeof(sockaddr_un::sun_path) - 1); use a shorter path, e.g. in /tmp");
    }
    if (ep.path.find('\0') != std::string::npos) {
      return Status::Invalid(what + ": the socket path contains a NUL byte; allowed: a file path");
    }
    return ep;
  }
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos) return Status::Invalid(what + ": expected HOST:PORT or unix:/path");
  ep.host = text.substr(0, colon);
  // [::1]:7070: an IPv6 literal in brackets.
  if (ep.host.size() >= 2 && ep.host.front() == '[' && ep.host.back() == ']')
    ep.host = ep.host.substr(1, ep.host.size() - 2);
  if (ep.host.empty())
    return Status::Invalid(what + ": the host before ':' is empty; expected HOST:PORT or unix:/path");
  auto port = ParseInt(text.substr(colon + 1), Where{"", 0, what + ": port"}, allow_port_zero ? 0 : 1, 65535);
  if (!port.ok()) return port.status();
  ep.port = static_cast<uint16_t>(port.value());
  return ep;
}

}  // namespace orrery::remote
