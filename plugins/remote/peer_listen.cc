// The reference peer's listening side: the endpoint, a Unix socket path
// checked before anything is removed, and the loop that serves one client
// after another, logging a session that ends badly and serving on.
#include <glog/logging.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <type_traits>

#include "plugins/remote/endpoint.h"
#include "plugins/remote/peer.h"
#include "plugins/remote/peer_text.h"
#include "plugins/remote/remote_backend.h"

namespace orrery {

namespace {

using remote::Printable;

std::string ClientName(boost::asio::ip::tcp::socket& sock, int n) {
  boost::system::error_code ec;
  const auto ep = sock.remote_endpoint(ec);
  std::string name = "client " + std::to_string(n);
  if (!ec) name += " (" + ep.address().to_string(ec) + ":" + std::to_string(ep.port()) + ")";
  return name;
}

std::string ClientName(boost::asio::local::stream_protocol::socket& sock, int n) {
  std::string name = "client " + std::to_string(n);
  ucred cred{};
  socklen_t len = sizeof(cred);
  if (getsockopt(sock.native_handle(), SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && cred.pid > 0) {
    name += " (pid " + std::to_string(cred.pid) + ")";
  }
  return name;
}

// Accepts and serves `connections` clients (0: forever), one at a time. A
// session that ends badly is logged and counts; only the listening socket
// failing ends the peer.
template <typename Socket, typename Acceptor>
Status AcceptLoop(boost::asio::io_context& io, Acceptor& acc, int connections, const PeerSessionLog& on_bad_session) {
  for (int i = 0; connections <= 0 || i < connections;) {
    Socket sock(io);
    boost::system::error_code ec;
    acc.accept(sock, ec);
    if (ec == boost::asio::error::connection_aborted) continue;  // the client went before it was accepted
    if (ec) return Status::Env("peer: accept failed: " + ec.message());
    ++i;
    if constexpr (std::is_same_v<Socket, boost::asio::ip::tcp::socket>) {
      sock.set_option(boost::asio::ip::tcp::no_delay(true), ec);
    }
    const std::string client = ClientName(sock, i);
    const Status st = remote::ServePeerSession(io, sock);
    if (st.ok()) continue;
    const std::string why = Printable(st.message(), remote::kMaxErrorText);
    LOG(WARNING) << "orrery peer: " << client << ": " << why << " (session ended; serving on)";
    if (on_bad_session) on_bad_session(client, Status::Env(why));
  }
  return Status::Ok();
}

// Whatever is at a Unix socket path: nothing, or a socket nobody listens on
// (left by a peer that died; removed). Anything else is refused (exit 1).
Status ClearSocketPath(const std::string& path, const std::string& listen) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return Status::Ok();
    return Status::Env("peer: cannot listen on " + listen + ": " + std::strerror(errno));
  }
  if (!S_ISSOCK(st.st_mode)) {
    const char* what = S_ISREG(st.st_mode) ? "a regular file" : S_ISDIR(st.st_mode) ? "a directory" : "not a socket";
    return Status::Env("peer: cannot listen on " + listen + ": " + path + " exists and is " + what +
                       "; the peer removes only a socket nobody listens on; choose another path");
  }
  boost::asio::io_context io;
  boost::asio::local::stream_protocol::socket probe(io);
  boost::system::error_code ec;
  probe.connect(boost::asio::local::stream_protocol::endpoint(path), ec);
  if (!ec) {
    return Status::Env("peer: cannot listen on " + listen + ": " + path +
                       " is a socket another process is listening on; stop it or choose another path");
  }
  if (ec != boost::asio::error::connection_refused) {
    return Status::Env("peer: cannot listen on " + listen + ": " + path + " is a socket that cannot be checked (" +
                       ec.message() + ")");
  }
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return Status::Env("peer: cannot listen on " + listen + ": cannot remove the stale socket " + path + ": " +
                       std::strerror(errno));
  }
  return Status::Ok();
}

Status ServeUnix(const std::string& listen, const remote::Endpoint& where, int connections,
                 const std::function<void(const std::string&)>& on_listening, const PeerSessionLog& on_bad_session) {
  ORRERY_RETURN_IF_ERROR(ClearSocketPath(where.path, listen));
  boost::asio::io_context io;
  boost::system::error_code ec;
  const boost::asio::local::stream_protocol::endpoint ep(where.path);
  boost::asio::local::stream_protocol::acceptor acc(io);
  acc.open(ep.protocol(), ec);
  if (!ec) acc.bind(ep, ec);
  if (!ec) acc.listen(boost::asio::socket_base::max_listen_connections, ec);
  if (ec) return Status::Env("peer: cannot listen on " + listen + ": " + ec.message());
  if (on_listening) on_listening(listen);
  return AcceptLoop<boost::asio::local::stream_protocol::socket>(io, acc, connections, on_bad_session);
}

Status ServeTcp(const std::string& listen, const remote::Endpoint& where, int connections,
                const std::function<void(const std::string&)>& on_listening, const PeerSessionLog& on_bad_session) {
  boost::asio::io_context io;
  boost::system::error_code ec;
  boost::asio::ip::tcp::resolver resolver(io);
  auto resolved = resolver.resolve(where.host, std::to_string(where.port), boost::asio::ip::resolver_base::passive, ec);
  if (ec || resolved.empty()) {
    return Status::Invalid("--listen = \"" + listen + "\": host \"" + where.host + "\" does not resolve (" +
                           (ec ? ec.message() : std::string("no address")) + ")");
  }
  const boost::asio::ip::tcp::endpoint ep = resolved.begin()->endpoint();
  boost::asio::ip::tcp::acceptor acc(io);
  acc.open(ep.protocol(), ec);
  if (!ec) acc.set_option(boost::asio::ip::tcp::acceptor::reuse_address(true), ec);
  if (!ec) acc.bind(ep, ec);
  if (!ec) acc.listen(boost::asio::socket_base::max_listen_connections, ec);
  if (ec) return Status::Env("peer: cannot listen on " + listen + ": " + ec.message());
  if (on_listening) {
    on_listening(listen.substr(0, listen.rfind(':')) + ":" + std::to_string(acc.local_endpoint().port()));
  }
  return AcceptLoop<boost::asio::ip::tcp::socket>(io, acc, connections, on_bad_session);
}

}  // namespace

Status ServeRemotePeer(const std::string& listen, int connections,
                       const std::function<void(const std::string&)>& on_listening,
                       const PeerSessionLog& on_bad_session) {
  auto where = remote::ParseEndpoint(listen, "--listen", /*allow_port_zero=*/true);
  if (!where.ok()) return where.status();
  try {
    return where->unix_socket ? ServeUnix(listen, where.value(), connections, on_listening, on_bad_session)
                              : ServeTcp(listen, where.value(), connections, on_listening, on_bad_session);
  } catch (const std::exception& e) {  // Boost's throwing forms are not used; this keeps it so
    return Status::Env("peer: " + listen + ": " + e.what());
  }
}

}  // namespace orrery
