// Collective algorithms for one phase on one NPU. Ring, direct and
// halving-doubling share one packet engine: a phase sends `sends_left_`
// messages; each send is released by a "bundle" (the memory-bus hop, plus a
// reduction when the received data must be combined); the first packets of a
// round go NPU->MA, the later ones MA->NPU after a receive. The counters below
// reproduce ASTRA-sim's so that the same inputs give the same per-step times.
#include <cmath>
#include <memory>

#include "core/status.h"
#include "network/topology.h"
#include "system/algorithm.h"
#include "system/chunk.h"
#include "system/dbt.h"
#include "system/message_transport.h"
#include "system/npu_sys.h"

namespace orrery {

namespace {

// The packets waiting for a free slot, first in first out: one inline (ring
// and halving-doubling never queue more: a packet is inserted by a receive,
// and `Ready` takes the queued one before it posts the next receive), doubling
// on the heap for direct, whose first round queues a window.
template <typename T>
class PacketQueue {
 public:
  bool empty() const { return size_ == 0; }
  const T& front() const { return data()[head_]; }
  void pop_front() {
    head_ = (head_ + 1) & (cap_ - 1);
    --size_;
  }
  void push_back(const T& v) {
    if (size_ == cap_) Grow();
    data()[(head_ + size_) & (cap_ - 1)] = v;
    ++size_;
  }

 private:
  T* data() { return heap_ ? heap_.get() : inline_; }
  const T* data() const { return heap_ ? heap_.get() : inline_; }
  void Grow() {
    std::unique_ptr<T[]> bigger(new T[cap_ * 2]);
    for (uint32_t i = 0; i < size_; ++i) bigger[i] = data()[(head_ + i) & (cap_ - 1)];
    heap_ = std::move(bigger);
    head_ = 0;
    cap_ *= 2;
  }
  uint32_t head_ = 0, size_ = 0, cap_ = 1;
  T inline_[1];
  std::unique_ptr<T[]> heap_;
};

class PacketAlgorithm : public Algorithm {
 public:
  PacketAlgorithm(Chunk* chunk, const PhaseSpec& spec) : Algorithm(chunk), type_(spec.type), ring_(spec.ring) {
    kind_ = spec.algo.kind;
    if (kind_ == AlgoKind::kHalvingDoubling) {
      InitHalvingDoubling(spec.size);
    } else {
      InitRingOrDirect(spec.size, spec.algo.window);
    }
  }

  void OnInit() override {
    for (int i = 0; i < window_; ++i) InsertPacket();
  }

  void OnBundleDone() override {
    ++ready_packets_;
    if (kind_ == AlgoKind::kDirect && type_ == ComType::kAllReduce && sends_left_ <= half_sends_) {
      if (received_ < half_sends_) return;
      for (int i = 0; i < window_; ++i) SendNextPacket();
      ExitWhenDone();
      return;
    }
    SendNextPacket();
    ExitWhenDone();
  }

  void OnPacketReceived() override {
    ++received_;
    InsertPacket();
  }

 private:
  struct Packet {
    int dst_index;
    int src_index;
    uint64_t bytes;
  };

  void InitHalvingDoubling(uint64_t data) {
    const int p = ring_.size;
    const int lg = static_cast<int>(std::log2(p));
    sends_left_ = type_ == ComType::kAllReduce ? 2 * lg : lg;
    later_packets_per_round_ = lg - 1;
    switch (type_) {
      case ComType::kAllGather:
        msg_size_ = data;
        hd_distance_ = p / 2;
        hd_factor_ = 0.5;
        break;
      default:  // all-reduce, reduce-scatter
        msg_size_ = data / 2;
        hd_distance_ = 1;
        hd_factor_ = 2;
    }
    SetHdPartner();
  }

  void InitRingOrDirect(uint64_t data, int direct_window) {
    const int p = ring_.size;
    switch (type_) {
      case ComType::kAllReduce: sends_left_ = 2 * (p - 1); break;
      case ComType::kAllToAll: sends_left_ = (p - 1) * p / 2; break;
      default: sends_left_ = p - 1;
    }
    msg_size_ = type_ == ComType::kAllGather ? data : data / p;
    receiver_ = ring_.Next(ring_.index, true);
    sender_ = ring_.Next(ring_.index, false);
    later_packets_per_round_ = p - 1;
    if (kind_ == AlgoKind::kDirect) {
      half_sends_ = p - 1;
      window_ = direct_window < 0 ? p - 1 : std::min(direct_window, p - 1);
      if (type_ == ComType::kAllToAll) sends_left_ = p - 1;
      later_packets_per_round_ = window_;  // a dimension slice is never "local"
    }
  }

  // Queues a packet to the current partners and starts its bundle; a round
  // is `window_` first packets, then `later_packets_per_round_` later ones.
  void InsertPacket() {
    if (first_packets_left_ == 0 && later_packets_left_ == 0) {
      first_packets_left_ = window_;
      later_packets_left_ = later_packets_per_round_;
      reducing_round_ = !reducing_round_;
    }
    packets_.push_back(Packet{receiver_, sender_, msg_size_});
    if (first_packets_left_ > 0) {
      BundleThenNextPartner(false);
      --first_packets_left_;
      return;
    }
    ORRERY_CHECK(later_packets_left_ > 0, "collective packet engine: nothing to inject");
    BundleThenNextPartner(type_ == ComType::kReduceScatter || (type_ == ComType::kAllReduce && reducing_round_));
    --later_packets_left_;
  }

  // ASTRA-sim's ProcessMaxCount: the packet's bundle (with a reduction when
  // `reduce`), then halving-doubling's next distance and size, or direct's
  // next partners (every other member in turn).
  void BundleThenNextPartner(bool reduce) {
    Bundle(msg_size_, reduce);  // release the locked packet
    if (kind_ == AlgoKind::kHalvingDoubling) {
      hd_distance_ = static_cast<int>(hd_distance_ * hd_factor_);
      msg_size_ = static_cast<uint64_t>(static_cast<double>(msg_size_) / hd_factor_);
      if (hd_distance_ == ring_.size && type_ == ComType::kAllReduce) {
        hd_factor_ = 0.5;
        hd_distance_ = static_cast<int>(hd_distance_ * hd_factor_);
        msg_size_ = static_cast<uint64_t>(static_cast<double>(msg_size_) / hd_factor_);
      }
      SetHdPartner();
    } else if (kind_ == AlgoKind::kDirect) {
      receiver_ = ring_.Next(receiver_, true);
      if (receiver_ == ring_.index) receiver_ = ring_.Next(receiver_, true);
      sender_ = ring_.Next(sender_, false);
      if (sender_ == ring_.index) sender_ = ring_.Next(sender_, false);
    }
  }

  // Halving-doubling sends to and receives from one partner, `hd_distance_`
  // positions away: forwards or backwards by the block of positions it is in.
  void SetHdPartner() {
    bool clockwise = true;
    if (hd_distance_ != 0) clockwise = ((ring_.index / hd_distance_) % 2) == 0;
    const int k = ring_.Advance(ring_.index, hd_distance_, clockwise);
    receiver_ = k;
    sender_ = k;
  }

  // ASTRA-sim's Ready: the oldest packet whose bundle is done is sent, and
  // its receive posted.
  void SendNextPacket() {
    if (packets_.empty() || sends_left_ == 0 || ready_packets_ == 0) return;
    const Packet pk = packets_.front();
    packets_.pop_front();  // before Recv, which may insert the next packet at once
    const uint64_t bytes = kind_ == AlgoKind::kHalvingDoubling ? pk.bytes : msg_size_;
    Send(ring_.Member(pk.dst_index), bytes);
    // May complete at once (and insert a packet) when the message is already here.
    Recv(ring_.Member(pk.src_index), bytes);
    if (sends_left_ > 0) --sends_left_;
    --ready_packets_;
  }

  // The phase ends once every message is sent and the last bundles are done.
  void ExitWhenDone() {
    if (sends_left_ == 0 && ready_packets_ == window_) Exit();  // `this` is retired
  }

  // Two cache lines of the 64-byte aligned object hold what every packet
  // touches: first, with the vtable pointer and chunk_, the counters (the
  // queue prefetches this line); then the packet queue and the ring.
  // Halving-doubling's and direct's extras come last.
  ComType type_;
  AlgoKind kind_;
  // Flips at each round: an all-reduce reduces its later packets in the
  // rounds where it is set (its reduce-scatter half), not in the others
  // (its all-gather half). ASTRA-sim's toggle.
  bool reducing_round_ = false;
  int sends_left_ = 0;     // messages this phase still sends (ASTRA-sim's stream_count)
  int ready_packets_ = 0;  // packets whose bundle is done, not yet sent (ASTRA-sim's free_packets)
  // Left in this round: its first packets (NPU to MA, never reduced;
  // ASTRA-sim's zero-latency packets) and its later ones (MA to NPU after a
  // receive; its non-zero-latency packets).
  int first_packets_left_ = 0, later_packets_left_ = 0;
  int received_ = 0;               // messages received in this phase
  int receiver_ = 0, sender_ = 0;  // ring positions
  // Packets in flight at once, and a round's first packets (ASTRA-sim's
  // parallel_reduce): 1 for ring and halving-doubling, the window for direct.
  int window_ = 1;
  uint64_t msg_size_ = 0;
  PacketQueue<Packet> packets_;
  RingView ring_;
  int later_packets_per_round_ = 0;
  // Direct all-reduce: the sends of one half (p - 1). In the second half a
  // bundle waits until every message of the first is in; then the whole
  // window goes at once.
  int half_sends_ = 0;
  int hd_distance_ = 0;   // halving-doubling: positions to the partner
  double hd_factor_ = 1;  // halving-doubling: the distance's factor per step (2: doubling, 0.5: halving)
};

static_assert(sizeof(PacketAlgorithm) <= kAlgorithmSlotBytes,
              "PacketAlgorithm: it fills its rank arena slot (three cache lines; the hot fields in the first two)");

// Double binary tree all-reduce on one dimension: reduce up the tree, then
// broadcast down; the two trees alternate between chunks.
class DoubleBinaryTree : public Algorithm {
 public:
  DoubleBinaryTree(Chunk* chunk, const PhaseSpec& spec) : Algorithm(chunk), ring_(spec.ring), bytes_(spec.size) {
    const DbtLinks t = DoubleBinaryTreeAt(ring_.size, spec.dbt_root_max, ring_.index);
    parent_ = t.parent < 0 ? -1 : ring_.Member(t.parent);
    left_ = t.left < 0 ? -1 : ring_.Member(t.left);
    right_ = t.right < 0 ? -1 : ring_.Member(t.right);
    role_ = t.parent < 0 ? kRoot : (t.left < 0 && t.right < 0 ? kLeaf : kMiddle);
  }
  void OnInit() override { Run(false); }
  void OnBundleDone() override { Run(false); }
  void OnPacketReceived() override { Run(true); }

 private:
  enum Role { kRoot, kMiddle, kLeaf };
  enum State { kBegin, kSendingToParent, kWaitingFromParent, kEnd, kWaitingTwo, kWaitingOne, kSendingToChildren };

  void Run(bool received) {
    switch (role_) {
      case kLeaf: RunLeaf(); return;
      case kMiddle: RunMiddle(received); return;
      case kRoot: RunRoot(); return;
    }
  }

  // Sends its data up, waits for the result from the parent.
  void RunLeaf() {
    switch (state_) {
      case kBegin:
        state_ = kSendingToParent;
        Bundle(bytes_, false);
        return;
      case kSendingToParent:
        state_ = kWaitingFromParent;
        Send(parent_, bytes_);
        Recv(parent_, bytes_);
        return;
      case kWaitingFromParent:
        state_ = kEnd;
        Bundle(bytes_, false);
        return;
      case kEnd: Exit(); return;
      default: return;
    }
  }

  // Reduces its two children's data into its own, sends it up, waits for the
  // result from the parent and sends it down to both children.
  void RunMiddle(bool received) {
    if (state_ == kBegin) {
      state_ = kWaitingTwo;
      Recv(left_, bytes_);
      Recv(right_, bytes_);
    } else if (state_ == kWaitingTwo && received) {
      state_ = kWaitingOne;
      Bundle(bytes_, true);
    } else if (state_ == kWaitingOne && received) {
      state_ = kSendingToParent;
      Bundle(bytes_, true);
    } else if (!first_reduction_done_ && !received) {
      first_reduction_done_ = true;  // nothing more: the second reduction's end sends up
    } else if (state_ == kSendingToParent) {
      state_ = kWaitingFromParent;
      Send(parent_, bytes_);
      Recv(parent_, bytes_);
    } else if (state_ == kWaitingFromParent && received) {
      state_ = kSendingToChildren;
      Bundle(bytes_, true);
    } else if (state_ == kSendingToChildren) {
      Send(left_, bytes_);
      Send(right_, bytes_);
      Exit();
    }
  }

  // One child: reduces its data, sends the result back down.
  void RunRoot() {
    const int child = left_ >= 0 ? left_ : right_;
    if (state_ == kBegin) {
      state_ = kWaitingOne;
      Recv(child, bytes_);
    } else if (state_ == kWaitingOne) {
      state_ = kSendingToChildren;
      Bundle(bytes_, true);
    } else if (state_ == kSendingToChildren) {
      Send(child, bytes_);
      Exit();
    }
  }

  RingView ring_;
  uint64_t bytes_;
  int parent_ = -1, left_ = -1, right_ = -1;
  Role role_ = kLeaf;
  State state_ = kBegin;
  bool first_reduction_done_ = false;  // a middle node: the first child's reduction is done
};

// A custom algorithm: runs this rank's graph of sends, receives and compute
// steps. A send completes when its message is delivered; a receive when its
// message is here; a compute step after its duration. The phase ends when
// every op has completed.
class CustomAlgorithm : public Algorithm, public RecvClient {
 public:
  CustomAlgorithm(Chunk* chunk, const PhaseSpec& spec, const CustomGraph& graph)
      : Algorithm(chunk), graph_(graph), deps_left_(graph.size()) {
    for (size_t i = 0; i < graph.size(); ++i) deps_left_[i] = graph[i].num_deps;
  }
  void OnInit() override {
    if (graph_.empty()) {
      Exit();
      return;
    }
    for (uint32_t i = 0; i < graph_.size(); ++i) {
      if (deps_left_[i] == 0) Issue(i);
    }
  }
  void OnBundleDone() override {}
  void OnPacketReceived() override {}
  void OnTimer(uint64_t arg) override { Done(static_cast<uint32_t>(arg)); }
  void OnRecv(uint64_t cookie) override { Done(static_cast<uint32_t>(cookie)); }

 private:
  void Issue(uint32_t i) {
    const CustomOp& op = graph_[i];
    switch (op.kind) {
      case CustomOp::kSend:
        chunk_->context()->transport->Send(rank(), op.peer, op.bytes, chunk_->tag(), op.tag, this, i);
        return;
      case CustomOp::kRecv: chunk_->owner()->PostRecv(op.peer, chunk_->tag(), op.tag, this, i); return;
      case CustomOp::kComp: StartTimer(op.duration_ns, i); return;
      case CustomOp::kNop: Done(i); return;
    }
  }
  void Done(uint32_t i) {
    ++ops_done_;
    for (uint32_t c : graph_[i].children) {
      if (--deps_left_[c] == 0) Issue(c);
    }
    // A child may complete at once and finish the phase inside this loop.
    if (ops_done_ == graph_.size() && !exited_) {
      exited_ = true;
      Exit();  // `this` is retired (freed at the next top-level event)
    }
  }

  const CustomGraph& graph_;
  std::vector<uint32_t> deps_left_;  // per op: its dependencies not yet done
  size_t ops_done_ = 0;
  bool exited_ = false;
};

// In-network collective on a reduction-capable switch: each member uploads its
// data once (one link, latency + bytes/bw), the switch combines the p inputs
// at `in-switch-reduction-bw` once all have arrived, and each member downloads
// its result once. All-reduce: up S, reduce (p-1)S, down S. Reduce-scatter:
// up S, reduce, down S/p. All-gather: up S, no reduction, down S*p.
class InSwitchAlgorithm : public Algorithm, public SwitchWaiter {
 public:
  InSwitchAlgorithm(Chunk* chunk, const PhaseSpec& spec) : Algorithm(chunk), spec_(spec) {
    const ChunkContext* c = chunk->context();
    const Topology& t = *c->topology;
    dim_ = spec.queue_id;
    const int p = spec.ring.size;
    const double bw = t.BytesPerNs(dim_);
    const double lat = t.dims()[dim_].latency_ns;
    const uint64_t s = spec.size;
    up_bytes_ = s;
    down_bytes_ = spec.type == ComType::kAllReduce ? s : spec.type == ComType::kReduceScatter ? s / p : s * p;
    upload_time_ = TicksFromDouble(lat + static_cast<double>(up_bytes_) / bw);  // kTickMax: the queue reports overflow
    download_time_ = TicksFromDouble(lat + static_cast<double>(down_bytes_) / bw);
    reduce_time_ = spec.type == ComType::kAllGather
                       ? 0
                       : TicksFromDouble(static_cast<double>(s) * (p - 1) / c->options->in_switch_reduction_bw);
    endpoint_delay_ = c->options->endpoint_delay_ns;
  }
  void OnInit() override { StartTimer(SatAdd(endpoint_delay_, upload_time_), 0); }
  void OnBundleDone() override {}
  void OnPacketReceived() override {}
  void OnTimer(uint64_t arg) override {
    MessageTransport* t = chunk_->context()->transport;
    if (arg == 0) {
      t->CountSwitchTraffic(dim_, up_bytes_);
      t->SwitchArrive(chunk_->tag(), spec_.ring.base, dim_, spec_.ring.size, this);
      return;
    }
    t->CountSwitchTraffic(dim_, down_bytes_);
    Exit();  // `this` is retired
  }
  void OnSwitchReady() override { StartTimer(SatAdd(SatAdd(reduce_time_, download_time_), endpoint_delay_), 1); }

 private:
  PhaseSpec spec_;
  int dim_ = 0;
  uint64_t up_bytes_ = 0, down_bytes_ = 0;
  Tick upload_time_ = 0, download_time_ = 0, reduce_time_ = 0;  // one link each way; the switch's combining
  Tick endpoint_delay_ = 0;
};

}  // namespace

std::unique_ptr<Algorithm> MakeAlgorithm(Chunk* chunk, const PhaseSpec& spec, RankArena* arena) {
  const int rank = chunk->owner()->rank();
  if (spec.algo.kind == AlgoKind::kDoubleBinaryTree) {
    return std::unique_ptr<Algorithm>(new (arena, rank) DoubleBinaryTree(chunk, spec));
  }
  if (spec.algo.kind == AlgoKind::kInSwitch)
    return std::unique_ptr<Algorithm>(new (arena, rank) InSwitchAlgorithm(chunk, spec));
  if (spec.algo.kind == AlgoKind::kCustom) {
    const CustomGraph& g = spec.algo.graph ? *spec.algo.graph : (*spec.algo.custom)[rank];
    return std::unique_ptr<Algorithm>(new (arena, rank) CustomAlgorithm(chunk, spec, g));
  }
  return std::unique_ptr<Algorithm>(new (arena, rank) PacketAlgorithm(chunk, spec));
}

}  // namespace orrery
