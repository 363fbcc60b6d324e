// The timeline (--timeline=FILE): Chrome trace-event JSON that Perfetto and
// chrome://tracing load. One process per NPU (pid = rank) with the tracks
// compute (tid 0), cpu (1), communication (2: collectives and sends of
// communication stream 0, which share that stream's slot), memory (3), and from
// 10 on, in order of first use, receive lanes (receives take no slot and may
// overlap, so each gets the first lane free when it started) and
// "communication stream s" for streams above 0 (comm_stream: each its own slot).
// Spans are complete ('X') events, written when the simulated time passes the
// instant their node ended: the nodes that ended at one instant are written
// together, by rank, then start, iteration and node, and the tracks of streams
// first used at that instant are named by stream first. That order does not
// depend on how the run interleaves the events of one instant, so a run by
// rank classes writes the full engine's bytes (docs/design.md, "Observers on
// rank classes"). Only one instant's nodes are kept; on every track spans are
// disjoint and in time order in the file. A point-to-point message between two selected ranks also gets a flow
// ('s' at the send's start, 'f' in the receive). Inside a collective's span,
// nested spans name the network dimensions its chunks are on ("dim0", "dim1",
// "dim0+dim1" while chunks overlap). Timestamps are microseconds with three
// decimals: exact nanoseconds.
#pragma once
#include <cstdint>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "core/output_file.h"
#include "core/status.h"
#include "core/tick.h"
#include "system/rank_class_map.h"
#include "workload/executor.h"

namespace orrery {

struct TimelineOptions {
  std::string path;    // --timeline
  std::string ranks;   // --timeline-ranks: "0-7,1024"; empty: every rank
  std::string window;  // --timeline-window: "START_NS-END_NS"; empty: the whole run
};

// A run by rank classes (system/rank_class_map.h): each selected rank is drawn
// from its class representative's events with its own graph (node ids, names,
// peers), which must match the representative's node by node.
struct TimelineClasses {
  const RankClassMap* map = nullptr;
  const std::vector<const NpuGraph*>* graph_of = nullptr;  // per rank: its graph when selected (else null)
};

// "0-7,1024" -> a flag per rank; errors name the flag, the value and what is allowed.
Result<std::vector<uint8_t>> ParseRankSelection(const std::string& text, int npus);
Result<std::pair<Tick, Tick>> ParseTimeWindow(const std::string& text);

class TimelineWriter : public NodeObserver, public PhaseObserver {
 public:
  // Checks the options and opens the file (an error before anything is simulated).
  // `symmetric`: rank 0 is simulated for all, and its events are written for every selected rank.
  static Result<std::unique_ptr<TimelineWriter>> Open(const TimelineOptions& options, int npus, bool symmetric);
  // With rank classes: `classes` must outlive the writer. Call before the run.
  void SetClasses(TimelineClasses classes);
  // The selected ranks (ascending).
  const std::vector<int>& selected() const { return selected_list_; }
  ~TimelineWriter() override;
  void Attach(const Executor* exec) { exec_ = exec; }

  void OnCollectiveIssued(int rank, uint32_t idx, const std::string& algorithm, Tick now) override;
  void OnDelivered(int rank, uint32_t idx, Tick send_start, Tick now) override;
  void OnNodeDone(int rank, uint32_t idx, Tick start, Tick end) override;
  void OnPhaseChange(int rank, uint64_t cookie, int from_dim, int to_dim, Tick now) override;
  // Ends the JSON and closes the file; an error if anything failed to write.
  Status Close();

 private:
  TimelineWriter() = default;
  bool InWindow(Tick start, Tick end) const { return end >= window_.first && start <= window_.second; }
  void Begin();
  void Write(const std::string& text);
  void Meta(int pid, int tid, const char* what, const std::string& value);
  void Span(int pid, int tid, const std::string& name, const char* cat, Tick start, Tick end, const std::string& args);
  int RecvLane(int rank, Tick start, Tick end);
  struct Piece {
    Tick start, end;
    uint32_t dims;
  };
  // A node that ended at the current instant, written when the instant is over.
  struct Ended {
    int rank;
    uint32_t idx;
    Tick start, end;
    int iteration;
    std::string algorithm;      // a collective's, as it was issued
    std::vector<Piece> pieces;  // a collective's phases
  };
  void WriteCollective(int rank, int tid, const std::string& name, const Ended& e, const std::string& args);
  // Writes what ended before `now` when `now` is a later instant.
  void AtInstant(Tick now) {
    if (now != instant_) WriteInstant();
    instant_ = now;
  }
  void WriteInstant();
  // One rank's events (the public callbacks hand each on for every selected member of a class).
  void CollectiveIssued(int rank, uint32_t idx, const std::string& algorithm);
  void Delivered(int rank, uint32_t idx, Tick send_start, Tick now);
  void NodeEnded(int rank, uint32_t idx, Tick start, Tick end, int iteration);
  void NodeDone(const Ended& e);
  void PhaseChange(int rank, uint64_t cookie, int from_dim, int to_dim, Tick now);
  // The ranks an event of simulated rank `rank` is drawn for: itself, or its class's selected members.
  const std::vector<int>& DrawnFor(int rank) const { return drawn_for_[rank]; }
  const WorkNode& Node(int rank, uint32_t idx) const {
    return classes_.map ? (*classes_.graph_of)[rank]->nodes[idx] : exec_->npus()[rank].graph.nodes[idx];
  }

  OutputFile file_;  // a temporary file until Close renames it (core/output_file.h)
  bool first_ = true;
  bool symmetric_ = false;
  std::vector<uint8_t> selected_;
  std::vector<int> selected_list_;
  std::pair<Tick, Tick> window_{0, kTickMax};
  const Executor* exec_ = nullptr;
  TimelineClasses classes_;
  std::vector<std::vector<int>> drawn_for_;  // with classes: per representative, its selected members
  struct RankState {
    std::vector<Tick> lane_end;  // receive lanes: when each one's last span ended
    std::vector<int> lane_tid;   // and their tracks
    int next_tid = 10;           // the next track for a receive lane or a communication stream above 0
    // Per communication stream (a collective at a time on each: its slot):
    // its track, the algorithm of its collective in flight, the chunks in a
    // phase per dimension bit (bit 31: no single dimension), the dimensions
    // since `dims_since`, and the pieces so far (written after the collective's
    // own span, so each track stays in time order).
    struct Stream {
      int tid = -1;  // -1: no track yet
      std::string algorithm;
      uint32_t phases_on[32] = {};
      uint32_t dims = 0;
      Tick dims_since = 0;
      std::vector<Piece> pieces;
      bool unnamed = false;  // used, its track to be named when the instant is written
    };
    std::vector<Stream> streams;
  };
  // One per selected rank (one in a symmetric run: the representative's).
  std::vector<RankState> ranks_;
  std::vector<uint32_t> state_of_;  // rank -> index into ranks_ (selected ranks)
  RankState& State(int rank) { return ranks_[symmetric_ ? 0 : state_of_[rank]]; }
  // Stream `stream`'s state on `rank`, its track named on first use.
  RankState::Stream& CommStream(int rank, int stream);
  // The same, its track named when the instant is written (events before that: their order may vary).
  RankState::Stream& StreamState(int rank, int stream);
  int StreamOf(int rank, uint32_t idx) const { return Node(rank, idx).comm_stream; }
  // Messages delivered and not yet received, by (src, dst, tag): their sends' start, end and track.
  struct Sent {
    Tick start, end;
    int stream;
  };
  std::map<std::tuple<int, int, uint64_t>, std::deque<Sent>> in_flight_;
  uint64_t next_flow_ = 0;
  Tick instant_ = 0;
  std::vector<Ended> ended_;  // the first ended_count_ are the current instant's (kept for reuse)
  size_t ended_count_ = 0;
  std::vector<std::pair<int, int>> unnamed_;  // (rank, stream) first used at the current instant
};

}  // namespace orrery
