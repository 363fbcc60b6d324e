#include "plugins/remote/peer_checks.h"

#include <algorithm>
#include <cstdio>

#include "plugins/remote/peer_text.h"

namespace orrery::remote {

namespace {

Status DimError(const std::string& who, int d, const std::string& field, uint64_t value, Tick now,
                const std::string& max, const std::string& why) {
  return Status::Env(who + "reported dims[" + std::to_string(d) + "]." + field + " = " + std::to_string(value) +
                     " at t=" + std::to_string(now) +
                     " ns: more than the run could have put on the dimension; allowed: at most " + max + " (" + why);
}

}  // namespace

// The dimension's directed links, at most (the capacity bound's count).
double PeerChecks::MaxLinks(int d) const {
  const orrery::Dim& x = topology_->dims()[d];
  const double per_npu = x.block == Block::kFullyConnected ? x.npus : x.block == Block::kRingUni ? 1 : 2;
  return static_cast<double>(topology_->npus()) * per_npu * std::max(1, x.links_per_npu);
}

Status PeerChecks::DimLoads(const AdvanceReply& r, Tick now, const std::string& who) const {
  for (int d = 0; d < r.dims_size(); ++d) {
    const orrery::Dim& x = topology_->dims()[d];
    const uint64_t hops = static_cast<uint64_t>(std::max(2, x.npus));
    const std::string via = ", each over at most " + std::to_string(hops) + " links of dimension " + std::to_string(d) +
                            " (" + BlockName(x.block) + " of " + std::to_string(x.npus) + " NPUs))";
    const uint64_t max_messages = SatMul(sent_messages_, hops), max_bytes = SatMul(sent_bytes_, hops);
    const std::string sent = " Orrery sent so far" + via;
    if (r.dims(d).messages() > max_messages) {
      return DimError(who, d, "messages", r.dims(d).messages(), now, std::to_string(max_messages),
                      "the " + std::to_string(sent_messages_) + " message(s)" + sent);
    }
    if (r.dims(d).bytes() > max_bytes) {
      return DimError(who, d, "bytes", r.dims(d).bytes(), now, std::to_string(max_bytes),
                      "the " + std::to_string(sent_bytes_) + " byte(s)" + sent);
    }
    const double capacity = MaxLinks(d) * static_cast<double>(now);
    const double serial = static_cast<double>(max_bytes) / topology_->BytesPerNs(d);
    const double max_busy = std::max(capacity, serial) * (1 + 1e-9) + 1;  // the models truncate; doubles round
    if (static_cast<double>(r.dims(d).busy_ns()) > max_busy) {
      char shown[64];
      std::snprintf(shown, sizeof(shown), "%.0f ns", max_busy);
      return DimError(who, d, "busy_ns", r.dims(d).busy_ns(), now, shown,
                      "the larger of its " + std::to_string(static_cast<uint64_t>(MaxLinks(d))) +
                          " links busy all the time so far and the serialisation of the " +
                          std::to_string(sent_bytes_) + " byte(s)" + sent);
    }
  }
  return Status::Ok();
}

Status PeerChecks::Progress(const AdvanceReply& r, bool injected, Tick now, uint64_t in_flight,
                            const std::string& who) {
  if (injected || r.delivered_size() != 0 || r.next_event_ns() == UINT64_MAX) {
    idle_advances_ = 0;
    return Status::Ok();
  }
  if (++idle_advances_ <= kMaxIdleAdvances) return Status::Ok();
  return Status::Env(
      who + "answered " + std::to_string(idle_advances_) + " advances in a row (the last to t=" + std::to_string(now) +
      " ns, announcing its next event at t=" + std::to_string(r.next_event_ns()) +
      " ns) without a delivery while Orrery sent it nothing; " + "the limit is " + std::to_string(kMaxIdleAdvances) +
      " round trips without progress (" + std::to_string(in_flight) + " message(s) in flight)");
}

Status PeerChecks::Links(const LinksReply& r, const std::string& who) const {
  double max = 0;
  for (int d = 0; d < topology_->num_dims(); ++d) max += MaxLinks(d);
  if (r.links_size() > max) {
    return Status::Env(who + "reported " + std::to_string(r.links_size()) + " links; the network has at most " +
                       std::to_string(static_cast<uint64_t>(max)));
  }
  for (int i = 0; i < r.links_size(); ++i) ORRERY_RETURN_IF_ERROR(Link(r.links(i), i, who));
  return Status::Ok();
}

Status PeerChecks::Link(const LinkLoad& l, int i, const std::string& who) const {
  const std::string what = who + "reported links[" + std::to_string(i) + "] (\"" + Printable(l.name(), 64) + "\")";
  if (l.dim() >= static_cast<uint32_t>(topology_->num_dims())) {
    return Status::Env(what + " on dimension " + std::to_string(l.dim()) + "; the network has " +
                       std::to_string(topology_->num_dims()) + " dimension(s)");
  }
  if (l.bytes() > sent_bytes_) {
    return Status::Env(what + " bytes = " + std::to_string(l.bytes()) + ": more than the run sent; allowed: at most " +
                       std::to_string(sent_bytes_) + " (every byte Orrery sent, each crossing a link once)");
  }
  if (l.busy_ns() > reached_) {
    return Status::Env(what + " busy_ns = " + std::to_string(l.busy_ns()) +
                       ": busy longer than the run; allowed: at most " + std::to_string(reached_) +
                       " ns (the time the peer was advanced to, a utilisation of 100 %)");
  }
  return Status::Ok();
}

}  // namespace orrery::remote
