// Collective algorithms for one phase on one NPU. Ring, direct and
// halving-doubling share one packet engine: a phase sends `stream_count`
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
    const int p = ring_.size;
    const uint64_t data = spec.size;
    if (kind_ == AlgoKind::kHalvingDoubling) {
      const int lg = static_cast<int>(std::log2(p));
      stream_count_ = type_ == ComType::kAllReduce ? 2 * lg : lg;
      nonzero_per_round_ = lg - 1;
      switch (type_) {
        case ComType::kAllGather:
          msg_size_ = data;
          rank_offset_ = p / 2;
          offset_multiplier_ = 0.5;
          break;
        default:  // all-reduce, reduce-scatter
          msg_size_ = data / 2;
          rank_offset_ = 1;
          offset_multiplier_ = 2;
      }
      SetHdPartners();
      return;
    }
    // Ring and direct.
    switch (type_) {
      case ComType::kAllReduce: stream_count_ = 2 * (p - 1); break;
      case ComType::kAllToAll: stream_count_ = (p - 1) * p / 2; break;
      default: stream_count_ = p - 1;
    }
    msg_size_ = type_ == ComType::kAllGather ? data : data / p;
    receiver_ = ring_.Next(ring_.index, true);
    sender_ = ring_.Next(ring_.index, false);
    nonzero_per_round_ = p - 1;
    if (kind_ == AlgoKind::kDirect) {
      middle_point_ = p - 1;
      parallel_reduce_ = spec.algo.window < 0 ? p - 1 : std::min(spec.algo.window, p - 1);
      if (type_ == ComType::kAllToAll) stream_count_ = p - 1;
      nonzero_per_round_ = parallel_reduce_;  // a dimension slice is never "local"
    }
  }

  void OnInit() override {
    for (int i = 0; i < parallel_reduce_; ++i) InsertPacket();
  }

  void OnGeneral() override {
    ++free_packets_;
    if (kind_ == AlgoKind::kDirect && type_ == ComType::kAllReduce && stream_count_ <= middle_point_) {
      if (total_received_ < middle_point_) return;
      for (int i = 0; i < parallel_reduce_; ++i) Ready();
      Iterate();
      return;
    }
    Ready();
    Iterate();
  }

  void OnPacketReceived() override {
    ++total_received_;
    InsertPacket();
  }

 private:
  struct Packet {
    int dst_index;
    int src_index;
    uint64_t bytes;
  };

  void InsertPacket() {
    if (zero_ == 0 && nonzero_ == 0) {
      zero_ = parallel_reduce_;
      nonzero_ = nonzero_per_round_;
      toggle_ = !toggle_;
    }
    packets_.push_back(Packet{receiver_, sender_, msg_size_});
    if (zero_ > 0) {
      processed_ = false;
      ProcessMaxCount();
      --zero_;
      return;
    }
    ORRERY_CHECK(nonzero_ > 0, "collective packet engine: nothing to inject");
    processed_ = type_ == ComType::kReduceScatter || (type_ == ComType::kAllReduce && toggle_);
    ProcessMaxCount();
    --nonzero_;
  }

  void ProcessMaxCount() {
    Bundle(msg_size_, processed_);  // release the locked packet
    if (kind_ == AlgoKind::kHalvingDoubling) {
      rank_offset_ = static_cast<int>(rank_offset_ * offset_multiplier_);
      msg_size_ = static_cast<uint64_t>(static_cast<double>(msg_size_) / offset_multiplier_);
      if (rank_offset_ == ring_.size && type_ == ComType::kAllReduce) {
        offset_multiplier_ = 0.5;
        rank_offset_ = static_cast<int>(rank_offset_ * offset_multiplier_);
        msg_size_ = static_cast<uint64_t>(static_cast<double>(msg_size_) / offset_multiplier_);
      }
      SetHdPartners();
    } else if (kind_ == AlgoKind::kDirect) {
      receiver_ = ring_.Next(receiver_, true);
      if (receiver_ == ring_.index) receiver_ = ring_.Next(receiver_, true);
      sender_ = ring_.Next(sender_, false);
      if (sender_ == ring_.index) sender_ = ring_.Next(sender_, false);
    }
  }

  void SetHdPartners() {
    bool clockwise = true;
    if (rank_offset_ != 0) clockwise = ((ring_.index / rank_offset_) % 2) == 0;
    const int k = ring_.Advance(ring_.index, rank_offset_, clockwise);
    receiver_ = k;
    sender_ = k;
  }

  bool Ready() {
    if (packets_.empty() || stream_count_ == 0 || free_packets_ == 0) return false;
    const Packet pk = packets_.front();
    packets_.pop_front();  // before Recv, which may insert the next packet at once
    const uint64_t bytes = kind_ == AlgoKind::kHalvingDoubling ? pk.bytes : msg_size_;
    Send(ring_.Member(pk.dst_index), bytes);
    // May complete at once (and insert a packet) when the message is already here.
    Recv(ring_.Member(pk.src_index), bytes);
    if (stream_count_ > 0) --stream_count_;
    --free_packets_;
    return true;
  }

  void Iterate() {
    if (stream_count_ == 0 && free_packets_ == parallel_reduce_) Exit();  // `this` is retired
  }

  // Two cache lines of the 64-byte aligned object hold what every packet
  // touches: first, with the vtable pointer and chunk_, the counters (the
  // queue prefetches this line); then the packet queue and the ring.
  // Halving-doubling's and direct's extras come last.
  ComType type_;
  AlgoKind kind_;
  bool toggle_ = false;
  bool processed_ = false;
  int stream_count_ = 0;
  int free_packets_ = 0;
  int zero_ = 0, nonzero_ = 0;
  int total_received_ = 0;
  int receiver_ = 0, sender_ = 0;  // ring positions
  int parallel_reduce_ = 1;
  uint64_t msg_size_ = 0;
  PacketQueue<Packet> packets_;
  RingView ring_;
  int nonzero_per_round_ = 0;
  int middle_point_ = 0;
  int rank_offset_ = 0;
  double offset_multiplier_ = 1;
};

static_assert(sizeof(PacketAlgorithm) <= kAlgorithmSlotBytes,
              "PacketAlgorithm: it fills its rank arena slot (three cache lines; the hot fields in the first two)");

// Double binary tree all-reduce on one dimension: reduce up the tree, then
// broadcast down; the two trees alternate between chunks.
class DoubleBinaryTree : public Algorithm {
 public:
  DoubleBinaryTree(Chunk* chunk, const PhaseSpec& spec)
      : Algorithm(chunk), ring_(spec.ring), bytes_(spec.size) {
    const DbtLinks t = DoubleBinaryTreeAt(ring_.size, spec.dbt_root_max, ring_.index);
    parent_ = t.parent < 0 ? -1 : ring_.Member(t.parent);
    left_ = t.left < 0 ? -1 : ring_.Member(t.left);
    right_ = t.right < 0 ? -1 : ring_.Member(t.right);
    role_ = t.parent < 0 ? kRoot : (t.left < 0 && t.right < 0 ? kLeaf : kMiddle);
  }
  void OnInit() override { Run(false); }
  void OnGeneral() override { Run(false); }
  void OnPacketReceived() override { Run(true); }

 private:
  enum Role { kRoot, kMiddle, kLeaf };
  enum State { kBegin, kSendingToParent, kWaitingFromParent, kEnd, kWaitingTwo, kWaitingOne, kSendingToChildren };

  void Run(bool received) {
    if (role_ == kLeaf) {
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
    if (role_ == kMiddle) {
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
      } else if (reductions_ < 1 && !received) {
        ++reductions_;
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
      return;
    }
    // Root: one child.
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
  int reductions_ = 0;
};

// A custom algorithm: runs this rank's graph of sends, receives and compute
// steps. A send completes when its message is delivered; a receive when its
// message is here; a compute step after its duration. The phase ends when
// every op has completed.
class CustomAlgorithm : public Algorithm, public RecvClient {
 public:
  CustomAlgorithm(Chunk* chunk, const PhaseSpec& spec, const CustomGraph& graph)
      : Algorithm(chunk), graph_(graph), pending_(graph.size()) {
    for (size_t i = 0; i < graph.size(); ++i) pending_[i] = graph[i].num_deps;
  }
  void OnInit() override {
    if (graph_.empty()) {
      Exit();
      return;
    }
    for (uint32_t i = 0; i < graph_.size(); ++i) {
      if (pending_[i] == 0) Issue(i);
    }
  }
  void OnGeneral() override {}
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
    ++done_;
    for (uint32_t c : graph_[i].children) {
      if (--pending_[c] == 0) Issue(c);
    }
    // A child may complete at once and finish the phase inside this loop.
    if (done_ == graph_.size() && !exited_) {
      exited_ = true;
      Exit();  // `this` is retired (freed at the next top-level event)
    }
  }

  const CustomGraph& graph_;
  std::vector<uint32_t> pending_;
  size_t done_ = 0;
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
    up_ = TicksFromDouble(lat + static_cast<double>(up_bytes_) / bw);  // kTickMax: the queue reports overflow
    down_ = TicksFromDouble(lat + static_cast<double>(down_bytes_) / bw);
    reduce_ = spec.type == ComType::kAllGather
                  ? 0
                  : TicksFromDouble(static_cast<double>(s) * (p - 1) / c->options->in_switch_reduction_bw);
    ed_ = c->options->endpoint_delay_ns;
  }
  void OnInit() override { StartTimer(SatAdd(ed_, up_), 0); }
  void OnGeneral() override {}
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
  void OnSwitchReady() override { StartTimer(SatAdd(SatAdd(reduce_, down_), ed_), 1); }

 private:
  PhaseSpec spec_;
  int dim_ = 0;
  uint64_t up_bytes_ = 0, down_bytes_ = 0;
  Tick up_ = 0, down_ = 0, reduce_ = 0, ed_ = 0;
};

}  // namespace

std::unique_ptr<Algorithm> MakeAlgorithm(Chunk* chunk, const PhaseSpec& spec, RankArena* arena) {
  const int rank = chunk->owner()->rank();
  if (spec.algo.kind == AlgoKind::kDoubleBinaryTree) {
    return std::unique_ptr<Algorithm>(new (arena, rank) DoubleBinaryTree(chunk, spec));
  }
  if (spec.algo.kind == AlgoKind::kInSwitch) return std::unique_ptr<Algorithm>(new (arena, rank) InSwitchAlgorithm(chunk, spec));
  if (spec.algo.kind == AlgoKind::kCustom) {
    const CustomGraph& g = spec.algo.graph ? *spec.algo.graph : (*spec.algo.custom)[rank];
    return std::unique_ptr<Algorithm>(new (arena, rank) CustomAlgorithm(chunk, spec, g));
  }
  return std::unique_ptr<Algorithm>(new (arena, rank) PacketAlgorithm(chunk, spec));
}

}  // namespace orrery
