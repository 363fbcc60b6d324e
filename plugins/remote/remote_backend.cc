#include "plugins/remote/remote_backend.h"

#include <utility>  // before Boost.Asio under C++20

#include <boost/asio.hpp>

#include <cstdint>
#include <exception>
#include <new>
#include <set>
#include <unordered_map>
#include <variant>

#include "core/parse.h"
#include "plugins/remote/endpoint.h"
#include "plugins/remote/framing.h"
#include "plugins/remote/peer_checks.h"
#include "plugins/remote/peer_text.h"
#include "plugins/remote/remote.pb.h"

namespace orrery {

namespace {

using remote::Printable;
using remote::ReadFrame;
using remote::ReadResult;
using remote::WriteFrame;

constexpr uint32_t kProtocolVersion = 1;
constexpr uint32_t kSync = 1;

// A connected stream: TCP or Unix-domain.
class Connection {
 public:
  // `endpoint` is already parsed; `text` is what the user gave (for errors).
  Status Connect(const remote::Endpoint& endpoint, const std::string& text) {
    boost::system::error_code ec;
    endpoint_ = text;
    if (endpoint.unix_socket) {
      unix_.emplace(io_);
      unix_->connect(boost::asio::local::stream_protocol::endpoint(endpoint.path), ec);
    } else {
      boost::asio::ip::tcp::resolver resolver(io_);
      auto results = resolver.resolve(endpoint.host, std::to_string(endpoint.port), ec);
      if (ec) {
        return Status::Invalid("--remote-endpoint = \"" + text + "\": host \"" + endpoint.host +
                               "\" does not resolve (" + ec.message() + ")");
      }
      tcp_.emplace(io_);
      boost::asio::connect(*tcp_, results, ec);
      if (!ec) tcp_->set_option(boost::asio::ip::tcp::no_delay(true), ec);
    }
    if (ec) return Status::Env("remote backend: cannot connect to " + text + ": " + ec.message());
    return Status::Ok();
  }
  bool Write(const google::protobuf::Message& m, std::string* err) {
    return tcp_ ? WriteFrame(*tcp_, m, err) : WriteFrame(*unix_, m, err);
  }
  ReadResult Read(google::protobuf::Message* m, std::chrono::milliseconds t, std::string* detail) {
    return tcp_ ? ReadFrame(io_, *tcp_, m, t, detail) : ReadFrame(io_, *unix_, m, t, detail);
  }
  const std::string& endpoint() const { return endpoint_; }

 private:
  boost::asio::io_context io_;
  std::optional<boost::asio::ip::tcp::socket> tcp_;
  std::optional<boost::asio::local::stream_protocol::socket> unix_;
  std::string endpoint_;
};

class RemoteBackend : public NetworkBackend, public EventHandler {
 public:
  RemoteBackend(const BackendContext& ctx, std::chrono::milliseconds timeout)
      : ctx_(ctx), timeout_(timeout), stats_(ctx.topology->num_dims()), checks_(ctx.topology) {}

  ~RemoteBackend() override {
    if (connected_) {
      remote::ToPeer bye;
      bye.mutable_bye();
      std::string err;
      conn_.Write(bye, &err);
    }
  }

  Status Start(const remote::Endpoint& endpoint, const std::string& text, const std::string& model) {
    ORRERY_RETURN_IF_ERROR(conn_.Connect(endpoint, text));
    connected_ = true;
    remote::ToPeer m;
    auto* hello = m.mutable_hello();
    hello->set_protocol_version(kProtocolVersion);
    hello->set_model(model);
    for (const Dim& d : ctx_.topology->dims()) {
      auto* x = hello->add_dims();
      x->set_block(BlockName(d.block));
      x->set_npus(d.npus);
      x->set_bandwidth_gbps(d.bandwidth_gbps);
      x->set_latency_ns(d.latency_ns);
      x->set_links_per_npu(d.links_per_npu);
    }
    remote::FromPeer reply;
    ORRERY_RETURN_IF_ERROR(Exchange(m, &reply, "the hello"));
    if (!reply.has_hello_ack()) return Status::Env(Who() + "answered the hello with something else");
    if (!reply.hello_ack().error().empty()) {
      return Status::Invalid(Who() + "refused: " + Printable(reply.hello_ack().error(), remote::kMaxErrorText));
    }
    if (reply.hello_ack().protocol_version() != kProtocolVersion) {
      return Status::Env(Who() + "speaks protocol " + std::to_string(reply.hello_ack().protocol_version()) +
                         ", Orrery speaks " + std::to_string(kProtocolVersion));
    }
    return Status::Ok();
  }

  void Send(int src, int dst, uint64_t bytes, uint64_t token) override {
    const Tick now = ctx_.queue->Now();
    auto* inj = pending_.add_injected();
    inj->set_token(token);
    inj->set_src(static_cast<uint32_t>(src));
    inj->set_dst(static_cast<uint32_t>(dst));
    inj->set_bytes(bytes);
    inj->set_time_ns(now);
    // A token is a message slot the system layer reuses once delivered: the map
    // stays as small as the number of messages ever in flight at once.
    in_flight_[token] = true;
    ++in_flight_count_;
    checks_.Sent(bytes);
    for (int d = 0; !peer_counts_ && d < ctx_.topology->num_dims(); ++d) {
      if (ctx_.topology->Coord(src, d) != ctx_.topology->Coord(dst, d)) {
        stats_[d].messages++;
        stats_[d].bytes += bytes;
        break;
      }
    }
    ScheduleSync(now);
  }

  void HandleEvent(uint32_t, uint64_t) override {
    const Tick now = ctx_.queue->Now();
    scheduled_.erase(now);
    if (!ctx_.failure->ok()) return;
    const bool injected = pending_.injected_size() != 0;
    remote::FromPeer reply;
    if (!AdvancePeer(now, &reply)) return;
    const auto& r = reply.reply();
    // Check the whole frame before acting on any of it: a peer is untrusted input.
    if (!CheckRefusal(r, now) || !MarkDelivered(r, now) || !CheckDimsAndNext(r, now) ||
        !Check(checks_.DimLoads(r, now, Who())) ||
        !Check(checks_.Progress(r, injected, now, in_flight_count_, Who()))) {
      return;
    }
    if (r.dims_size() != 0) peer_counts_ = true;
    if (!CheckNoneLost(r.next_event_ns(), now)) return;
    for (int d = 0; d < r.dims_size(); ++d) {
      stats_[d].messages = r.dims(d).messages();
      stats_[d].bytes = r.dims(d).bytes();
      stats_[d].busy_ns = r.dims(d).busy_ns();
    }
    for (const auto& d : r.delivered()) ctx_.sink->HandleEvent(ctx_.delivered_kind, d.token());
    const uint64_t next = r.next_event_ns();
    if (next != UINT64_MAX) ScheduleSync(next);
  }

  const std::vector<DimStats>& dim_stats() const override { return stats_; }

  // Asked once, after the run (--link-stats): one more round trip. A peer that
  // fails it stores the error in the run's failure status.
  std::vector<LinkStat> Links() const override {
    std::vector<LinkStat> out;
    if (!ctx_.failure->ok()) return out;
    remote::ToPeer m;
    m.mutable_links();
    remote::FromPeer reply;
    Status st = Exchange(m, &reply, "the request for link statistics");
    if (st.ok() && !reply.has_links()) {
      st = Status::Env(Who() + "answered the request for link statistics with something else");
    }
    if (st.ok()) st = checks_.Links(reply.links(), Who());
    if (!st.ok()) {
      *ctx_.failure = st;
      return out;
    }
    for (const auto& l : reply.links().links()) {  // names made printable: they reach the report
      out.push_back(
          LinkStat{Printable(l.name(), remote::kMaxLinkName), static_cast<int>(l.dim()), l.bytes(), l.busy_ns()});
    }
    return out;
  }

 private:
  // A peer that breaks the protocol: the run stops with this error (exit 1: the
  // environment, not the user's inputs, is at fault).
  void Fail(const std::string& message) { *ctx_.failure = Status::Env(message); }
  bool Check(const Status& st) {
    if (!st.ok()) *ctx_.failure = st;
    return st.ok();
  }

  std::string Who() const { return "remote backend peer at " + conn_.endpoint() + " "; }

  // Sends the pending injections with an advance to `now`; false (the run's
  // failure set) when the peer does not answer it with a reply.
  bool AdvancePeer(Tick now, remote::FromPeer* reply) {
    remote::ToPeer m;
    *m.mutable_advance() = std::move(pending_);
    pending_.Clear();
    m.mutable_advance()->set_until_ns(now);
    checks_.Reached(now);
    Status st = Exchange(m, reply, "an advance to t=" + std::to_string(now) + " ns");
    if (!st.ok()) {
      *ctx_.failure = st;
      return false;
    }
    if (!reply->has_reply()) {
      Fail(Who() + "answered the advance to t=" + std::to_string(now) + " ns with something else");
      return false;
    }
    return true;
  }

  // Marks each delivery no longer in flight; false (failed) at the first that
  // is not at `now` or not of a message in flight.
  bool MarkDelivered(const remote::AdvanceReply& r, Tick now) {
    for (const auto& d : r.delivered()) {
      const std::string token = "token " + std::to_string(d.token());
      if (d.time_ns() != now) {
        Fail(Who() + "delivered " + token + " at t=" + std::to_string(d.time_ns()) +
             " ns while asked to advance to t=" + std::to_string(now) +
             " ns (a conservative peer delivers exactly at the times it reaches)");
        return false;
      }
      auto it = in_flight_.find(d.token());
      if (it == in_flight_.end()) {
        Fail(Who() + "delivered " + token + ", which Orrery never sent");
        return false;
      }
      if (!it->second) {
        Fail(Who() + "delivered " + token + " twice (at t=" + std::to_string(now) +
             " ns it was not in flight: already delivered and not sent again)");
        return false;
      }
      it->second = false;
      --in_flight_count_;
    }
    return true;
  }

  // Statistics for every dimension or none, and a next event after `now`.
  bool CheckDimsAndNext(const remote::AdvanceReply& r, Tick now) {
    if (r.dims_size() != 0 && r.dims_size() != ctx_.topology->num_dims()) {
      Fail(Who() + "answered the advance to t=" + std::to_string(now) + " ns with statistics for " +
           std::to_string(r.dims_size()) + " dimension(s); the network has " +
           std::to_string(ctx_.topology->num_dims()) + " dimension(s)");
      return false;
    }
    const uint64_t next = r.next_event_ns();
    if (next != UINT64_MAX && next <= now) {
      Fail(Who() + "announced its next event at t=" + std::to_string(next) + " ns, not after t=" + std::to_string(now) +
           " ns");
      return false;
    }
    return true;
  }

  // An advance the peer cannot serve (its model refused it): its reason, shown printable.
  bool CheckRefusal(const remote::AdvanceReply& r, Tick now) {
    if (r.error().empty()) return true;
    Fail(Who() + "could not advance to t=" + std::to_string(now) +
         " ns: " + Printable(r.error(), remote::kMaxErrorText));
    return false;
  }

  // A peer with nothing pending has delivered every message.
  bool CheckNoneLost(uint64_t next, Tick now) {
    if (next != UINT64_MAX || in_flight_count_ == 0) return true;
    uint64_t lost = 0;
    for (const auto& [token, flying] : in_flight_) {
      if (flying) {
        lost = token;
        break;
      }
    }
    Fail(Who() + "announced it has nothing pending at t=" + std::to_string(now) + " ns with " +
         std::to_string(in_flight_count_) + " message(s) undelivered (token " + std::to_string(lost) + " among them)");
    return false;
  }

  void ScheduleSync(Tick t) {
    if (scheduled_.insert(t).second) ctx_.queue->ScheduleAt(t, this, kSync, 0);
  }

  // One round trip; an exception (Boost, protobuf, an allocation) is an error too.
  Status Exchange(const remote::ToPeer& m, remote::FromPeer* reply, const std::string& what) const {
    try {
      return ExchangeOnce(m, reply, what);
    } catch (const std::bad_alloc&) {
      return Status::Env(Who() + "sent more than fits in memory during " + what);
    } catch (const std::exception& e) {
      return Status::Env(Who() + "connection failed during " + what + ": " + e.what());
    }
  }

  Status ExchangeOnce(const remote::ToPeer& m, remote::FromPeer* reply, const std::string& what) const {
    std::string err;
    if (!conn_.Write(m, &err)) return Status::Env(Who() + "could not be sent " + what + ": " + err);
    switch (conn_.Read(reply, timeout_, &err)) {
      case ReadResult::kOk: return Status::Ok();
      case ReadResult::kClosed: return Status::Env(Who() + "closed the connection instead of answering " + what);
      case ReadResult::kTimeout:
        return Status::Env(Who() + "did not answer " + what + " within " + std::to_string(timeout_.count()) +
                           " ms (--remote-timeout-ms)");
      case ReadResult::kGarbage: return Status::Env(Who() + "answered " + what + " with " + err);
      case ReadResult::kError: return Status::Env(Who() + "connection failed during " + what + ": " + err);
    }
    return Status::Env("unreachable");
  }

  BackendContext ctx_;
  std::chrono::milliseconds timeout_;
  mutable Connection conn_;  // Links() (const) has one more exchange
  bool connected_ = false;
  remote::Advance pending_;
  std::set<Tick> scheduled_;
  std::vector<DimStats> stats_;
  std::unordered_map<uint64_t, bool> in_flight_;  // token -> sent and not yet delivered
  uint64_t in_flight_count_ = 0;
  remote::PeerChecks checks_;  // what the peer reports, against what the run sent
  bool peer_counts_ = false;  // the peer reports its own per-dimension statistics
};

std::string Param(const BackendContext& ctx, const std::string& key, const std::string& fallback) {
  if (!ctx.params) return fallback;
  auto it = ctx.params->find(key);
  return it == ctx.params->end() || it->second.empty() ? fallback : it->second;
}

}  // namespace

void RegisterRemoteBackend(BackendRegistry* registry) {
  (void)registry->Register(
      "remote", "a network simulator in another process, over TCP or a Unix socket (--remote-endpoint)",
      [](const BackendContext& ctx) -> Result<std::unique_ptr<NetworkBackend>> {
        const std::string text = Param(ctx, "remote-endpoint", "");
        if (text.empty()) {
          return Status::Invalid("--network-backend=remote needs --remote-endpoint=host:port or unix:/path");
        }
        auto endpoint = remote::ParseEndpoint(text, "--remote-endpoint", /*allow_port_zero=*/false);
        if (!endpoint.ok()) return endpoint.status();
        auto timeout = ParseInt(Param(ctx, "remote-timeout-ms", "10000"), Where{"", 0, "--remote-timeout-ms"}, 1,
                                int64_t{24} * 3600 * 1000);
        if (!timeout.ok()) return timeout.status();
        auto b = std::make_unique<RemoteBackend>(ctx, std::chrono::milliseconds(timeout.value()));
        try {
          ORRERY_RETURN_IF_ERROR(b->Start(endpoint.value(), text, Param(ctx, "remote-model", "analytical")));
        } catch (const std::exception& e) {  // Boost and protobuf: an error, never an abort
          return Status::Env("remote backend: " + text + ": " + e.what());
        }
        return std::unique_ptr<NetworkBackend>(std::move(b));
      });
}

}  // namespace orrery
