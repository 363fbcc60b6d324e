// The executor's diagnostics: checks before the run (communicator group
// membership) and the errors that name where a run went wrong (time past
// 2^64 ns, deadlock).
#include <algorithm>
#include <cstdio>

#include "extern/et_io.h"
#include "workload/executor.h"

namespace orrery {

// Rules checked before the run: a rank may issue a collective only on a
// communicator group it belongs to (the engine indexes the rank's position in
// it), and a message is at most 2^63 - 1 bytes (the system layer carries a
// message's size in 63 bits).
Status Executor::CheckGroups() const {
  constexpr uint64_t kMaxMessageBytes = (uint64_t{1} << 63) - 1;
  for (size_t r = 0; r < npus_.size(); ++r) {
    const NpuGraph& g = npus_[r].graph;
    for (const WorkNode& n : g.nodes) {
      const bool message = n.kind == NodeKind::kColl || n.kind == NodeKind::kSend || n.kind == NodeKind::kRecv;
      if (message && n.comm_size > kMaxMessageBytes) {
        return Status::Invalid(g.path + ": node " + std::to_string(n.id) + " (rank " + std::to_string(r) +
                               "): comm_size = " + std::to_string(n.comm_size) + " bytes: at most " +
                               std::to_string(kMaxMessageBytes) + " (2^63 - 1) bytes are allowed");
      }
      if (n.kind != NodeKind::kColl || n.group < 0) continue;
      const CommGroup& cg = engine_->group(n.group);
      if (std::binary_search(cg.ranks.begin(), cg.ranks.end(), static_cast<int>(r))) continue;
      std::string members;
      for (size_t i = 0; i < cg.ranks.size() && i < 8; ++i) members += (i ? ", " : "") + std::to_string(cg.ranks[i]);
      if (cg.ranks.size() > 8) members += ", ... (" + std::to_string(cg.ranks.size()) + " ranks)";
      return Status::Invalid(g.path + ": node " + std::to_string(n.id) + " (rank " + std::to_string(r) +
                             "): " + CollectiveName(n.collective) + " on communicator group \"" + cg.name +
                             "\", but rank " + std::to_string(r) +
                             " is not a member of it (members: " + (members.empty() ? "none" : members) + ")");
    }
  }
  return Status::Ok();
}

void Executor::TimeOverflow(int rank, const WorkNode& n, const char* what, double ns) {
  char num[32];
  std::snprintf(num, sizeof(num), "%.2g", ns);
  std::string v = num;
  if (auto plus = v.find("e+"); plus != std::string::npos) v.erase(plus + 1, 1);
  Fail(Status::Invalid("simulated time would exceed 2^64 ns at rank " + std::to_string(rank) + " node " +
                       std::to_string(n.id) + " (" + what + " " + v + " ns at t=" + std::to_string(queue_->Now()) +
                       " ns)"));
}

Status Executor::CheckFinished() const {
  if (!failure_.ok()) return failure_;
  if (queue_->overflowed()) return OverflowError();
  return DeadlockError();
}

// A network or memory delay overflowed: the error names the first node in flight.
Status Executor::OverflowError() const {
  std::string where;
  for (size_t r = 0; r < npus_.size() && where.empty(); ++r) {
    const NpuState& s = npus_[r];
    for (uint32_t i = 0; i < s.graph.nodes.size(); ++i) {
      if (s.issued[i] != 1) continue;
      const WorkNode& n = s.graph.nodes[i];
      where = " at rank " + std::to_string(r) + " node " + std::to_string(n.id) + " (" + NodeTypeName(n.kind) +
              " in flight";
      break;
    }
  }
  if (where.empty()) where = " (";
  char d[32];
  std::snprintf(d, sizeof(d), "%.2g", static_cast<double>(queue_->overflow_delay()));
  std::string delay = queue_->overflow_delay() == kTickMax ? std::string("2^64 or more") : std::string(d);
  if (auto plus = delay.find("e+"); plus != std::string::npos) delay.erase(plus + 1, 1);
  return Status::Invalid("simulated time would exceed 2^64 ns" + where + "; a network or memory delay of " + delay +
                         " ns at t=" + std::to_string(queue_->overflow_at()) + " ns)");
}

// Ok when every rank finished; else the first 8 stuck ranks with what each
// waits for (its first 4 nodes in flight), then the messages the collectives
// still wait for.
Status Executor::DeadlockError() const {
  std::string msg;
  int stuck = 0;
  for (size_t r = 0; r < npus_.size(); ++r) {
    const NpuState& s = npus_[r];
    if (s.finished) continue;
    if (++stuck > 8) continue;
    msg += "\n  rank " + std::to_string(r) + ": " + std::to_string(s.graph.nodes.size() - s.done) +
           " node(s) unfinished" + DescribeWaits(s);
  }
  if (stuck == 0) return Status::Ok();
  if (stuck > 8) msg += "\n  ... and " + std::to_string(stuck - 8) + " more rank(s)";
  std::vector<std::string> waits;
  for (int r = 0; r < engine_->npus() && waits.size() < 8; ++r) engine_->npu(r).DescribePending(&waits);
  for (size_t i = 0; i < waits.size() && i < 8; ++i) msg += "\n  " + waits[i];
  return Status::Invalid("deadlock at t=" + std::to_string(queue_->Now()) + " ns: " + std::to_string(stuck) +
                         " rank(s) cannot finish:" + msg);
}

// A stuck rank's first 4 nodes in flight: "; node 12 (COMM_RECV_NODE from rank 3, ...)".
std::string Executor::DescribeWaits(const NpuState& s) const {
  std::string waits;
  int shown = 0;
  for (uint32_t i = 0; i < s.graph.nodes.size() && shown < 4; ++i) {
    if (s.issued[i] != 1) continue;
    const WorkNode& n = s.graph.nodes[i];
    ++shown;
    waits += "; node " + std::to_string(n.id) + " (" + NodeTypeName(n.kind);
    if (n.kind == NodeKind::kRecv) {
      waits += " from rank " + std::to_string(n.comm_src) + ", tag " + std::to_string(n.comm_tag) + ", " +
               std::to_string(n.comm_size) + " bytes; rank " + std::to_string(n.comm_src) + " never sends it";
    } else if (n.kind == NodeKind::kColl) {
      waits += std::string(" ") + CollectiveName(n.collective) + ", " + std::to_string(n.comm_size) +
               " bytes; some rank in its group never issues it";
    }
    waits += ")";
  }
  return waits;
}

}  // namespace orrery
