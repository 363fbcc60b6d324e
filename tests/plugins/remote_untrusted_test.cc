// A remote peer is untrusted input: every frame is checked, and a peer that
// breaks the protocol ends the run with one clear error naming the peer and
// the token — never a crash. Endpoints and the timeout are checked as flags.
#include <gtest/gtest.h>

#include <utility>  // before Boost.Asio under C++20

#include <boost/asio.hpp>
#include <functional>
#include <future>
#include <thread>

#include "gen/toy_traces.h"
#include "plugins/remote/framing.h"
#include "plugins/remote/remote.pb.h"
#include "plugins/remote/remote_backend.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

using boost::asio::ip::tcp;

// Answers one advance: `advance` is what Orrery sent, `n` counts advances from 0.
using Answer = std::function<void(const remote::Advance& advance, int n, remote::FromPeer* out)>;

// A scripted peer on 127.0.0.1: accepts the hello, then answers every advance
// with `answer` until Orrery says bye or closes. Returns the endpoint.
std::string ScriptedPeer(Answer answer, std::thread* t) {
  std::promise<std::string> where;
  auto fut = where.get_future();
  *t = std::thread([answer, w = std::move(where)]() mutable {
    boost::asio::io_context io;
    tcp::acceptor acc(io, tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
    w.set_value("127.0.0.1:" + std::to_string(acc.local_endpoint().port()));
    tcp::socket s(io);
    acc.accept(s);
    std::string detail;
    remote::ToPeer in;
    if (remote::ReadFrame(io, s, &in, std::chrono::milliseconds(5000), &detail) != remote::ReadResult::kOk) return;
    remote::FromPeer out;
    out.mutable_hello_ack()->set_protocol_version(1);
    remote::WriteFrame(s, out, &detail);
    for (int n = 0;; ++n) {
      in.Clear();
      if (remote::ReadFrame(io, s, &in, std::chrono::milliseconds(5000), &detail) != remote::ReadResult::kOk) return;
      if (!in.has_advance()) return;
      out.Clear();
      out.mutable_reply()->set_next_event_ns(UINT64_MAX);
      answer(in.advance(), n, &out);
      if (!remote::WriteFrame(s, out, &detail)) return;
    }
  });
  return fut.get();
}

// One 1 MiB all-reduce on a 4-NPU ring through `endpoint`.
Status RunAgainst(const std::string& endpoint, const std::string& timeout_ms = "2000") {
  testing::TempDir d;
  d.Write("network.yml", testing::NetworkYaml("Ring", 4, 50, 500));
  d.Write("system.json", R"({"preferred-dataset-splits": 1})");
  EXPECT_TRUE(WriteSingleCollectiveTraces(4, CollectiveKind::kAllReduce, 1 << 20, d.File("trace")).ok());
  RunConfig c;
  c.files.workload_prefix = d.File("trace");
  c.files.network = d.File("network.yml");
  c.files.system = d.File("system.json");
  c.run.backend = "remote";
  c.run.backend_params["remote-endpoint"] = endpoint;
  c.run.backend_params["remote-timeout-ms"] = timeout_ms;
  BackendRegistry r = DefaultBackends();
  RegisterRemoteBackend(&r);
  auto rep = RunSimulation(c, r);
  return rep.ok() ? Status::Ok() : rep.status();
}

void ExpectPeerError(const Status& st, const std::string& endpoint, const std::string& text) {
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kEnvironment) << st.message();
  EXPECT_NE(st.message().find("remote backend peer at " + endpoint + " "), std::string::npos) << st.message();
  EXPECT_NE(st.message().find(text), std::string::npos) << st.message();
}

TEST(RemoteUntrusted, ATokenOrreryNeverSent) {
  std::thread t;
  const std::string ep = ScriptedPeer(
      [](const remote::Advance& a, int, remote::FromPeer* out) {
        auto* d = out->mutable_reply()->add_delivered();
        d->set_token(987654321);
        d->set_time_ns(a.until_ns());
      },
      &t);
  Status st = RunAgainst(ep);
  t.join();
  ExpectPeerError(st, ep, "delivered token 987654321, which Orrery never sent");
}

TEST(RemoteUntrusted, TheSameTokenTwice) {
  std::thread t;
  const std::string ep = ScriptedPeer(
      [](const remote::Advance& a, int, remote::FromPeer* out) {
        for (const auto& inj : a.injected()) {
          for (int k = 0; k < 2; ++k) {
            auto* d = out->mutable_reply()->add_delivered();
            d->set_token(inj.token());
            d->set_time_ns(a.until_ns());
          }
        }
      },
      &t);
  Status st = RunAgainst(ep);
  t.join();
  ExpectPeerError(st, ep, "twice");
  EXPECT_NE(st.message().find("delivered token 0 twice"), std::string::npos) << st.message();  // the first slot
}

TEST(RemoteUntrusted, ADeliveryInThePast) {
  std::thread t;
  const std::string ep = ScriptedPeer(
      [](const remote::Advance& a, int n, remote::FromPeer* out) {
        if (n == 0) {  // t=0: nothing yet, come back at 1000 ns
          out->mutable_reply()->set_next_event_ns(1000);
          return;
        }
        auto* d = out->mutable_reply()->add_delivered();  // at t=1000: delivered "at 500"
        d->set_token(0);
        d->set_time_ns(500);
      },
      &t);
  Status st = RunAgainst(ep);
  t.join();
  ExpectPeerError(st, ep, "delivered token 0 at t=500 ns while asked to advance to t=1000 ns");
}

TEST(RemoteUntrusted, ANextEventInThePast) {
  std::thread t;
  const std::string ep =
      ScriptedPeer([](const remote::Advance& a, int n,
                      remote::FromPeer* out) { out->mutable_reply()->set_next_event_ns(n == 0 ? 1000 : 999); },
                   &t);
  Status st = RunAgainst(ep);
  t.join();
  ExpectPeerError(st, ep, "announced its next event at t=999 ns, not after t=1000 ns");
}

TEST(RemoteUntrusted, IdleWithMessagesUndelivered) {
  std::thread t;
  const std::string ep = ScriptedPeer([](const remote::Advance&, int, remote::FromPeer*) {}, &t);  // delivers nothing
  Status st = RunAgainst(ep);
  t.join();
  ExpectPeerError(st, ep, "announced it has nothing pending at t=10 ns with ");
  EXPECT_NE(st.message().find("message(s) undelivered (token "), std::string::npos) << st.message();
}

TEST(RemoteUntrusted, BusyTimesForTheWrongNumberOfDimensions) {
  std::thread t;
  const std::string ep = ScriptedPeer(
      [](const remote::Advance&, int, remote::FromPeer* out) {
        out->mutable_reply()->add_dims()->set_busy_ns(5);
        out->mutable_reply()->add_dims()->set_busy_ns(5);
      },
      &t);
  Status st = RunAgainst(ep);
  t.join();
  ExpectPeerError(st, ep, "with statistics for 2 dimension(s); the network has 1 dimension(s)");
}

// Raw bytes after the hello: an oversized frame, then a frame that does not parse.
void RawAnswerTest(const std::string& bytes, const std::string& expect) {
  std::promise<std::string> where;
  auto fut = where.get_future();
  std::thread t([&bytes, &where] {
    boost::asio::io_context io;
    tcp::acceptor acc(io, tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
    where.set_value("127.0.0.1:" + std::to_string(acc.local_endpoint().port()));
    tcp::socket s(io);
    acc.accept(s);
    std::string detail;
    remote::ToPeer in;
    remote::ReadFrame(io, s, &in, std::chrono::milliseconds(5000), &detail);
    remote::FromPeer out;
    out.mutable_hello_ack()->set_protocol_version(1);
    remote::WriteFrame(s, out, &detail);
    in.Clear();
    remote::ReadFrame(io, s, &in, std::chrono::milliseconds(5000), &detail);
    boost::system::error_code ec;
    boost::asio::write(s, boost::asio::buffer(bytes), ec);
    char sink[256];
    while (!ec) s.read_some(boost::asio::buffer(sink), ec);  // until Orrery closes the connection
  });
  const std::string ep = fut.get();
  Status st = RunAgainst(ep);
  t.join();
  ExpectPeerError(st, ep, expect);
}

TEST(RemoteUntrusted, AnOversizedFrame) {
  RawAnswerTest(std::string("\xff\xff\xff\xff", 4) + "junk",
                "answered an advance to t=10 ns with a frame length over 64 MiB");
}

TEST(RemoteUntrusted, AGarbageFrame) {
  RawAnswerTest(std::string("\x03\x00\x00\x00\xff\xff\xff", 7),
                "answered an advance to t=10 ns with bytes that do not parse");
}

// Random bytes as the answer to the first advance (fixed seeds): always one
// clear error from the peer check, never a crash or a hang.
TEST(RemoteUntrusted, RandomFramesEndInAnError) {
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    uint32_t x = seed * 2654435761u;
    auto next = [&x] {
      x ^= x << 13;
      x ^= x >> 17;
      x ^= x << 5;
      return x;
    };
    std::string body(next() % 48, '\0');
    for (char& c : body) c = static_cast<char>(next() & 0xff);
    const uint32_t n = static_cast<uint32_t>(body.size());
    std::string frame = {static_cast<char>(n), 0, 0, 0};
    RawAnswerTest(frame + body, "remote backend peer at ");
  }
}

TEST(RemoteUntrusted, TimeoutMustBePositive) {
  for (const char* bad : {"0", "-5", "abc", "10ms"}) {
    Status st = RunAgainst("127.0.0.1:1", bad);  // checked before connecting
    ASSERT_FALSE(st.ok()) << bad;
    EXPECT_EQ(st.code(), StatusCode::kInvalidInput) << st.message();
    EXPECT_NE(st.message().find(std::string("--remote-timeout-ms = \"") + bad + "\""), std::string::npos)
        << st.message();
    EXPECT_NE(st.message().find("allowed: an integer >= 1"), std::string::npos) << st.message();
  }
}

TEST(RemoteUntrusted, EndpointsAreChecked) {
  struct Bad {
    const char* endpoint;
    const char* expect;
  };
  for (const Bad& b :
       {Bad{"127.0.0.1:abc", "--remote-endpoint = \"127.0.0.1:abc\": port = \"abc\""},
        Bad{"127.0.0.1:0", "--remote-endpoint = \"127.0.0.1:0\": port = \"0\": out of range"},
        Bad{"127.0.0.1:65536", "--remote-endpoint = \"127.0.0.1:65536\": port = \"65536\": out of range"},
        Bad{"127.0.0.1", "--remote-endpoint = \"127.0.0.1\": expected HOST:PORT or unix:/path"},
        Bad{":7070", "the host before ':' is empty"},
        Bad{"no-such-host.invalid:7070", "host \"no-such-host.invalid\" does not resolve"}}) {
    Status st = RunAgainst(b.endpoint);
    ASSERT_FALSE(st.ok()) << b.endpoint;
    EXPECT_EQ(st.code(), StatusCode::kInvalidInput) << st.message();
    EXPECT_NE(st.message().find(b.expect), std::string::npos) << st.message();
  }
}

TEST(RemoteUntrusted, PeerListenIsChecked) {
  for (const auto& [listen, expect] : std::vector<std::pair<std::string, std::string>>{
           {"127.0.0.1:abc", "--listen = \"127.0.0.1:abc\": port = \"abc\": not"},
           {"127.0.0.1:70000", "--listen = \"127.0.0.1:70000\": port = \"70000\": out of range"},
           {"no-such-host.invalid:7070",
            "--listen = \"no-such-host.invalid:7070\": host \"no-such-host.invalid\" does not resolve"},
           {"unix:", "--listen = \"unix:\": unix: needs a socket path"}}) {
    Status st = ServeRemotePeer(listen, 1, nullptr);
    ASSERT_FALSE(st.ok()) << listen;
    EXPECT_EQ(st.code(), StatusCode::kInvalidInput) << st.message();
    EXPECT_NE(st.message().find(expect), std::string::npos) << st.message();
  }
  Status st = ServeRemotePeer("unix:/nonexistent-dir/peer.sock", 1, nullptr);  // an error, not an exception
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("cannot listen on unix:/nonexistent-dir/peer.sock"), std::string::npos) << st.message();
}

// The reference peer checks Orrery's side as well: an impossible hello is
// refused, an advance back in time is answered with the reason and ends the
// session (logged; the peer itself ends well after its one connection).
TEST(RemoteUntrusted, ThePeerChecksOrrerysFrames) {
  for (int variant = 0; variant < 2; ++variant) {
    std::promise<std::string> where;
    auto fut = where.get_future();
    Status served, bad;
    std::thread peer([&] {
      served = ServeRemotePeer(
          "127.0.0.1:0", 1, [&](const std::string& e) { where.set_value(e); },
          [&](const std::string&, const Status& why) { bad = why; });
    });
    const std::string ep = fut.get();
    boost::asio::io_context io;
    tcp::socket s(io);
    s.connect(tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"),
                            static_cast<unsigned short>(std::stoi(ep.substr(10)))));
    std::string detail;
    remote::ToPeer hello;
    hello.mutable_hello()->set_protocol_version(1);
    auto* dim = hello.mutable_hello()->add_dims();
    dim->set_block("Ring");
    dim->set_npus(variant == 0 ? 0 : 4);
    dim->set_bandwidth_gbps(50);
    dim->set_latency_ns(500);
    ASSERT_TRUE(remote::WriteFrame(s, hello, &detail));
    remote::FromPeer ack;
    ASSERT_EQ(remote::ReadFrame(io, s, &ack, std::chrono::milliseconds(5000), &detail), remote::ReadResult::kOk);
    if (variant == 0) {
      EXPECT_EQ(ack.hello_ack().error(),
                "hello dims[0].npus = 0: out of range; allowed: an integer >= 2 and <= 67108864");
      s.close();
      peer.join();
      EXPECT_TRUE(served.ok()) << served.message();
      EXPECT_NE(bad.message().find("refused the hello: hello dims[0].npus = 0"), std::string::npos) << bad.message();
      continue;
    }
    EXPECT_EQ(ack.hello_ack().error(), "");
    for (uint64_t until : {100, 50}) {
      remote::ToPeer adv;
      adv.mutable_advance()->set_until_ns(until);
      ASSERT_TRUE(remote::WriteFrame(s, adv, &detail));
      remote::FromPeer reply;
      const auto r = remote::ReadFrame(io, s, &reply, std::chrono::milliseconds(5000), &detail);
      ASSERT_EQ(r, remote::ReadResult::kOk);
      EXPECT_EQ(reply.reply().error(), until == 100 ? "" : "asked to advance to t=50 ns, before the current t=100 ns");
    }
    peer.join();
    EXPECT_TRUE(served.ok()) << served.message();
    EXPECT_EQ(bad.message(), "asked to advance to t=50 ns, before the current t=100 ns");
  }
}

TEST(RemoteUntrusted, CommandLineExitCodes) {
  std::string err;
  EXPECT_EQ(testing::RunCli("peer --listen=127.0.0.1:abc", &err), 2);
  EXPECT_NE(err.find("--listen = \"127.0.0.1:abc\": port = \"abc\""), std::string::npos) << err;
}

}  // namespace
}  // namespace orrery
