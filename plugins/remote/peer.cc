// The reference peer: Orrery's own network models served over the remote
// protocol, so that a run through `--network-backend=remote` can be compared
// with the same model in process.
#include <asio.hpp>

#include <cstdint>

#include "network/backend.h"
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

template <typename Socket>
Status Session(asio::io_context& io, Socket& sock) {
  const auto timeout = std::chrono::hours(24);  // the peer waits for Orrery as long as it takes
  std::string err;
  remote::ToPeer in;
  if (ReadFrame(io, sock, &in, timeout, &err) != ReadResult::kOk || !in.has_hello()) {
    return Status::Env("peer: expected a hello");
  }
  remote::FromPeer out;
  auto* ack = out.mutable_hello_ack();
  ack->set_protocol_version(1);
  ack->set_peer_name("orrery-peer");
  std::vector<Dim> dims;
  for (const auto& d : in.hello().dims()) {
    Dim x;
    if (!BlockFromName(d.block(), &x.block)) ack->set_error("unknown building block " + d.block());
    x.npus = static_cast<int>(d.npus());
    x.bandwidth_gbps = d.bandwidth_gbps();
    x.latency_ns = d.latency_ns();
    x.links_per_npu = static_cast<int>(std::max<uint32_t>(1, d.links_per_npu()));
    dims.push_back(x);
  }
  BackendRegistry registry;
  RegisterBuiltinBackends(&registry);
  const std::string model = in.hello().model().empty() ? "analytical" : in.hello().model();
  const BackendRegistry::Entry* entry = registry.Find(model);
  if (!entry) ack->set_error("this peer serves analytical and congestion-aware, not '" + model + "'");
  if (!ack->error().empty()) {
    WriteFrame(sock, out, &err);
    return Status::Ok();
  }
  Topology topology(dims);
  EventQueue queue;
  Recorder recorder;
  recorder.queue = &queue;
  Status failure;
  BackendContext ctx;
  ctx.queue = &queue;
  ctx.topology = &topology;
  ctx.sink = &recorder;
  ctx.delivered_kind = 1;
  ctx.failure = &failure;
  auto backend = entry->factory(ctx);
  if (!backend.ok()) {
    ack->set_error(backend.status().message());
    WriteFrame(sock, out, &err);
    return Status::Ok();
  }
  if (!WriteFrame(sock, out, &err)) return Status::Env("peer: " + err);
  while (true) {
    in.Clear();
    const ReadResult r = ReadFrame(io, sock, &in, timeout, &err);
    if (r == ReadResult::kClosed) return Status::Ok();
    if (r != ReadResult::kOk) return Status::Env("peer: " + err);
    if (in.has_bye()) return Status::Ok();
    if (!in.has_advance()) return Status::Env("peer: expected an advance");
    out.Clear();
    recorder.reply = out.mutable_reply();
    for (const auto& inj : in.advance().injected()) {
      queue.AdvanceTo(inj.time_ns());  // deliveries before the injection happen first
      backend.value()->Send(static_cast<int>(inj.src()), static_cast<int>(inj.dst()), inj.bytes(), inj.token());
    }
    queue.Run(in.advance().until_ns());
    queue.AdvanceTo(in.advance().until_ns());
    const Tick next = queue.NextTime();
    out.mutable_reply()->set_next_event_ns(next == kTickMax ? UINT64_MAX : next);
    if (!WriteFrame(sock, out, &err)) return Status::Env("peer: " + err);
  }
}

}  // namespace

Status ServeRemotePeer(const std::string& listen, int connections,
                       const std::function<void(const std::string&)>& on_listening) {
  asio::io_context io;
  asio::error_code ec;
  if (listen.rfind("unix:", 0) == 0) {
    const std::string path = listen.substr(5);
    ::unlink(path.c_str());
    asio::local::stream_protocol::acceptor acc(io, asio::local::stream_protocol::endpoint(path));
    if (on_listening) on_listening(listen);
    for (int i = 0; connections <= 0 || i < connections; ++i) {
      asio::local::stream_protocol::socket sock(io);
      acc.accept(sock, ec);
      if (ec) return Status::Env("peer: accept failed: " + ec.message());
      ORRERY_RETURN_IF_ERROR(Session(io, sock));
    }
    return Status::Ok();
  }
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos) return Status::Invalid("--listen = \"" + listen + "\": expected host:port or unix:/path");
  asio::ip::tcp::endpoint ep(asio::ip::make_address(listen.substr(0, colon), ec),
                             static_cast<unsigned short>(std::stoi(listen.substr(colon + 1))));
  if (ec) return Status::Invalid("--listen = \"" + listen + "\": " + ec.message());
  asio::ip::tcp::acceptor acc(io);
  acc.open(ep.protocol());
  acc.set_option(asio::ip::tcp::acceptor::reuse_address(true));
  acc.bind(ep, ec);
  if (ec) return Status::Env("peer: cannot listen on " + listen + ": " + ec.message());
  acc.listen();
  if (on_listening) {
    on_listening(listen.substr(0, colon) + ":" + std::to_string(acc.local_endpoint().port()));
  }
  for (int i = 0; connections <= 0 || i < connections; ++i) {
    asio::ip::tcp::socket sock(io);
    acc.accept(sock, ec);
    if (ec) return Status::Env("peer: accept failed: " + ec.message());
    sock.set_option(asio::ip::tcp::no_delay(true));
    ORRERY_RETURN_IF_ERROR(Session(io, sock));
  }
  return Status::Ok();
}

}  // namespace orrery
