// Fuzz target: Orrery's remote backend reading a peer's answers. The fuzzed
// bytes are all the peer says (length-prefixed FromPeer frames: the hello's
// answer, then one reply per request), written as soon as Orrery connects; a
// 2-NPU all-reduce with --link-stats runs through them. Every outcome is a
// Status naming the peer; a crash, hang or sanitizer report is a finding.
#include <unistd.h>

#include <utility>  // before Boost.Asio under C++20

#include <boost/asio.hpp>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>

#include "gen/toy_traces.h"
#include "plugins/remote/remote_backend.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using Unix = boost::asio::local::stream_protocol;

// The peer's listening socket, the run's fixed inputs and the registry, made once.
struct Fixture {
  std::string socket_path = orrery::fuzz::Scratch() + "/peer.sock";
  std::string traces = orrery::fuzz::Scratch() + "/remote_trace";
  std::string system;
  boost::asio::io_context io;
  std::unique_ptr<Unix::acceptor> acceptor;
  orrery::BackendRegistry backends = orrery::DefaultBackends();

  Fixture() {
    ::unlink(socket_path.c_str());
    acceptor = std::make_unique<Unix::acceptor>(io, Unix::endpoint(socket_path));
    if (!orrery::WriteSingleCollectiveTraces(2, orrery::CollectiveKind::kAllReduce, 4096, traces).ok()) std::abort();
    const std::string json = R"({"preferred-dataset-splits": 1, "endpoint-delay": 10})";
    system = orrery::fuzz::WriteInput("remote_system.json", reinterpret_cast<const uint8_t*>(json.data()), json.size());
    orrery::RegisterRemoteBackend(&backends);
  }
};

// Accepts Orrery (for at most 10 s), says `bytes`, then reads until Orrery closes.
void Speak(Fixture& f, const std::string& bytes) {
  Unix::socket s(f.io);
  bool accepted = false;
  f.acceptor->async_accept(s, [&](const boost::system::error_code& ec) { accepted = !ec; });
  f.io.restart();
  f.io.run_for(std::chrono::seconds(10));
  if (!accepted) {
    f.acceptor->cancel();
    f.io.restart();
    f.io.run();
    return;
  }
  boost::system::error_code ec;
  boost::asio::write(s, boost::asio::buffer(bytes), ec);
  s.shutdown(Unix::socket::shutdown_send, ec);
  char sink[4096];
  while (!ec) s.read_some(boost::asio::buffer(sink), ec);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace orrery;
  static Fixture* f = new Fixture;  // never destroyed: the acceptor outlives every input
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  std::thread peer([&] { Speak(*f, bytes); });
  RunConfig c;
  c.files.workload_prefix = f->traces;
  c.files.network = "Ring(2,50GB/s,500ns)";
  c.files.system = f->system;
  c.run.backend = "remote";
  c.run.backend_params["remote-endpoint"] = "unix:" + f->socket_path;
  c.run.backend_params["remote-model"] = "analytical";
  c.run.backend_params["remote-timeout-ms"] = "5000";
  c.observe.link_stats = true;
  (void)RunSimulation(c, f->backends);
  peer.join();
  return 0;
}
