// Runs every NPU's dependency graph: a node issues when its dependencies have
// finished and its hardware slot (CPU compute, GPU compute, or the
// communication slot of the node's comm_stream: one per stream) is free; ready
// nodes issue in ascending id order. A trace without comm_stream has one
// communication slot, ASTRA-sim's rule.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <queue>
#include <string>
#include <vector>

#include "core/event_queue.h"
#include "core/heterogeneity.h"
#include "memory/backend.h"
#include "system/collective_engine.h"
#include "system/match_table.h"
#include "workload/graph.h"
#include "workload/memory_access.h"
#include "workload/memory_capacity.h"
#include "workload/node_recorder.h"

namespace orrery {

struct ComputeModel {
  bool roofline = false;
  double peak_flops_per_s = 0;
  double mem_bytes_per_s = 0;
  // The local (HBM) tier for MEM nodes marked memory_tier: local: a FIFO per NPU.
  double local_bytes_per_ns = 0;  // local-mem-bw, the same figure as the roofline's and the reduction's
  Tick local_latency_ns = 0;
  // Remote-tier traffic crosses this network dimension to the group's first NPU,
  // where the pool attaches (-1: the pool is reached without the network).
  int pool_via_dim = -1;
  // Per-NPU compute speeds (--heterogeneity; null or empty: every NPU at 1).
  const Heterogeneity* heterogeneity = nullptr;
  // The system JSON's collective-sm-fraction: a roofline GPU kernel issued
  // while a collective of its rank is in flight has (1 - this) of the SMs.
  double collective_sm_fraction = 0;
};

struct CollectiveRecord {
  uint64_t node_id;
  std::string name, type, algorithm;
  uint64_t bytes;
  Tick start, end;
};

// Hears each node's start and end as the run goes (the timeline writer).
class NodeObserver {
 public:
  virtual ~NodeObserver() = default;
  virtual void OnCollectiveIssued(int rank, uint32_t idx, const std::string& algorithm, Tick now) = 0;
  // A point-to-point send's message was delivered (before the receive it completes hears of it).
  virtual void OnDelivered(int rank, uint32_t idx, Tick send_start, Tick now) = 0;
  virtual void OnNodeDone(int rank, uint32_t idx, Tick start, Tick end) = 0;
};

// Optional: what a run records beyond its totals (both off by default, at no cost).
struct ExecutorHooks {
  NodeRecorder* recorder = nullptr;  // per-node records for the critical path
  NodeObserver* observer = nullptr;
  bool all_collectives = false;  // record every rank's collectives, not only rank 0's
};

// One collective of one rank (with ExecutorHooks::all_collectives).
struct RankCollective {
  int32_t rank;
  uint32_t idx;        // node index in the rank's graph
  uint32_t algorithm;  // index into Executor::algorithms()
  Tick start, end;
};

class Executor : public EventHandler, public CollectiveDoneClient, public RecvClient {
 public:
  Executor(EventQueue* queue, CollectiveEngine* engine, MemoryBackend* memory, ComputeModel compute,
           std::vector<NpuGraph> graphs, int iterations, CapacityOptions capacity = {}, ExecutorHooks hooks = {});
  Status Start();
  void HandleEvent(uint32_t kind, uint64_t arg) override;
  void OnCollectiveDone(uint64_t cookie) override;
  void OnRecv(uint64_t cookie) override;

  // After the queue drains: an error naming the stuck nodes, if any.
  Status CheckFinished() const;
  const Status& failure() const { return failure_; }

  // A rank's run: its graph, its ready nodes and slots, its time categories;
  // its memory use is the RankMemory base (workload/memory_capacity.h).
  struct NpuState : RankMemory {
    NpuGraph graph;
    std::vector<uint32_t> pending;
    // Ready nodes by the slot they need (NodeSlot, workload/node_recorder.h), each a
    // min-heap of node indices: the next node to issue is the smallest available one.
    std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<uint32_t>> ready[kNumSlots];
    bool slot_busy[kNumSlots] = {};     // kSlotNone is never busy
    uint8_t num_slots = kSlotComm + 1;  // slots the graph uses: up to its highest comm_stream
    bool issuing = false;               // IssueReady's loop is running (no recursion)
    std::vector<uint8_t> issued;
    std::vector<Tick> start;
    uint32_t done = 0;
    int iteration = 0;
    bool finished = false;
    Tick finish = 0, compute = 0, comm = 0;
    int comm_in_flight = 0;
    int colls_in_flight = 0;  // collectives only (ComputeModel::collective_sm_fraction)
    Tick comm_since = 0;
    int active = 0;  // GPU compute or communication in flight
    Tick active_since = 0;
    Tick busy = 0;  // union of compute, communication and memory time
    int mem_in_flight = 0;
    Tick mem_since = 0;
    Tick mem = 0;          // union of remote-memory access intervals
    bool stalled = false;  // memory in flight and nothing else active
    Tick stall_since = 0;
    Tick mem_stall = 0;  // time memory accesses were the only activity
    // Receives posted whose matching send has not started (not in `active`):
    // while some wait and nothing is active, the rank waits on a peer.
    int recv_waiting = 0;
    bool peer_waiting = false;
    Tick wait_since = 0;
    Tick peer_wait = 0;
    // A CPU op running while none of the above (no GPU compute, communication,
    // memory or peer wait): the report's `cpu` share, taken out of idle.
    bool cpu_exposed = false;
    Tick cpu_since = 0;
    Tick cpu = 0;
    // With all_collectives: per stream, its collective in flight (one at a time: the stream's slot).
    uint32_t open_coll[kMaxCommStreams] = {};
  };
  const std::vector<NpuState>& npus() const { return npus_; }
  const std::vector<CollectiveRecord>& rank0_collectives() const { return rank0_colls_; }
  const std::vector<RankCollective>& all_collectives() const { return all_colls_; }
  const std::vector<std::string>& algorithms() const { return algorithms_; }
  uint64_t remote_peak() const { return capacity_.remote_peak(); }
  const std::vector<std::string>& warnings() const { return capacity_.warnings(); }

 private:
  static uint64_t Key(int rank, uint32_t idx) { return (static_cast<uint64_t>(rank) << 32) | idx; }
  void IssueReady(int rank);
  // `by`: the recorder's index of the node whose end made it ready.
  void MakeReady(int rank, uint32_t idx, uint32_t by, WaitedFor why);
  void TimeOverflow(int rank, const WorkNode& n, const char* what, double ns);
  Status CheckGroups() const;
  Status OverflowError() const;
  Status DeadlockError() const;
  std::string DescribeWaits(const NpuState& s) const;
  // Starts a ready node: one handler per kind. The per-node handlers are
  // inlined into their caller (executor.cc), as the single function they were:
  // a call that returns and goes on costs saved registers on every node.
  void Issue(int rank, uint32_t idx);
  __attribute__((always_inline)) void IssueCompute(int rank, uint32_t idx);
  __attribute__((always_inline)) std::optional<Tick> ComputeTime(int rank, const WorkNode& n);
  void IssueCollective(int rank, uint32_t idx);
  void RecordCollective(int rank, uint32_t idx, const std::string& algorithm);
  __attribute__((always_inline)) void IssueMemory(int rank, uint32_t idx);
  // Ends a node: frees its slot, releases its children, ends the iteration.
  void Complete(int rank, uint32_t idx);
  __attribute__((always_inline)) void EndActivity(int rank, NpuState& s, const WorkNode& n);
  bool NextIteration(int rank, uint32_t ended_by);
  void CommBegin(NpuState& s);
  void CommEnd(NpuState& s);
  void ActiveUp(NpuState& s);
  void MemBegin(NpuState& s);
  void MemEnd(NpuState& s);
  void ActiveDown(NpuState& s);
  void TrackStall(NpuState& s);
  // Point-to-point receives: posted (waiting on the peer's send, or
  // communication if it started), and turned into communication when it starts.
  void RecvBegin(int rank, const WorkNode& n);
  void SendStarted(int rank, const WorkNode& n);
  int StandsFor(int rank, int peer) const;
  void Fail(Status st);
  void ResetIteration(int rank, uint32_t ended_by);
  __attribute__((always_inline)) void Allocate(int rank, uint32_t idx, uint64_t bytes);

  EventQueue* queue_;
  CollectiveEngine* engine_;
  ComputeModel compute_;
  int iterations_;
  std::vector<NpuState> npus_;
  std::vector<CollectiveRecord> rank0_colls_;
  Status failure_;
  MemoryAccess memory_;
  MemoryCapacity capacity_;
  ExecutorHooks hooks_;
  std::vector<RankCollective> all_colls_;
  std::vector<std::string> algorithms_;
  std::map<std::string, uint32_t> algorithm_ids_;
  std::string algo_scratch_;  // Issue: the buffer for a collective's algorithm text (reused)
  // Peer wait: per (tag, receiving rank, peer), the receives still waiting for
  // their send to start, or the sends started before their receive was posted.
  MatchTable p2p_started_;
};

}  // namespace orrery
