// A packet-level network backend on the real ns-3 (Debian's libns3-dev 3.37),
// built as a plugin module (ns-3 compiles only as C++17) and loaded on demand.
//
// The topology becomes ns-3 nodes: one per NPU and one per Switch group,
// joined by point-to-point links with the dimension's data rate and delay
// (rounded to whole ns); Ring, RingUni and Mesh become chains/rings of links,
// FullyConnected a link per pair. IPv4 with global (shortest-path) routing.
// A message is a train of UDP packets of at most 1472 payload bytes, each
// tagged with the message's token; it is delivered when its last byte arrives.
// Device queues are large and traffic control is removed, so nothing is lost:
// queueing shows up as delay.
//
// Synchronisation is conservative: ns-3 never runs past Orrery's clock.
// Orrery schedules a sync event at ns-3's next event time (read from a
// peekable scheduler installed in ns-3); at a sync, ns-3 runs every event up to
// that time and the messages it completed are delivered then.
#include <map>
#include <memory>
#include <set>

#include "core/units.h"
#include "network/backend.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/map-scheduler.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"
#include "plugins/sdk/orrery_plugin.h"

namespace {

class TokenTag : public ns3::Tag {
 public:
  static ns3::TypeId GetTypeId() {
    static ns3::TypeId tid =
        ns3::TypeId("orrery::TokenTag").SetParent<ns3::Tag>().SetGroupName("Orrery").AddConstructor<TokenTag>();
    return tid;
  }
  ns3::TypeId GetInstanceTypeId() const override { return GetTypeId(); }
  uint32_t GetSerializedSize() const override { return 8; }
  void Serialize(ns3::TagBuffer i) const override { i.WriteU64(token); }
  void Deserialize(ns3::TagBuffer i) override { token = i.ReadU64(); }
  void Print(std::ostream& os) const override { os << "token=" << token; }
  uint64_t token = 0;
};

// A MapScheduler whose head Orrery can read.
class PeekScheduler : public ns3::MapScheduler {
 public:
  static ns3::TypeId GetTypeId() {
    static ns3::TypeId tid = ns3::TypeId("orrery::PeekScheduler")
                                 .SetParent<ns3::MapScheduler>()
                                 .SetGroupName("Orrery")
                                 .AddConstructor<PeekScheduler>();
    return tid;
  }
  PeekScheduler() { current = this; }
  ~PeekScheduler() override {
    if (current == this) current = nullptr;
  }
  static PeekScheduler* current;
};
PeekScheduler* PeekScheduler::current = nullptr;

constexpr uint32_t kSync = 1;
constexpr uint32_t kDeliver = 2;
constexpr uint32_t kPayload = 1472;  // 1500-byte MTU less IP and UDP headers
bool g_in_use = false;

// Point-to-point links with their dimension's data rate and delay, each its
// own /30 network, without a queue disc (no drops: queueing in the device).
class LinkBuilder {
 public:
  explicit LinkBuilder(const orrery::Topology& t) : t_(t) { ip_.SetBase("10.0.0.0", "255.255.255.252"); }

  void Link(ns3::Ptr<ns3::Node> a, ns3::Ptr<ns3::Node> b, int d) {
    using namespace ns3;
    const orrery::Dim& dim = t_.dims()[d];
    PointToPointHelper p2p;
    const double bps = orrery::GiBpsToBytesPerSecond(dim.bandwidth_gbps * dim.links_per_npu) * orrery::kBitsPerByte;
    p2p.SetDeviceAttribute("DataRate", DataRateValue(DataRate(static_cast<uint64_t>(bps))));
    p2p.SetChannelAttribute("Delay", TimeValue(NanoSeconds(static_cast<int64_t>(dim.latency_ns + 0.5))));
    p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("10000000p"));
    NetDeviceContainer devs = p2p.Install(a, b);
    ip_.Assign(devs);  // installs a default queue disc, which we remove: no drops, queueing in the device
    tch_.Uninstall(devs);
    ip_.NewNetwork();
  }

 private:
  const orrery::Topology& t_;
  ns3::Ipv4AddressHelper ip_;
  ns3::TrafficControlHelper tch_;
};

class Ns3Backend : public orrery::NetworkBackend, public orrery::EventHandler {
 public:
  explicit Ns3Backend(const orrery::BackendContext& ctx) : ctx_(ctx), stats_(ctx.topology->num_dims()) {
    g_in_use = true;
    ResetSimulator();
    const orrery::Topology& t = *ctx.topology;
    npus_.Create(t.npus());
    ns3::InternetStackHelper stack;
    stack.Install(npus_);
    LinkBuilder links(t);
    for (int d = 0; d < t.num_dims(); ++d) ConnectDim(d, stack, links);
    ns3::Ipv4GlobalRoutingHelper::PopulateRoutingTables();
    OpenSockets();
  }

  ~Ns3Backend() override {
    ns3::Simulator::Destroy();
    g_in_use = false;
  }

  void Send(int src, int dst, uint64_t bytes, uint64_t token) override {
    const orrery::Tick now = ctx_.queue->Now();
    RunUntil(now);
    for (uint64_t tok : done_) ctx_.queue->ScheduleAt(now, this, kDeliver, tok);
    done_.clear();
    for (int d = 0; d < ctx_.topology->num_dims(); ++d) {
      if (ctx_.topology->Coord(src, d) != ctx_.topology->Coord(dst, d)) {
        stats_[d].messages++;
        stats_[d].bytes += bytes;
        break;
      }
    }
    if (bytes == 0 || src == dst) {
      ctx_.queue->ScheduleAt(now, this, kDeliver, token);
      return;
    }
    remaining_[token] = bytes;
    for (uint64_t sent = 0; sent < bytes; sent += kPayload) {
      ns3::Ptr<ns3::Packet> p = ns3::Create<ns3::Packet>(
          static_cast<uint32_t>(std::min<uint64_t>(kPayload, bytes - sent)));
      TokenTag tag;
      tag.token = token;
      p->AddPacketTag(tag);
      tx_[src]->SendTo(p, 0, ns3::InetSocketAddress(addr_[dst], 9));
    }
    ScheduleNextSync();
  }

  void HandleEvent(uint32_t kind, uint64_t arg) override {
    if (kind == kDeliver) {
      ctx_.sink->HandleEvent(ctx_.delivered_kind, arg);
      return;
    }
    const orrery::Tick now = ctx_.queue->Now();
    scheduled_.erase(now);
    RunUntil(now);
    std::vector<uint64_t> done;
    done.swap(done_);
    ScheduleNextSync();
    for (uint64_t tok : done) ctx_.sink->HandleEvent(ctx_.delivered_kind, tok);
  }

  const std::vector<orrery::DimStats>& dim_stats() const override { return stats_; }

 private:
  // A fresh ns-3 (one backend per process at a time) with the peekable scheduler.
  static void ResetSimulator() {
    ns3::Simulator::Destroy();
    ns3::Ipv4AddressGenerator::Reset();
    ns3::ObjectFactory sched;
    sched.SetTypeId(PeekScheduler::GetTypeId());
    ns3::Simulator::SetScheduler(sched);
  }

  // Dimension `d`'s links, group by group; a Switch group gets a node of its own.
  void ConnectDim(int d, ns3::InternetStackHelper& stack, LinkBuilder& links) {
    const orrery::Topology& t = *ctx_.topology;
    const orrery::Dim& dim = t.dims()[d];
    const int p = dim.npus;
    for (int base = 0; base < t.npus(); ++base) {
      if (t.Coord(base, d) != 0) continue;  // one pass per group, from its first member
      auto member = [&](int k) { return npus_.Get(t.WithCoord(base, d, k)); };
      switch (dim.block) {
        case orrery::Block::kRing:
        case orrery::Block::kRingUni:
          for (int k = 0; k < (p == 2 ? 1 : p); ++k) links.Link(member(k), member((k + 1) % p), d);
          break;
        case orrery::Block::kMesh:
          for (int k = 0; k + 1 < p; ++k) links.Link(member(k), member(k + 1), d);
          break;
        case orrery::Block::kFullyConnected:
          for (int a = 0; a < p; ++a) {
            for (int b = a + 1; b < p; ++b) links.Link(member(a), member(b), d);
          }
          break;
        case orrery::Block::kSwitch: {
          ns3::Ptr<ns3::Node> sw = ns3::CreateObject<ns3::Node>();
          stack.Install(sw);
          switches_.Add(sw);
          for (int k = 0; k < p; ++k) links.Link(member(k), sw, d);
          break;
        }
      }
    }
  }

  // Each NPU's address, a receiving socket on port 9 and a sending one.
  void OpenSockets() {
    using namespace ns3;
    for (int i = 0; i < ctx_.topology->npus(); ++i) {
      Ptr<Node> node = npus_.Get(i);
      addr_.push_back(node->GetObject<Ipv4>()->GetAddress(1, 0).GetLocal());
      Ptr<Socket> rx = Socket::CreateSocket(node, UdpSocketFactory::GetTypeId());
      rx->Bind(InetSocketAddress(Ipv4Address::GetAny(), 9));
      rx->SetRecvCallback(MakeCallback(&Ns3Backend::Receive, this));
      Ptr<Socket> tx = Socket::CreateSocket(node, UdpSocketFactory::GetTypeId());
      tx->Bind();
      rx_.push_back(rx);
      tx_.push_back(tx);
    }
  }

  // Runs ns-3 up to and including `t` and leaves its clock at `t`.
  void RunUntil(orrery::Tick t) {
    using namespace ns3;
    while (true) {
      const uint64_t now = static_cast<uint64_t>(Simulator::Now().GetNanoSeconds());
      const bool more = PeekScheduler::current && !PeekScheduler::current->IsEmpty() &&
                        PeekScheduler::current->PeekNext().key.m_ts <= t;
      if (!more && now >= t) return;
      Simulator::Stop(NanoSeconds(static_cast<int64_t>(t - std::min<uint64_t>(now, t))));
      Simulator::Run();
    }
  }

  void ScheduleNextSync() {
    if (!PeekScheduler::current || PeekScheduler::current->IsEmpty()) return;
    const orrery::Tick next = PeekScheduler::current->PeekNext().key.m_ts;
    const orrery::Tick at = std::max(next, ctx_.queue->Now());
    if (scheduled_.insert(at).second) ctx_.queue->ScheduleAt(at, this, kSync, 0);
  }

  void Receive(ns3::Ptr<ns3::Socket> socket) {
    ns3::Ptr<ns3::Packet> p;
    while ((p = socket->Recv())) {
      TokenTag tag;
      if (!p->PeekPacketTag(tag)) continue;
      auto it = remaining_.find(tag.token);
      if (it == remaining_.end()) continue;
      it->second -= std::min<uint64_t>(it->second, p->GetSize());
      if (it->second == 0) {
        done_.push_back(tag.token);
        remaining_.erase(it);
      }
    }
  }

  orrery::BackendContext ctx_;
  std::vector<orrery::DimStats> stats_;
  ns3::NodeContainer npus_, switches_;
  std::vector<ns3::Ipv4Address> addr_;
  std::vector<ns3::Ptr<ns3::Socket>> rx_, tx_;
  std::map<uint64_t, uint64_t> remaining_;
  std::vector<uint64_t> done_;
  std::set<orrery::Tick> scheduled_;
};

bool Register(orrery::PluginRegistries* registries, char* error, size_t error_size) {
  orrery::Status st = registries->network->Register(
      "ns3", "packet-level: ns-3 3.37 point-to-point links, switches as nodes, UDP packet trains (plugin)",
      [](const orrery::BackendContext& ctx) -> orrery::Result<std::unique_ptr<orrery::NetworkBackend>> {
        if (g_in_use) return orrery::Status::Invalid("the ns3 backend can run one simulation at a time per process");
        if (ctx.topology->npus() > 4096) {
          return orrery::Status::Invalid(
              "the ns3 backend is meant for up to 4096 NPUs (global routing tables grow as N^2)");
        }
        return std::unique_ptr<orrery::NetworkBackend>(new Ns3Backend(ctx));
      });
  if (!st.ok()) std::snprintf(error, error_size, "%s", st.message().c_str());
  return st.ok();
}

const OrreryPluginInfo kInfo = {ORRERY_PLUGIN_ABI_VERSION, "ns3", "3.37", &Register};

}  // namespace

extern "C" ORRERY_EXPORT const OrreryPluginInfo* orrery_plugin_info(void) { return &kInfo; }
