// The reference peer's sessions: Orrery's own network models served over the
// remote protocol, so that a run through `--network-backend=remote` can be
// compared with the same model in process. A client is untrusted input: every
// field of its hello is checked against the ranges Orrery's own readers use,
// every advance before the model sees it, and a session that goes wrong ends
// with its reason (peer_listen.cc logs it and serves on).
#include "plugins/remote/peer.h"

#include <unistd.h>

#include <memory>
#include <new>
#include <vector>

#include "core/limits.h"
#include "network/backend.h"
#include "plugins/remote/framing.h"
#include "plugins/remote/peer_text.h"
#include "plugins/remote/remote.pb.h"

namespace orrery {

namespace {

using remote::Printable;
using remote::ReadFrame;
using remote::ReadResult;
using remote::WriteFrame;

constexpr uint32_t kProtocolVersion = 1;

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

// One dimension of the hello, each field in the range Orrery's readers allow.
Status CheckHelloDim(const remote::Dim& d, size_t i, int64_t* npus, Dim* x) {
  const std::string at = "hello dims[" + std::to_string(i) + "].";
  if (!BlockFromName(d.block(), &x->block)) {
    return ValueError(Where{"", 0, at + "block"}, "\"" + Printable(d.block(), 64) + "\"", "unknown building block",
                      "Ring, RingUni, Mesh, FullyConnected, Switch");
  }
  if (d.npus() < 2 || d.npus() > kMaxNpus) {
    return ValueError(Where{"", 0, at + "npus"}, std::to_string(d.npus()), "out of range",
                      DescribeIntRange(2, kMaxNpus));
  }
  if (!MulWithin(*npus, d.npus(), kMaxNpus, npus)) {
    return ValueError(Where{"", 0, at + "npus"}, std::to_string(d.npus()),
                      "the network would have more than " + std::to_string(kMaxNpus) + " NPUs in total",
                      "a product of the dimensions' NPU counts <= " + std::to_string(kMaxNpus));
  }
  ORRERY_RETURN_IF_ERROR(CheckDouble(d.bandwidth_gbps(), Where{"", 0, at + "bandwidth_gbps"}, kBandwidthGBps));
  ORRERY_RETURN_IF_ERROR(CheckDouble(d.latency_ns(), Where{"", 0, at + "latency_ns"}, kLatencyNs));
  if (d.links_per_npu() > kMaxLinksPerNpu) {  // 0: not set, one link
    return ValueError(Where{"", 0, at + "links_per_npu"}, std::to_string(d.links_per_npu()), "out of range",
                      DescribeIntRange(0, kMaxLinksPerNpu) + " (0: 1)");
  }
  x->npus = static_cast<int>(d.npus());
  x->bandwidth_gbps = d.bandwidth_gbps();
  x->latency_ns = d.latency_ns();
  x->links_per_npu = static_cast<int>(std::max<uint32_t>(1, d.links_per_npu()));
  return Status::Ok();
}

// The hello's protocol version and dimensions; `npus` their product.
Status CheckHello(const remote::Hello& hello, std::vector<Dim>* dims, int64_t* npus) {
  if (hello.protocol_version() != kProtocolVersion) {
    return ValueError(Where{"", 0, "hello protocol_version"}, std::to_string(hello.protocol_version()),
                      "not spoken by this peer", std::to_string(kProtocolVersion));
  }
  if (hello.dims_size() == 0) return Status::Invalid("the hello names no network dimension; allowed: 1 or more");
  *npus = 1;
  for (int i = 0; i < hello.dims_size(); ++i) {
    Dim x;
    ORRERY_RETURN_IF_ERROR(CheckHelloDim(hello.dims(i), static_cast<size_t>(i), npus, &x));
    dims->push_back(x);
  }
  return Status::Ok();
}

// The memory the model's per-link state takes (the congestion-aware model
// keeps 24 bytes per directed link; the analytical one none).
uint64_t ModelBytes(const std::vector<Dim>& dims, int64_t npus, const std::string& model) {
  if (model != "congestion-aware") return 0;
  uint64_t links = 0;
  for (const Dim& d : dims) links += static_cast<uint64_t>(npus) * (d.block == Block::kFullyConnected ? d.npus : 2);
  return links * 24;
}

uint64_t PhysicalBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
  return pages > 0 && size > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(size) : 0;
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
  // times never go back, NPUs exist, sizes are in range, and no delivery
  // falls past 2^64 ns (the reply then says so in its error).
  Status Advance(const remote::Advance& advance, remote::AdvanceReply* reply) {
    recorder_.reply = reply;
    const uint64_t until = advance.until_ns();
    if (until < queue_.Now()) {
      return Status::Env("asked to advance to t=" + std::to_string(until) +
                         " ns, before the current t=" + std::to_string(queue_.Now()) + " ns");
    }
    for (const auto& inj : advance.injected()) {
      if (Status st = CheckInjection(inj, until); !st.ok()) return st;
      queue_.AdvanceTo(inj.time_ns());  // deliveries before the injection happen first
      backend_->Send(static_cast<int>(inj.src()), static_cast<int>(inj.dst()), inj.bytes(), inj.token());
      if (queue_.overflowed()) return Overflow(" (token " + std::to_string(inj.token()) + ")");
    }
    queue_.Run(until);
    if (queue_.overflowed()) return Overflow("");
    if (!failure_.ok()) return Status::Env("the model failed: " + failure_.message());
    queue_.AdvanceTo(until);
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
    const std::string token = "token " + std::to_string(inj.token());
    if (inj.time_ns() < queue_.Now() || inj.time_ns() > until) {
      return Status::Env(token + " injected at t=" + std::to_string(inj.time_ns()) +
                         " ns, outside t=" + std::to_string(queue_.Now()) + ".." + std::to_string(until) + " ns");
    }
    if (inj.src() >= static_cast<uint64_t>(npus_) || inj.dst() >= static_cast<uint64_t>(npus_)) {
      return Status::Env(token + " goes from NPU " + std::to_string(inj.src()) + " to NPU " +
                         std::to_string(inj.dst()) + "; the network has " + std::to_string(npus_) + " NPUs");
    }
    if (inj.bytes() > kMaxBytes) {
      return Status::Env(token + " has bytes = " + std::to_string(inj.bytes()) + "; allowed: at most " +
                         std::to_string(kMaxBytes) + " (2^48)");
    }
    return Status::Ok();
  }

  // A delivery the model would make past 2^64 ns: refused with the numbers.
  Status Overflow(const std::string& token) const {
    const std::string at = "t=" + std::to_string(queue_.overflow_at()) + " ns";
    if (queue_.overflow_delay() == kTickMax) {
      return Status::Env("a delivery" + token + " would fall past 2^64 ns (scheduled at " + at + ")");
    }
    return Status::Env("a delivery" + token + " would fall past 2^64 ns: " + at + " + a delay of " +
                       std::to_string(queue_.overflow_delay()) + " ns");
  }

  Topology topology_;
  EventQueue queue_;
  Recorder recorder_;
  Status failure_;
  std::unique_ptr<NetworkBackend> backend_;
  int64_t npus_;
};

// Why a frame from the client could not be read.
Status FrameError(ReadResult r, const std::string& detail, std::chrono::milliseconds timeout,
                  const std::string& awaited) {
  switch (r) {
    case ReadResult::kTimeout:
      return Status::Env("the client sent no " + awaited.substr(4) + " within " + std::to_string(timeout.count()) +
                         " ms");
    case ReadResult::kGarbage: return Status::Env("the client sent " + detail + " as " + awaited);
    case ReadResult::kClosed: return Status::Env("the client closed the connection before " + awaited);
    default: return Status::Env("the connection failed while waiting for " + awaited + ": " + detail);
  }
}

// After the hello: links and advances until Orrery says bye or closes. An
// advance the model refuses is answered with the reason, then the session ends.
template <typename Socket>
Status ServeRequests(boost::asio::io_context& io, Socket& sock, LocalModel& model,
                     const remote::SessionLimits& limits) {
  std::string err;
  remote::ToPeer in;
  remote::FromPeer out;
  while (true) {
    in.Clear();
    const ReadResult r = ReadFrame(io, sock, &in, limits.frame_timeout, &err);
    if (r == ReadResult::kClosed) return Status::Ok();
    if (r != ReadResult::kOk) return FrameError(r, err, limits.frame_timeout, "its next request");
    if (in.has_bye()) return Status::Ok();
    out.Clear();
    if (in.has_links()) {
      model.Links(out.mutable_links());  // an empty reply is still a LinksReply
    } else if (in.has_advance()) {
      Status st = model.Advance(in.advance(), out.mutable_reply());
      if (!st.ok()) {
        out.Clear();
        out.mutable_reply()->set_error(st.message());
        WriteFrame(sock, out, &err);
        return st;
      }
    } else {
      return Status::Env(in.has_hello() ? "the client sent a second hello"
                                        : "the client sent neither an advance, a links request nor a bye");
    }
    if (!WriteFrame(sock, out, &err)) return Status::Env("writing the answer failed: " + err);
  }
}

// The model a checked hello asks for, opened; the reason it cannot be served otherwise.
Status OpenModel(const remote::Hello& hello, const remote::SessionLimits& limits, std::unique_ptr<LocalModel>* local) {
  std::vector<Dim> dims;
  int64_t npus = 1;
  ORRERY_RETURN_IF_ERROR(CheckHello(hello, &dims, &npus));
  BackendRegistry registry;
  RegisterBuiltinBackends(&registry);
  const std::string model = hello.model().empty() ? "analytical" : hello.model();
  const BackendRegistry::Entry* entry = registry.Find(model);
  if (!entry) {
    return ValueError(Where{"", 0, "hello model"}, "\"" + Printable(model, 64) + "\"", "not served by this peer",
                      "analytical, congestion-aware");
  }
  const uint64_t budget = limits.max_model_bytes ? limits.max_model_bytes : PhysicalBytes();
  const uint64_t need = ModelBytes(dims, npus, model);
  if (budget != 0 && need > budget) {
    return Status::Invalid("the " + model + " model of this network (" + std::to_string(npus) + " NPUs) needs " +
                           std::to_string(need >> 20) + " MiB for its links; this peer has " +
                           std::to_string(budget >> 20) + " MiB");
  }
  *local = std::make_unique<LocalModel>(dims, npus);
  return (*local)->Open(*entry);
}

// One connection: the hello answered (or refused: the refusal is the
// session's error), then its requests served.
template <typename Socket>
Status Session(boost::asio::io_context& io, Socket& sock, const remote::SessionLimits& limits) {
  std::string err;
  remote::ToPeer in;
  const ReadResult r = ReadFrame(io, sock, &in, limits.hello_timeout, &err);
  if (r == ReadResult::kClosed) return Status::Env("the client closed the connection before its hello");
  if (r != ReadResult::kOk) return FrameError(r, err, limits.hello_timeout, "its hello");
  if (!in.has_hello()) return Status::Env("the client's first message is not a hello");
  remote::FromPeer out;
  auto* ack = out.mutable_hello_ack();
  ack->set_protocol_version(kProtocolVersion);
  ack->set_peer_name("orrery-peer");
  std::unique_ptr<LocalModel> local;
  if (Status st = OpenModel(in.hello(), limits, &local); !st.ok()) {
    ack->set_error(st.message());
    WriteFrame(sock, out, &err);
    return st.Prefixed("refused the hello: ");
  }
  if (!WriteFrame(sock, out, &err)) return Status::Env("writing the answer failed: " + err);
  return ServeRequests(io, sock, *local, limits);
}

// Session with every exception (Boost, protobuf, an allocation) turned into its error.
template <typename Socket>
Status GuardedSession(boost::asio::io_context& io, Socket& sock, const remote::SessionLimits& limits) {
  try {
    return Session(io, sock, limits);
  } catch (const std::bad_alloc&) {
    return Status::Env("out of memory serving the session");
  } catch (const std::exception& e) {
    return Status::Env(std::string("an exception: ") + e.what());
  }
}

}  // namespace

namespace remote {

Status ServePeerSession(boost::asio::io_context& io, boost::asio::local::stream_protocol::socket& sock,
                        const SessionLimits& limits) {
  return GuardedSession(io, sock, limits);
}

Status ServePeerSession(boost::asio::io_context& io, boost::asio::ip::tcp::socket& sock, const SessionLimits& limits) {
  return GuardedSession(io, sock, limits);
}

}  // namespace remote

}  // namespace orrery
