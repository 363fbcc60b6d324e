// Congestion-aware backend: every link is a FIFO server. A message crosses its
// route hop by hop; a link is busy for bytes/bw and the message reaches the
// next device latency + bytes/bw after it starts (both truncated to ns, as in
// ASTRA-sim). Routing is dimension order (dim 0 first); on a Ring the shorter
// way round; a Switch is a device of its own with one up- and one down-link
// per NPU. Per-message work is O(hops); no allocation per message after
// warm-up (messages live in a slab).
#include <vector>

#include "network/backend.h"

namespace orrery {

namespace {

constexpr uint32_t kHopArrived = 1;

class CongestionAwareBackend : public NetworkBackend, public EventHandler {
 public:
  explicit CongestionAwareBackend(const BackendContext& ctx) : ctx_(ctx), stats_(ctx.topology->num_dims()) {
    const Topology& t = *ctx.topology;
    const int n = t.npus();
    size_t next = 0;
    for (int d = 0; d < t.num_dims(); ++d) {
      base_.push_back(next);
      switch (t.dims()[d].block) {
        case Block::kRing:
        case Block::kRingUni:
        case Block::kMesh: next += static_cast<size_t>(n) * 2; break;
        case Block::kFullyConnected: next += static_cast<size_t>(n) * t.dims()[d].npus; break;
        case Block::kSwitch: next += static_cast<size_t>(n) * 2; break;  // up-links then down-links
      }
    }
    busy_until_.assign(next, 0);
    link_busy_.assign(next, 0);
    link_bytes_.assign(next, 0);
  }

  std::vector<LinkStat> Links() const override {
    const Topology& t = *ctx_.topology;
    std::vector<LinkStat> out;
    for (int d = 0; d < t.num_dims(); ++d) {
      const size_t end = d + 1 < t.num_dims() ? base_[d + 1] : busy_until_.size();
      for (size_t l = base_[d]; l < end; ++l) {
        if (link_bytes_[l] == 0) continue;
        const size_t k = l - base_[d];
        std::string name = "dim" + std::to_string(d) + " " + BlockName(t.dims()[d].block) + " ";
        switch (t.dims()[d].block) {
          case Block::kFullyConnected: {
            const int p = t.dims()[d].npus;
            const int from = static_cast<int>(k / p);
            name += "npu " + std::to_string(from) + " -> npu " +
                    std::to_string(t.WithCoord(from, d, static_cast<int>(k % p)));
            break;
          }
          case Block::kSwitch: {
            const int npu = static_cast<int>(k % t.npus());
            name += (k < static_cast<size_t>(t.npus()) ? "up-link of npu " : "down-link to npu ") + std::to_string(npu);
            break;
          }
          default: {
            const int npu = static_cast<int>(k / 2);
            const int p = t.dims()[d].npus;
            const int c = t.Coord(npu, d);
            const int to = t.WithCoord(npu, d, k % 2 == 0 ? (c + 1) % p : (c - 1 + p) % p);
            name += "npu " + std::to_string(npu) + " -> npu " + std::to_string(to);
          }
        }
        out.push_back(LinkStat{name, d, link_bytes_[l], link_busy_[l]});
      }
    }
    return out;
  }

  void Send(int src, int dst, uint64_t bytes, uint64_t token) override {
    uint32_t slot;
    if (!free_.empty()) {
      slot = free_.back();
      free_.pop_back();
    } else {
      slot = static_cast<uint32_t>(msgs_.size());
      msgs_.emplace_back();
    }
    msgs_[slot] = Msg{bytes, token, src, dst, -1};
    Advance(slot);
  }

  void HandleEvent(uint32_t kind, uint64_t arg) override { Advance(static_cast<uint32_t>(arg)); }

  const std::vector<DimStats>& dim_stats() const override { return stats_; }

 private:
  struct Msg {
    uint64_t bytes;
    uint64_t token;
    int at;  // NPU the message is at (or the NPU below the switch it is in)
    int dst;
    int down_to;  // >= 0: inside a switch, next hop is the down-link to this NPU
  };

  // Moves the message one hop, or delivers it.
  void Advance(uint32_t slot) {
    Msg& m = msgs_[slot];
    const Topology& t = *ctx_.topology;
    if (m.down_to >= 0) {
      int d = switch_dim_of_[slot];
      const int target = m.down_to;
      m.down_to = -1;
      m.at = target;
      Transmit(slot, base_[d] + static_cast<size_t>(t.npus()) + target, d);
      return;
    }
    if (m.at == m.dst) {
      const uint64_t token = m.token;
      free_.push_back(slot);
      ctx_.sink->HandleEvent(ctx_.delivered_kind, token);  // delivered now
      return;
    }
    int d = 0;
    while (t.Coord(m.at, d) == t.Coord(m.dst, d)) ++d;
    const int p = t.dims()[d].npus;
    const int a = t.Coord(m.at, d), b = t.Coord(m.dst, d);
    switch (t.dims()[d].block) {
      case Block::kRing:
      case Block::kRingUni:
      case Block::kMesh: {
        const int fwd = (b - a + p) % p;
        bool clockwise = fwd <= p - fwd;
        if (t.dims()[d].block == Block::kRingUni) clockwise = true;
        if (t.dims()[d].block == Block::kMesh) clockwise = b > a;
        const int next = clockwise ? (a + 1) % p : (a - 1 + p) % p;
        const size_t link = base_[d] + static_cast<size_t>(m.at) * 2 + (clockwise ? 0 : 1);
        m.at = t.WithCoord(m.at, d, next);
        Transmit(slot, link, d);
        break;
      }
      case Block::kFullyConnected: {
        const size_t link = base_[d] + static_cast<size_t>(m.at) * p + b;
        m.at = t.WithCoord(m.at, d, b);
        Transmit(slot, link, d);
        break;
      }
      case Block::kSwitch: {
        const size_t link = base_[d] + static_cast<size_t>(m.at);
        m.down_to = t.WithCoord(m.at, d, b);
        if (switch_dim_of_.size() < msgs_.size()) switch_dim_of_.resize(msgs_.size());
        switch_dim_of_[slot] = d;
        Transmit(slot, link, d);
        break;
      }
    }
  }

  void Transmit(uint32_t slot, size_t link, int d) {
    const Topology& t = *ctx_.topology;
    const Tick now = ctx_.queue->Now();
    const Tick start = busy_until_[link] > now ? busy_until_[link] : now;
    const double exact = static_cast<double>(msgs_[slot].bytes) / t.BytesPerNs(d);
    const Tick ser = TicksFromDouble(exact);
    const Tick comm = TicksFromDouble(t.dims()[d].latency_ns + exact);
    busy_until_[link] = SatAdd(start, ser);
    link_busy_[link] = SatAdd(link_busy_[link], ser);
    link_bytes_[link] += msgs_[slot].bytes;
    stats_[d].messages++;
    stats_[d].bytes += msgs_[slot].bytes;
    stats_[d].busy_ns = SatAdd(stats_[d].busy_ns, ser);
    ctx_.queue->ScheduleAt(SatAdd(start, comm), this, kHopArrived, slot);  // kTickMax: overflow error
  }

  BackendContext ctx_;
  std::vector<DimStats> stats_;
  std::vector<size_t> base_;
  std::vector<Tick> busy_until_;
  std::vector<Tick> link_busy_;
  std::vector<uint64_t> link_bytes_;
  std::vector<Msg> msgs_;
  std::vector<int> switch_dim_of_;
  std::vector<uint32_t> free_;
};

}  // namespace

std::unique_ptr<NetworkBackend> MakeCongestionAwareBackend(const BackendContext& ctx) {
  return std::make_unique<CongestionAwareBackend>(ctx);
}

}  // namespace orrery
