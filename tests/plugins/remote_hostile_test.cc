// The remote protocol's two untrusted ends (issue 31). Orrery against a
// hostile peer: progress-free round trips are bounded, impossible statistics
// refused, the peer's text made printable and capped, a refused advance
// reported. The reference peer against a hostile client: every hello field is
// range-checked, a delivery past 2^64 ns is refused, a bad session is logged
// and the peer serves on, its socket path is checked before anything is
// removed. Each hostile end is a thread speaking the framing.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <utility>  // before Boost.Asio under C++20

#include <boost/asio.hpp>
#include <fstream>
#include <functional>
#include <future>
#include <mutex>
#include <thread>

#include "gen/toy_traces.h"
#include "plugins/remote/framing.h"
#include "plugins/remote/peer.h"
#include "plugins/remote/peer_text.h"
#include "plugins/remote/remote.pb.h"
#include "plugins/remote/remote_backend.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

using boost::asio::ip::tcp;
using remote::ReadResult;
constexpr auto kWait = std::chrono::milliseconds(10000);

BackendRegistry WithRemote() {
  BackendRegistry r = DefaultBackends();
  RegisterRemoteBackend(&r);
  return r;
}

// One 1 MiB collective of `kind` on a 4-NPU ring through `endpoint` (the
// remote backend; another backend name runs in process).
Result<RunReport> RunOn(const std::string& backend, const std::string& endpoint, const std::string& model,
                        CollectiveKind kind = CollectiveKind::kAllReduce, bool link_stats = false) {
  testing::TempDir d;
  d.Write("system.json", R"({"preferred-dataset-splits": 1, "all-to-all-implementation": ["direct"]})");
  EXPECT_TRUE(WriteSingleCollectiveTraces(4, kind, 1 << 20, d.File("trace")).ok());
  RunConfig c;
  c.files.workload_prefix = d.File("trace");
  c.files.network = "Ring(4,50GB/s,500ns)";
  c.files.system = d.File("system.json");
  c.run.backend = backend;
  c.observe.link_stats = link_stats;
  if (backend == "remote") {
    c.run.backend_params["remote-endpoint"] = endpoint;
    c.run.backend_params["remote-model"] = model;
    c.run.backend_params["remote-timeout-ms"] = "5000";
  }
  return RunSimulation(c, WithRemote());
}

Status RunAgainst(const std::string& endpoint, bool link_stats = false, const std::string& model = "analytical") {
  auto r = RunOn("remote", endpoint, model, CollectiveKind::kAllReduce, link_stats);
  return r.ok() ? Status::Ok() : r.status();
}

void ExpectPeerError(const Status& st, const std::string& endpoint, const std::string& text) {
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kEnvironment) << st.message();
  EXPECT_NE(st.message().find("remote backend peer at " + endpoint + " "), std::string::npos) << st.message();
  EXPECT_NE(st.message().find(text), std::string::npos) << st.message();
}

// Answers one frame after the hello (the answer starts as an idle AdvanceReply).
using Script = std::function<void(const remote::ToPeer& in, int n, remote::FromPeer* out)>;

// A hostile peer on 127.0.0.1: answers the hello with `ack`, then every frame
// with `script` until Orrery says bye or closes.
class ScriptedPeer {
 public:
  ScriptedPeer(remote::HelloAck ack, Script script) {
    std::promise<std::string> where;
    auto fut = where.get_future();
    thread_ = std::thread([ack, script, w = std::move(where)]() mutable {
      boost::asio::io_context io;
      tcp::acceptor acc(io, tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
      w.set_value("127.0.0.1:" + std::to_string(acc.local_endpoint().port()));
      tcp::socket s(io);
      acc.accept(s);
      std::string detail;
      remote::ToPeer in;
      if (remote::ReadFrame(io, s, &in, kWait, &detail) != ReadResult::kOk) return;
      remote::FromPeer out;
      *out.mutable_hello_ack() = ack;
      if (!remote::WriteFrame(s, out, &detail)) return;
      for (int n = 0;; ++n) {
        in.Clear();
        if (remote::ReadFrame(io, s, &in, kWait, &detail) != ReadResult::kOk || in.has_bye()) return;
        out.Clear();
        out.mutable_reply()->set_next_event_ns(UINT64_MAX);
        script(in, n, &out);
        if (!remote::WriteFrame(s, out, &detail)) return;
      }
    });
    endpoint_ = fut.get();
  }
  ~ScriptedPeer() { thread_.join(); }
  const std::string& endpoint() const { return endpoint_; }

 private:
  std::thread thread_;
  std::string endpoint_;
};

remote::HelloAck Ack(const std::string& error = "") {
  remote::HelloAck ack;
  ack.set_protocol_version(1);
  ack.set_error(error);
  return ack;
}

// The reference peer behind a relay that rewrites its answers with `tamper`:
// a peer that is right about everything but what the test changes.
class TamperingPeer {
 public:
  explicit TamperingPeer(std::function<void(remote::FromPeer*)> tamper) {
    std::promise<std::string> up;
    auto up_fut = up.get_future();
    peer_ = std::thread([p = std::move(up)]() mutable {
      ServeRemotePeer("127.0.0.1:0", 1, [&](const std::string& e) { p.set_value(e); });
    });
    const std::string upstream = up_fut.get();
    std::promise<std::string> where;
    auto fut = where.get_future();
    relay_ = std::thread([upstream, tamper, w = std::move(where)]() mutable {
      boost::asio::io_context io;
      tcp::acceptor acc(io, tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
      w.set_value("127.0.0.1:" + std::to_string(acc.local_endpoint().port()));
      tcp::socket down(io), up(io);
      acc.accept(down);
      up.connect(tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"),
                               static_cast<uint16_t>(std::stoi(upstream.substr(upstream.rfind(':') + 1)))));
      Relay(io, down, up, tamper);
    });
    endpoint_ = fut.get();
  }
  ~TamperingPeer() {
    relay_.join();
    peer_.join();
  }
  const std::string& endpoint() const { return endpoint_; }

 private:
  static void Relay(boost::asio::io_context& io, tcp::socket& down, tcp::socket& up,
                    const std::function<void(remote::FromPeer*)>& tamper) {
    std::string detail;
    while (true) {
      remote::ToPeer in;
      if (remote::ReadFrame(io, down, &in, kWait, &detail) != ReadResult::kOk) break;
      if (!remote::WriteFrame(up, in, &detail) || in.has_bye()) break;
      remote::FromPeer out;
      if (remote::ReadFrame(io, up, &out, kWait, &detail) != ReadResult::kOk) break;
      tamper(&out);
      if (!remote::WriteFrame(down, out, &detail)) break;
    }
    boost::system::error_code ec;
    up.close(ec);  // the reference peer's session ends
  }
  std::thread peer_, relay_;
  std::string endpoint_;
};

// --- Orrery against a hostile peer -------------------------------------------

// Never delivers, always comes back one tick later: the run ends (exit 1)
// after the documented number of progress-free round trips.
TEST(RemoteHostilePeer, RoundTripsWithoutProgressAreBounded) {
  ScriptedPeer peer(Ack(), [](const remote::ToPeer& in, int, remote::FromPeer* out) {
    out->mutable_reply()->set_next_event_ns(in.advance().until_ns() + 1);
  });
  Status st = RunAgainst(peer.endpoint());
  ExpectPeerError(st, peer.endpoint(), "answered 100001 advances in a row (the last to t=100011 ns");
  EXPECT_NE(st.message().find("announcing its next event at t=100012 ns) without a delivery"), std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("the limit is 100000 round trips without progress"), std::string::npos) << st.message();
}

TEST(RemoteHostilePeer, ImpossibleDimensionStatistics) {
  struct Case {
    std::function<void(remote::DimLoad*)> lie;
    std::string expect;
  };
  for (const Case& c : std::vector<Case>{
           {[](remote::DimLoad* d) { d->set_bytes(UINT64_MAX); },
            "reported dims[0].bytes = 18446744073709551615 at t=10 ns: more than the run could have put on the "
            "dimension; allowed: at most "},
           {[](remote::DimLoad* d) { d->set_busy_ns(UINT64_MAX); },
            "reported dims[0].busy_ns = 18446744073709551615 at t=10 ns"},
           {[](remote::DimLoad* d) { d->set_messages(1u << 30); }, "reported dims[0].messages = 1073741824 at t=10"}}) {
    TamperingPeer peer([&c](remote::FromPeer* out) {
      if (out->has_reply() && out->reply().dims_size() == 1) c.lie(out->mutable_reply()->mutable_dims(0));
    });
    Status st = RunAgainst(peer.endpoint());
    ExpectPeerError(st, peer.endpoint(), c.expect);
    EXPECT_NE(st.message().find("Orrery sent so far, each over at most 4 links of dimension 0 (Ring of 4 NPUs))"),
              std::string::npos)
        << st.message();
  }
}

TEST(RemoteHostilePeer, ImpossibleLinkStatistics) {
  struct Case {
    std::function<void(remote::LinkLoad*)> lie;
    std::string expect;
  };
  for (const Case& c : std::vector<Case>{
           {[](remote::LinkLoad* l) { l->set_bytes(UINT64_MAX); },
            "reported links[0] (\"dim0 Ring npu 0 -> npu 1\") bytes = 18446744073709551615: more than the run sent; "
            "allowed: at most 6291456"},
           {[](remote::LinkLoad* l) { l->set_busy_ns(UINT64_MAX); },
            "reported links[0] (\"dim0 Ring npu 0 -> npu 1\") busy_ns = 18446744073709551615: busy longer than the "
            "run; allowed: at most "},
           {[](remote::LinkLoad* l) { l->set_dim(7); }, "on dimension 7; the network has 1 dimension(s)"}}) {
    TamperingPeer peer([&c](remote::FromPeer* out) {
      if (out->has_links() && out->links().links_size() > 0) c.lie(out->mutable_links()->mutable_links(0));
    });
    Status st = RunAgainst(peer.endpoint(), /*link_stats=*/true, "congestion-aware");
    ExpectPeerError(st, peer.endpoint(), c.expect);
  }
  TamperingPeer many([](remote::FromPeer* out) {
    if (!out->has_links()) return;
    for (int i = 0; i < 20; ++i) *out->mutable_links()->add_links() = out->links().links(0);
  });
  ExpectPeerError(RunAgainst(many.endpoint(), true, "congestion-aware"), many.endpoint(),
                  "links; the network has at most 8");
}

// The bounds hold for what the reference peer's models really report: an
// all-to-all whose congestion-unaware load is 437 % of the links' capacity,
// and per-link statistics, give the in-process report.
TEST(RemoteHostilePeer, TheReferencePeersStatisticsPass) {
  for (const std::string model : {"analytical", "congestion-aware"}) {
    for (CollectiveKind kind : {CollectiveKind::kAllToAll, CollectiveKind::kAllReduce}) {
      auto local = RunOn(model, "", "", kind, true);
      ASSERT_TRUE(local.ok()) << local.status().message();
      std::thread t;
      std::promise<std::string> where;
      auto fut = where.get_future();
      t = std::thread([&] { ServeRemotePeer("127.0.0.1:0", 1, [&](const std::string& e) { where.set_value(e); }); });
      auto remote = RunOn("remote", fut.get(), model, kind, true);
      t.join();
      ASSERT_TRUE(remote.ok()) << model << ": " << remote.status().message();
      EXPECT_EQ(local->dims[0].busy_ns, remote->dims[0].busy_ns) << model;
      EXPECT_EQ(local->dims[0].bytes, remote->dims[0].bytes) << model;
      EXPECT_EQ(local->links.size(), remote->links.size()) << model;
    }
  }
}

// (proto3 strings are UTF-8 on the wire: invalid bytes never parse; RemotePrintable covers them.)
TEST(RemoteHostilePeer, ErrorTextIsPrintableAndCapped) {
  const std::string head =
      "\x1b[31mred\x1b[0m\r\n\xc2\x9b"
      "2J \xe2\x80\xae\x7f";
  const std::string huge = head + std::string(10 << 20, 'A');
  ScriptedPeer peer(Ack(huge), [](const remote::ToPeer&, int, remote::FromPeer*) {});
  Status st = RunAgainst(peer.endpoint());
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kInvalidInput) << st.message().substr(0, 200);
  const std::string shown = "\\x1b[31mred\\x1b[0m\\r\\n\\u{009b}2J \\u{202e}\\x7f";
  const size_t kept = remote::kMaxErrorText - shown.size();  // the A's that fit
  EXPECT_NE(st.message().find("refused: " + shown + std::string(kept, 'A') + "\u2026 (" +
                              std::to_string(huge.size() - head.size() - kept) + " bytes more)"),
            std::string::npos)
      << st.message().substr(0, 300);
  EXPECT_LT(st.message().size(), remote::kMaxErrorText + 200);
  for (char ch : st.message()) ASSERT_GE(static_cast<unsigned char>(ch), 0x20) << st.message().substr(0, 300);
}

TEST(RemoteHostilePeer, LinkNamesArePrintableAndCapped) {
  TamperingPeer peer([](remote::FromPeer* out) {
    if (out->has_links() && out->links().links_size() > 1) {
      out->mutable_links()->mutable_links(0)->set_name("\x1b]0;owned\x07 dim0\n");
      out->mutable_links()->mutable_links(1)->set_name(std::string(5 << 20, 'L'));
    }
  });
  auto rep = RunOn("remote", peer.endpoint(), "congestion-aware", CollectiveKind::kAllReduce, true);
  ASSERT_TRUE(rep.ok()) << rep.status().message();
  std::vector<std::string> names;
  for (const LinkStat& l : rep->links) names.push_back(l.name);
  EXPECT_NE(std::find(names.begin(), names.end(), "\\x1b]0;owned\\x07 dim0\\n"), names.end());
  bool capped = false;
  for (const std::string& n : names) {
    if (n.rfind("LLL", 0) == 0) {
      capped = true;
      EXPECT_EQ(n,
                std::string(remote::kMaxLinkName, 'L') + "\u2026 (" + std::to_string((5 << 20) - 256) + " bytes more)");
    }
  }
  EXPECT_TRUE(capped);
}

// A peer that cannot serve an advance says why; Orrery ends the run with it.
TEST(RemoteHostilePeer, ARefusedAdvance) {
  ScriptedPeer peer(Ack(), [](const remote::ToPeer&, int, remote::FromPeer* out) {
    out->mutable_reply()->set_error("a delivery (token 0) would fall past 2^64 ns\x1b[2J");
  });
  ExpectPeerError(RunAgainst(peer.endpoint()), peer.endpoint(),
                  "could not advance to t=10 ns: a delivery (token 0) would fall past 2^64 ns\\x1b[2J");
}

TEST(RemotePrintable, EscapesAndCaps) {
  using remote::Printable;
  EXPECT_EQ(Printable("dim0 Ring npu 3 -> npu 4", 100), "dim0 Ring npu 3 -> npu 4");
  EXPECT_EQ(Printable("a\\b\tc\x7f\x01", 100), "a\\\\b\\tc\\x7f\\x01");
  EXPECT_EQ(Printable("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 100), "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  EXPECT_EQ(Printable("\xc3", 100), "\\xc3");                             // truncated
  EXPECT_EQ(Printable("\xe0\x80\x80", 100), "\\xe0\\x80\\x80");           // overlong
  EXPECT_EQ(Printable("\xed\xa0\x80", 100), "\\xed\\xa0\\x80");           // a surrogate
  EXPECT_EQ(Printable("\xf4\x90\x80\x80", 100), "\\xf4\\x90\\x80\\x80");  // past U+10FFFF
  EXPECT_EQ(Printable("\xc2\x9b", 100), "\\u{009b}");                     // C1 CSI
  EXPECT_EQ(Printable("abcdef", 3), "abc\u2026 (3 bytes more)");
  EXPECT_EQ(Printable("ab\x01", 3), "ab\u2026 (1 bytes more)");  // an escape does not fit: cut before it
}

// --- The reference peer against a hostile client ------------------------------

// A client of ServePeerSession over a socket pair: writes `frames`, reads
// the answers, and returns them with the session's status.
struct SessionResult {
  Status status;
  std::vector<remote::FromPeer> answers;
};
SessionResult SessionWith(const std::vector<remote::ToPeer>& frames, const std::string& raw_tail = "") {
  boost::asio::io_context io, client_io;
  boost::asio::local::stream_protocol::socket server(io), client(client_io);
  boost::asio::local::connect_pair(server, client);
  SessionResult out;
  std::thread t([&] {
    out.status = remote::ServePeerSession(io, server);
    server.close();  // as the peer does: the client sees the end
  });
  std::string detail;
  for (const auto& f : frames) {
    if (!remote::WriteFrame(client, f, &detail)) break;
    if (f.has_bye()) break;
    remote::FromPeer a;
    if (remote::ReadFrame(client_io, client, &a, kWait, &detail) != ReadResult::kOk) break;
    out.answers.push_back(a);
  }
  boost::system::error_code ec;
  if (!raw_tail.empty()) boost::asio::write(client, boost::asio::buffer(raw_tail), ec);
  client.shutdown(boost::asio::socket_base::shutdown_send, ec);
  t.join();
  return out;
}

remote::ToPeer Hello(const std::string& block, uint32_t npus, double bw, double lat, uint32_t links = 1,
                     const std::string& model = "") {
  remote::ToPeer m;
  m.mutable_hello()->set_protocol_version(1);
  m.mutable_hello()->set_model(model);
  auto* d = m.mutable_hello()->add_dims();
  d->set_block(block);
  d->set_npus(npus);
  d->set_bandwidth_gbps(bw);
  d->set_latency_ns(lat);
  d->set_links_per_npu(links);
  return m;
}

TEST(RemoteHostileClient, EveryHelloFieldIsChecked) {
  struct Case {
    remote::ToPeer hello;
    std::string expect;
  };
  remote::ToPeer two = Hello("Ring", 65536, 50, 500);
  *two.mutable_hello()->add_dims() = two.hello().dims(0);
  remote::ToPeer v2 = Hello("Ring", 4, 50, 500);
  v2.mutable_hello()->set_protocol_version(2);
  remote::ToPeer none = Hello("Ring", 4, 50, 500);
  none.mutable_hello()->clear_dims();
  for (const Case& c : std::vector<Case>{
           {Hello("Ring", 4, 1e-300, 500),
            "hello dims[0].bandwidth_gbps = 1e-300: out of range; allowed: a number >= 0.001 and <= 1e+09"},
           {Hello("Ring", 4, std::nan(""), 500), "hello dims[0].bandwidth_gbps = nan: not a finite number"},
           {Hello("Ring", 4, 50, -1), "hello dims[0].latency_ns = -1: out of range; allowed: a number >= 0"},
           {Hello("Ring", 4, 50, 1e13),
            "hello dims[0].latency_ns = 10000000000000: out of range; allowed: a number >= 0 and <= 1e+12"},
           {Hello("Ring", 4000000000u, 50, 500),
            "hello dims[0].npus = 4000000000: out of range; allowed: an integer >= 2 and <= 67108864"},
           {Hello("Ring", 1, 50, 500), "hello dims[0].npus = 1: out of range"},
           {two, "hello dims[1].npus = 65536: the network would have more than 67108864 NPUs in total"},
           {Hello("Ring", 4, 50, 500, 5000), "hello dims[0].links_per_npu = 5000: out of range"},
           {Hello("Torus\x1b[1m", 4, 50, 500),
            "hello dims[0].block = \"Torus\\x1b[1m\": unknown building block; allowed: Ring"},
           {Hello("Ring", 4, 50, 500, 1, "ns3\n"), "hello model = \"ns3\\n\": not served by this peer"},
           {v2, "hello protocol_version = 2: not spoken by this peer; allowed: 1"},
           {none, "the hello names no network dimension"},
           {Hello("FullyConnected", 8192, 50, 500, 1, "congestion-aware"), "MiB for its links; this peer has "}}) {
    if (c.expect.find("MiB") != std::string::npos) continue;  // below, with a small memory limit
    SessionResult r = SessionWith({c.hello});
    ASSERT_EQ(r.answers.size(), 1u) << c.expect;
    EXPECT_NE(r.answers[0].hello_ack().error().find(c.expect), std::string::npos) << r.answers[0].hello_ack().error();
    ASSERT_FALSE(r.status.ok());
    EXPECT_NE(r.status.message().find("refused the hello: " + c.expect), std::string::npos) << r.status.message();
  }
}

TEST(RemoteHostileClient, AModelLargerThanThePeersMemoryIsRefused) {
  boost::asio::io_context io, client_io;
  boost::asio::local::stream_protocol::socket server(io), client(client_io);
  boost::asio::local::connect_pair(server, client);
  Status served;
  remote::SessionLimits limits;
  limits.max_model_bytes = 64 << 20;
  std::thread t([&] { served = remote::ServePeerSession(io, server, limits); });
  std::string detail;
  ASSERT_TRUE(remote::WriteFrame(client, Hello("FullyConnected", 4096, 50, 500, 1, "congestion-aware"), &detail));
  remote::FromPeer ack;
  ASSERT_EQ(remote::ReadFrame(client_io, client, &ack, kWait, &detail), ReadResult::kOk);
  client.close();
  t.join();
  EXPECT_EQ(ack.hello_ack().error(),
            "the congestion-aware model of this network (4096 NPUs) needs 384 MiB for its links; this peer has 64 MiB");
}

remote::ToPeer Advance(uint64_t until, uint64_t time, uint64_t bytes, uint32_t src = 0, uint32_t dst = 1) {
  remote::ToPeer m;
  m.mutable_advance()->set_until_ns(until);
  auto* inj = m.mutable_advance()->add_injected();
  inj->set_token(5);
  inj->set_src(src);
  inj->set_dst(dst);
  inj->set_bytes(bytes);
  inj->set_time_ns(time);
  return m;
}

// A delivery past 2^64 ns (the slowest link allowed, late in time, or a huge
// message) is refused in the reply with the numbers, not dropped.
TEST(RemoteHostileClient, ADeliveryPast2To64IsRefused) {
  struct Case {
    remote::ToPeer hello, advance;
    std::string expect;
  };
  const uint64_t late = UINT64_MAX - 1000;
  for (const Case& c : std::vector<Case>{
           {Hello("Ring", 4, 1e-3, 500), Advance(late, late, 1 << 20),
            "a delivery (token 5) would fall past 2^64 ns: t=18446744073709550615 ns + a delay of 976563000 ns"},
           {Hello("Ring", 4, 50, 500, 1, "congestion-aware"), Advance(late, late, 1 << 30),
            "a delivery (token 5) would fall past 2^64 ns (scheduled at t=18446744073709550615 ns)"},
           {Hello("Ring", 4, 50, 500), Advance(10, 10, UINT64_MAX),
            "token 5 has bytes = 18446744073709551615; allowed: at most 281474976710656"},
           {Hello("Ring", 4, 50, 500), Advance(10, 10, 64, 0, 9), "token 5 goes from NPU 0 to NPU 9"}}) {
    SessionResult r = SessionWith({c.hello, c.advance});
    ASSERT_EQ(r.answers.size(), 2u) << c.expect;
    EXPECT_EQ(r.answers[0].hello_ack().error(), "");
    EXPECT_NE(r.answers[1].reply().error().find(c.expect), std::string::npos) << r.answers[1].reply().error();
    EXPECT_EQ(r.answers[1].reply().delivered_size(), 0);
    ASSERT_FALSE(r.status.ok());
    EXPECT_NE(r.status.message().find(c.expect), std::string::npos) << r.status.message();
  }
}

// A run whose message would be delivered past 2^64 ns (18446 days of compute,
// then 16 TiB over a 0.001 GB/s link): in process an error, and through the
// reference peer too (the peer used to drop the message and report idle).
TEST(RemoteHostileClient, ARunWhoseDeliveryPasses2To64) {
  testing::TempDir d;
  d.Write("network.yml", testing::NetworkYaml("Ring", 2, 0.001, 500));
  d.Write("system.json", R"({"preferred-dataset-splits": 1})");
  constexpr int kDays = 18446;  // 18446 * 1e12 us: 2^64 ns less 7.4e14 ns
  testing::WriteTraces(d, 2, [](int rank) {
    std::vector<ChakraProtoMsg::Node> nodes;
    if (rank == 1) {
      auto n = testing::MakeNode(0, ChakraProtoMsg::COMM_RECV_NODE);
      testing::SetAttr(&n, "comm_src", uint64_t{0});
      testing::SetAttr(&n, "comm_size", uint64_t{1} << 44);
      testing::SetAttr(&n, "comm_tag", uint64_t{0});
      return std::vector<ChakraProtoMsg::Node>{n};
    }
    for (int i = 0; i < kDays; ++i) {
      auto n = testing::MakeNode(i, ChakraProtoMsg::COMP_NODE);
      n.set_duration_micros(1000000000000ull);
      if (i > 0) n.add_data_deps(i - 1);
      nodes.push_back(n);
    }
    auto send = testing::MakeNode(kDays, ChakraProtoMsg::COMM_SEND_NODE);
    send.add_data_deps(kDays - 1);
    testing::SetAttr(&send, "comm_dst", uint64_t{1});
    testing::SetAttr(&send, "comm_size", uint64_t{1} << 44);
    testing::SetAttr(&send, "comm_tag", uint64_t{0});
    nodes.push_back(send);
    return nodes;
  });
  auto local = testing::RunIn(d);
  ASSERT_FALSE(local.ok());
  std::thread t;
  std::promise<std::string> where;
  auto fut = where.get_future();
  t = std::thread([&] { ServeRemotePeer("127.0.0.1:0", 1, [&](const std::string& e) { where.set_value(e); }); });
  RunConfig c;
  c.files.workload_prefix = d.File("trace");
  c.files.network = d.File("network.yml");
  c.files.system = d.File("system.json");
  c.run.backend = "remote";
  const std::string ep = fut.get();
  c.run.backend_params["remote-endpoint"] = ep;
  auto remote = RunSimulation(c, WithRemote());
  t.join();
  ASSERT_FALSE(remote.ok());
  ExpectPeerError(remote.status(), ep, "could not advance to t=");
  EXPECT_NE(remote.status().message().find("ns: a delivery (token 0) would fall past 2^64 ns: t="), std::string::npos)
      << remote.status().message();
  EXPECT_NE(remote.status().message().find(" ns + a delay of 16384000000000500 ns"), std::string::npos)
      << remote.status().message() << "\nin process: " << local.status().message();
}

TEST(RemoteHostileClient, GarbageAndSilenceEndOnlyTheSession) {
  EXPECT_NE(SessionWith({}, std::string("\x03\x00\x00\x00\xff\xff\xff", 7))
                .status.message()
                .find("the client sent bytes that do not parse as a protocol message as its hello"),
            std::string::npos);
  EXPECT_NE(SessionWith({}, std::string("\xff\xff\xff\xff", 4))
                .status.message()
                .find("the client sent a frame length over 64 MiB as its hello"),
            std::string::npos);
  EXPECT_NE(SessionWith({}).status.message().find("the client closed the connection before its hello"),
            std::string::npos);
  remote::ToPeer adv;
  adv.mutable_advance()->set_until_ns(5);
  EXPECT_NE(SessionWith({adv}).status.message().find("the client's first message is not a hello"), std::string::npos);
  SessionResult twice = SessionWith({Hello("Ring", 4, 50, 500), Hello("Ring", 4, 50, 500)});
  EXPECT_NE(twice.status.message().find("the client sent a second hello"), std::string::npos);
  SessionResult fine = SessionWith({Hello("Ring", 4, 50, 500), Advance(10, 10, 1024)});
  EXPECT_TRUE(fine.status.ok()) << fine.status.message();
}

// --connections=N: bad sessions are logged, count, and the peer serves on.
TEST(RemoteHostileClient, ThePeerServesOnAfterBadSessions) {
  std::promise<std::string> where;
  auto fut = where.get_future();
  std::mutex mu;
  std::vector<std::string> bad;
  Status served = Status::Env("not run");
  std::thread peer([&] {
    served = ServeRemotePeer(
        "127.0.0.1:0", 4, [&](const std::string& e) { where.set_value(e); },
        [&](const std::string& client, const Status& why) {
          std::lock_guard<std::mutex> lock(mu);
          bad.push_back(client + ": " + why.message());
        });
  });
  const std::string ep = fut.get();
  const uint16_t port = static_cast<uint16_t>(std::stoi(ep.substr(ep.rfind(':') + 1)));
  boost::asio::io_context io;
  for (const std::string& bytes : {std::string(), std::string("\x05\x00\x00\x00garbage", 11)}) {
    tcp::socket s(io);
    s.connect(tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), port));
    boost::system::error_code ec;
    boost::asio::write(s, boost::asio::buffer(bytes), ec);
    s.close();
  }
  EXPECT_TRUE(RunAgainst(ep).ok());
  EXPECT_TRUE(RunAgainst(ep, true, "congestion-aware").ok());
  peer.join();
  EXPECT_TRUE(served.ok()) << served.message();
  ASSERT_EQ(bad.size(), 2u);
  EXPECT_NE(bad[0].find("client 1 (127.0.0.1:"), std::string::npos) << bad[0];
  EXPECT_NE(bad[0].find("the client closed the connection before its hello"), std::string::npos) << bad[0];
  EXPECT_NE(bad[1].find("client 2 (127.0.0.1:"), std::string::npos) << bad[1];
  EXPECT_NE(bad[1].find("the client sent bytes that do not parse"), std::string::npos) << bad[1];
}

// --- Socket paths ----------------------------------------------------------------

TEST(RemoteSocketPath, APathOverTheKernelsLimitIsRefused) {
  const std::string path = "/tmp/" + std::string(120, 'x') + ".sock";
  Status client = RunAgainst("unix:" + path);
  ASSERT_FALSE(client.ok());
  EXPECT_EQ(client.code(), StatusCode::kInvalidInput);
  EXPECT_NE(client.message().find("--remote-endpoint = \"unix:" + path +
                                  "\": the socket path is 130 bytes long; allowed: at most 107 bytes "
                                  "(sizeof(sockaddr_un::sun_path) - 1)"),
            std::string::npos)
      << client.message();
  Status peer = ServeRemotePeer("unix:" + path, 1, nullptr);
  ASSERT_FALSE(peer.ok());
  EXPECT_EQ(peer.code(), StatusCode::kInvalidInput);
  EXPECT_NE(peer.message().find("--listen = \"unix:" + path + "\": the socket path is 130 bytes long"),
            std::string::npos)
      << peer.message();
  std::string err;
  EXPECT_EQ(testing::RunCli("peer --connections=1 --listen=unix:" + path, &err), 2);
  EXPECT_NE(err.find("allowed: at most 107 bytes"), std::string::npos) << err;
  EXPECT_EQ(testing::RunCli("run --example=default --network-backend=remote --remote-endpoint=unix:" + path, &err), 2);
  EXPECT_NE(err.find("allowed: at most 107 bytes"), std::string::npos) << err;
  // 107 bytes is the longest the kernel takes: accepted (nothing listens there).
  const std::string longest = "/tmp/" + std::string(102, 'y');
  Status fits = RunAgainst("unix:" + longest);
  EXPECT_NE(fits.message().find("cannot connect to unix:" + longest), std::string::npos) << fits.message();
}

// `peer --listen=unix:PATH` removes only a socket nobody listens on.
TEST(RemoteSocketPath, OnlyAStaleSocketIsRemoved) {
  testing::TempDir d;
  d.Write("precious.txt", "keep me\n");
  std::string err;
  EXPECT_EQ(testing::RunCli("peer --connections=1 --listen=unix:" + d.File("precious.txt"), &err), 1);
  EXPECT_NE(err.find("peer: cannot listen on unix:" + d.File("precious.txt") + ": " + d.File("precious.txt") +
                     " exists and is a regular file; the peer removes only a socket nobody listens on"),
            std::string::npos)
      << err;
  EXPECT_EQ(testing::ReadFileText(d.File("precious.txt")), "keep me\n");
  ASSERT_EQ(mkdir(d.File("dir").c_str(), 0700), 0);
  Status dir = ServeRemotePeer("unix:" + d.File("dir"), 1, nullptr);
  EXPECT_NE(dir.message().find(d.File("dir") + " exists and is a directory"), std::string::npos) << dir.message();

  // A live peer's socket: the second peer refuses it and the first still
  // serves (the second's probe is a session of the first that ends at once).
  const std::string sock = d.File("peer.sock");
  std::promise<std::string> where;
  auto fut = where.get_future();
  std::thread first([&] { ServeRemotePeer("unix:" + sock, 2, [&](const std::string& e) { where.set_value(e); }); });
  fut.get();
  Status second = ServeRemotePeer("unix:" + sock, 1, nullptr);
  EXPECT_EQ(second.code(), StatusCode::kEnvironment);
  EXPECT_NE(second.message().find(sock + " is a socket another process is listening on"), std::string::npos)
      << second.message();
  EXPECT_TRUE(RunAgainst("unix:" + sock).ok());
  first.join();

  // The first peer's socket file stays behind: stale, so the next peer replaces it.
  struct stat st {};
  ASSERT_EQ(lstat(sock.c_str(), &st), 0);
  ASSERT_TRUE(S_ISSOCK(st.st_mode));
  std::promise<std::string> again;
  auto again_fut = again.get_future();
  std::thread next([&] { ServeRemotePeer("unix:" + sock, 1, [&](const std::string& e) { again.set_value(e); }); });
  again_fut.get();
  EXPECT_TRUE(RunAgainst("unix:" + sock).ok());
  next.join();
}

// `orrery peer --connections=0` as a process: a client that disconnects and
// one that sends garbage are logged, and the next run is served.
TEST(RemoteHostileClient, ThePeerCommandServesForever) {
  testing::TempDir d;
  const std::string sock = d.File("p.sock"), log = d.File("peer.log");
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const std::string listen = "--listen=unix:" + sock;
    if (!freopen(log.c_str(), "w", stderr)) _exit(3);
    execl(ORRERY_BIN, ORRERY_BIN, "peer", listen.c_str(), "--connections=0", static_cast<char*>(nullptr));
    _exit(4);
  }
  struct stat st {};
  for (int i = 0; i < 500 && lstat(sock.c_str(), &st) != 0; ++i) usleep(10000);
  boost::asio::io_context io;
  for (const std::string& bytes : {std::string(), std::string("\x05\x00\x00\x00garbage", 11)}) {
    boost::asio::local::stream_protocol::socket s(io);
    boost::system::error_code ec;
    s.connect(boost::asio::local::stream_protocol::endpoint(sock), ec);
    ASSERT_FALSE(ec) << ec.message();
    boost::asio::write(s, boost::asio::buffer(bytes), ec);
    s.close();
  }
  Status run = RunAgainst("unix:" + sock);
  EXPECT_TRUE(run.ok()) << run.message();
  int status = 0;
  EXPECT_EQ(waitpid(pid, &status, WNOHANG), 0);  // still serving
  kill(pid, SIGTERM);
  waitpid(pid, &status, 0);
  const std::string text = testing::ReadFileText(log);
  EXPECT_NE(text.find("orrery peer: client 1 (pid "), std::string::npos) << text;
  EXPECT_NE(text.find("the client closed the connection before its hello (session ended; serving on)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("orrery peer: client 2 (pid "), std::string::npos) << text;
  EXPECT_NE(text.find("the client sent bytes that do not parse as a protocol message as its hello"), std::string::npos)
      << text;
}

}  // namespace
}  // namespace orrery
