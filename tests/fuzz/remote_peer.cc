// Fuzz target: the reference peer (`orrery peer`) reading a client's session.
// The fuzzed bytes are all the client says (length-prefixed ToPeer frames: a
// hello, advances, link requests, a bye), served by one session over a socket
// pair while its answers are read. The session ends with Ok or a Status; a
// crash, hang or sanitizer report is a finding.
#include <utility>  // before Boost.Asio under C++20

#include <boost/asio.hpp>
#include <chrono>
#include <string>
#include <thread>

#include "plugins/remote/peer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using Unix = boost::asio::local::stream_protocol;
  boost::asio::io_context io, client_io;
  Unix::socket server(io), client(client_io);
  boost::asio::local::connect_pair(server, client);
  orrery::remote::SessionLimits limits;
  limits.hello_timeout = limits.frame_timeout = std::chrono::seconds(10);
  limits.max_model_bytes = 64 << 20;  // the fuzzer's memory, not the machine's
  std::thread session([&] {
    (void)orrery::remote::ServePeerSession(io, server, limits);
    server.close();
  });
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  std::thread writer([&] {
    boost::system::error_code ec;
    boost::asio::write(client, boost::asio::buffer(bytes), ec);
    client.shutdown(Unix::socket::shutdown_send, ec);
  });
  boost::system::error_code ec;
  char sink[4096];
  while (!ec) client.read_some(boost::asio::buffer(sink), ec);  // the answers, until the session ends
  writer.join();
  session.join();
  return 0;
}
