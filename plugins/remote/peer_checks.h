// What a remote peer reports is checked for possibility before Orrery uses it:
// its statistics against what the run sent and the time that passed, and its
// progress (a peer that never delivers would keep a run going forever). Each
// check names the peer (`who`: "remote backend peer at HOST:PORT "), the field,
// the value and what is allowed.
#pragma once
#include <cstdint>
#include <string>

#include "core/status.h"
#include "core/tick.h"
#include "network/topology.h"
#include "plugins/remote/remote.pb.h"

namespace orrery::remote {

// Advances in a row that neither carry a message to the peer nor bring a
// delivery back, each answered with a next event: a peer's model may take a
// few (a message crossing several links of a congestion-aware network), a peer
// that never delivers would take them forever (docs/remote-protocol.md).
inline constexpr uint64_t kMaxIdleAdvances = 100000;

class PeerChecks {
 public:
  explicit PeerChecks(const Topology* topology) : topology_(topology) {}

  // What the run sends and how far the peer was advanced: the bounds.
  void Sent(uint64_t bytes) {
    ++sent_messages_;
    sent_bytes_ = SatAdd(sent_bytes_, bytes);
  }
  void Reached(Tick t) { reached_ = t; }

  // Per dimension: no more messages and bytes than the run sent, each over at
  // most as many links as the dimension has NPUs, and no more busy time than
  // the larger of the dimension's links busy all the time so far and the
  // serialisation of those bytes (a congestion-unaware model counts it even
  // when messages overlap, so its utilisation may pass 100 %).
  Status DimLoads(const AdvanceReply& r, Tick now, const std::string& who) const;
  // Counts the advances in a row without progress; an error past kMaxIdleAdvances.
  Status Progress(const AdvanceReply& r, bool injected, Tick now, uint64_t in_flight, const std::string& who);
  // Per link: a dimension the network has, no more bytes than the run sent,
  // busy no longer than the time the peer was advanced to; no more links than
  // the network has.
  Status Links(const LinksReply& r, const std::string& who) const;

 private:
  double MaxLinks(int d) const;
  Status Link(const LinkLoad& l, int i, const std::string& who) const;

  const Topology* topology_;
  uint64_t sent_messages_ = 0, sent_bytes_ = 0;
  Tick reached_ = 0;
  uint64_t idle_advances_ = 0;
};

}  // namespace orrery::remote
