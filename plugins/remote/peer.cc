// The reference peer: Orrery's own network models served over the remote
// protocol, so that a run through `--network-backend=remote` can be compared
// with the same model in process.
#include <utility>  // before Boost.Asio under C++20

#include <boost/asio.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "network/backend.h"
#include "plugins/remote/endpoint.h"
#include "plugins/remote/framing.h"
#include "plugins/remote/remote.pb.h"
#include "plugins/remote/remote_backend.h"

namespace orrery {

namespace {

using remote::ReadFrame;
using remote::ReadResult;
using remote::WriteFrame;

// Records deliveries of the local model.
struct Recorder : EventHandler {
  remote::AdvanceReply* reply = nullptr;
  EventQueue* queue = nullptr;
  void HandleEvent(uint32_t, uint64_t token) override {
    auto* d = reply->add_delivered();
    d->set_token(token);
    d->set_time_ns(queue->Now());
  }
};

// The peer waits for Orrery as long as it takes.
constexpr auto kWaitForOrrery = std::chrono::hours(24);

// The hello's dimensions, each checked (a bad one sets the ack's error); `npus` their product.
std::vector<Dim> DimsFromHello(const remote::Hello& hello, remote::HelloAck* ack, int64_t* npus) {
  std::vector<Dim> dims;
  for (const auto& d : hello.dims()) {
    Dim x;
    if (!BlockFromName(d.block(), &x.block)) ack->set_error("unknown building block " + d.block());
    if (d.npus() < 2 || d.npus() > (1u << 26) || !(d.bandwidth_gbps() > 0) || !(d.bandwidth_gbps() < 1e12) ||
        !(d.latency_ns() >= 0) || !(d.latency_ns() < 1e15) || d.links_per_npu() > 1024) {
      ack->set_error("dimension " + std::to_string(dims.size()) + " is out of range (npus 2..2^26, bandwidth > 0, " +
                     "latency >= 0, links per NPU <= 1024)");
    }
    *npus *= std::max<uint32_t>(1, d.npus());
    if (*npus > (int64_t{1} << 26)) ack->set_error("the network has more than 2^26 NPUs");
    x.npus = static_cast<int>(d.npus());
    x.bandwidth_gbps = d.bandwidth_gbps();
    x.latency_ns = d.latency_ns();
    x.links_per_npu = static_cast<int>(std::max<uint32_t>(1, d.links_per_npu()));
    dims.push_back(x);
  }
  if (dims.empty()) ack->set_error("the hello names no network dimension");
  return dims;
}

// The local network model a session serves, advanced as Orrery asks.
class LocalModel {
 public:
  LocalModel(const std::vector<Dim>& dims, int64_t npus) : topology_(dims), npus_(npus) { recorder_.queue = &queue_; }

  Status Open(const BackendRegistry::Entry& entry) {
    BackendContext ctx;
    ctx.queue = &queue_;
    ctx.topology = &topology_;
    ctx.sink = &recorder_;
    ctx.delivered_kind = 1;
    ctx.failure = &failure_;
    auto backend = entry.factory(ctx);
    if (!backend.ok()) return backend.status();
    backend_ = std::move(backend.value());
    return Status::Ok();
  }

  void Links(remote::LinksReply* reply) const {
    for (const LinkStat& l : backend_->Links()) {
      auto* x = reply->add_links();
      x->set_name(l.name);
      x->set_dim(static_cast<uint32_t>(l.dim));
      x->set_bytes(l.bytes);
      x->set_busy_ns(l.busy_ns);
    }
  }

  // Injects, runs to the advance's end and replies with the deliveries, the
  // next event and the dimensions' load. Orrery's frames are checked too:
  // times never go back, NPUs exist.
  Status Advance(const remote::Advance& advance, remote::AdvanceReply* reply) {
    recorder_.reply = reply;
    const uint64_t until = advance.until_ns();
    if (until < queue_.Now()) {
      return Status::Env("peer: asked to advance to t=" + std::to_string(until) +
                         " ns, before the current t=" + std::to_string(queue_.Now()) + " ns");
    }
    for (const auto& inj : advance.injected()) {
      if (Status st = CheckInjection(inj, until); !st.ok()) return st;
      queue_.AdvanceTo(inj.time_ns());  // deliveries before the injection happen first
      backend_->Send(static_cast<int>(inj.src()), static_cast<int>(inj.dst()), inj.bytes(), inj.token());
    }
    queue_.Run(advance.until_ns());
    queue_.AdvanceTo(advance.until_ns());
    const Tick next = queue_.NextTime();
    reply->set_next_event_ns(next == kTickMax ? UINT64_MAX : next);
    for (const DimStats& d : backend_->dim_stats()) {
      auto* x = reply->add_dims();
      x->set_messages(d.messages);
      x->set_bytes(d.bytes);
      x->set_busy_ns(d.busy_ns);
    }
    return Status::Ok();
  }

 private:
  Status CheckInjection(const remote::Injection& inj, uint64_t until) const {
    if (inj.time_ns() < queue_.Now() || inj.time_ns() > until) {
      return Status::Env("peer: token " + std::to_string(inj.token()) +
                         " injected at t=" + std::to_string(inj.time_ns()) +
                         " ns, outside t=" + std::to_string(queue_.Now()) + ".." + std::to_string(until) + " ns");
    }
    if (inj.src() >= static_cast<uint64_t>(npus_) || inj.dst() >= static_cast<uint64_t>(npus_)) {
      return Status::Env("peer: token " + std::to_string(inj.token()) + " goes from NPU " + std::to_string(inj.src()) +
                         " to NPU " + std::to_string(inj.dst()) + "; the network has " + std::to_string(npus_) +
                         " NPUs");
    }
    return Status::Ok();
  }

  Topology topology_;
  EventQueue queue_;
  Recorder recorder_;
  Status failure_;
  std::unique_ptr<NetworkBackend> backend_;
  int64_t npus_;
};

// After the hello: links and advances until Orrery says bye or closes.
template <typename Socket>
Status ServeRequests(boost::asio::io_context& io, Socket& sock, LocalModel& model) {
  std::string err;
  remote::ToPeer in;
  remote::FromPeer out;
  while (true) {
    in.Clear();
    const ReadResult r = ReadFrame(io, sock, &in, kWaitForOrrery, &err);
    if (r == ReadResult::kClosed) return Status::Ok();
    if (r != ReadResult::kOk) return Status::Env("peer: " + err);
    if (in.has_bye()) return Status::Ok();
    if (in.has_links()) {
      out.Clear();
      model.Links(out.mutable_links());  // an empty reply is still a LinksReply
      if (!WriteFrame(sock, out, &err)) return Status::Env("peer: " + err);
      continue;
    }
    if (!in.has_advance()) return Status::Env("peer: expected an advance");
    out.Clear();
    if (Status st = model.Advance(in.advance(), out.mutable_reply()); !st.ok()) return st;
    if (!WriteFrame(sock, out, &err)) return Status::Env("peer: " + err);
  }
}

// One connection: the hello answered (or refused), then its requests served.
template <typename Socket>
Status Session(boost::asio::io_context& io, Socket& sock) {
  std::string err;
  remote::ToPeer in;
  if (ReadFrame(io, sock, &in, kWaitForOrrery, &err) != ReadResult::kOk || !in.has_hello()) {
    return Status::Env("peer: expected a hello");
  }
  remote::FromPeer out;
  auto* ack = out.mutable_hello_ack();
  ack->set_protocol_version(1);
  ack->set_peer_name("orrery-peer");
  int64_t npus = 1;
  const std::vector<Dim> dims = DimsFromHello(in.hello(), ack, &npus);
  BackendRegistry registry;
  RegisterBuiltinBackends(&registry);
  const std::string model = in.hello().model().empty() ? "analytical" : in.hello().model();
  const BackendRegistry::Entry* entry = registry.Find(model);
  if (!entry) ack->set_error("this peer serves analytical and congestion-aware, not '" + model + "'");
  if (!ack->error().empty()) {
    WriteFrame(sock, out, &err);
    return Status::Ok();
  }
  LocalModel local(dims, npus);
  if (Status st = local.Open(*entry); !st.ok()) {
    ack->set_error(st.message());
    WriteFrame(sock, out, &err);
    return Status::Ok();
  }
  if (!WriteFrame(sock, out, &err)) return Status::Env("peer: " + err);
  return ServeRequests(io, sock, local);
}

}  // namespace

Status ServeRemotePeer(const std::string& listen, int connections,
                       const std::function<void(const std::string&)>& on_listening) {
  boost::asio::io_context io;
  boost::system::error_code ec;
  auto where = remote::ParseEndpoint(listen, "--listen", /*allow_port_zero=*/true);
  if (!where.ok()) return where.status();
  if (where->unix_socket) {
    const std::string& path = where->path;
    ::unlink(path.c_str());
    const boost::asio::local::stream_protocol::endpoint ep(path);
    boost::asio::local::stream_protocol::acceptor acc(io);
    acc.open(ep.protocol(), ec);
    if (!ec) acc.bind(ep, ec);
    if (!ec) acc.listen(boost::asio::socket_base::max_listen_connections, ec);
    if (ec) return Status::Env("peer: cannot listen on " + listen + ": " + ec.message());
    if (on_listening) on_listening(listen);
    for (int i = 0; connections <= 0 || i < connections; ++i) {
      boost::asio::local::stream_protocol::socket sock(io);
      acc.accept(sock, ec);
      if (ec) return Status::Env("peer: accept failed: " + ec.message());
      ORRERY_RETURN_IF_ERROR(Session(io, sock));
    }
    return Status::Ok();
  }
  boost::asio::ip::tcp::resolver resolver(io);
  auto resolved = resolver.resolve(where->host, std::to_string(where->port), boost::asio::ip::resolver_base::passive,
                                   ec);
  if (ec || resolved.empty()) {
    return Status::Invalid("--listen = \"" + listen + "\": host \"" + where->host + "\" does not resolve (" +
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
  for (int i = 0; connections <= 0 || i < connections; ++i) {
    boost::asio::ip::tcp::socket sock(io);
    acc.accept(sock, ec);
    if (ec) return Status::Env("peer: accept failed: " + ec.message());
    sock.set_option(boost::asio::ip::tcp::no_delay(true), ec);
    ORRERY_RETURN_IF_ERROR(Session(io, sock));
  }
  return Status::Ok();
}

}  // namespace orrery
