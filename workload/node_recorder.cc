#include "workload/node_recorder.h"

namespace orrery {

NodeRecorder::NodeRecorder(int ranks, int groups) : ranks_(static_cast<size_t>(ranks)) {
  for (Rank& r : ranks_) r.coll_seq.assign(static_cast<size_t>(groups) + 1, 0);
}

bool NodeRecorder::BeginIteration(int rank, uint32_t nodes) {
  Rank& r = ranks_[rank];
  const uint64_t base = r.begun ? static_cast<uint64_t>(r.records.size()) : 0;
  if (base + nodes >= kNoNode) return false;
  r.base = static_cast<uint32_t>(base);
  r.begun = true;
  r.records.resize(base + nodes);
  return true;
}

void NodeRecorder::Issued(int rank, uint32_t idx, int slot, Tick now) {
  Rank& r = ranks_[rank];
  NodeRecord& rec = r.records[Flat(rank, idx)];
  // Ready earlier than now: the node waited for its slot, which the slot's
  // last holder released just now (ready nodes issue as soon as their slot is free).
  if (now > rec.start && slot < 3 && r.slot_last[slot] != kNoNode) {
    rec.why = WaitedFor::kSlot;
    rec.pred = r.slot_last[slot];
  }
  rec.start = now;
}

void NodeRecorder::Done(int rank, uint32_t idx, int slot, Tick now) {
  Rank& r = ranks_[rank];
  r.records[Flat(rank, idx)].end = now;
  if (slot < 3) r.slot_last[slot] = Flat(rank, idx);
}

void NodeRecorder::OnPhaseChange(int rank, uint64_t, int from_dim, int to_dim, Tick now) {
  Rank& r = ranks_[rank];
  auto bit = [](int dim) { return dim >= 0 && dim < 31 ? dim : 31; };
  if (from_dim != kNoPhase) --r.phases_on[bit(from_dim)];
  if (to_dim != kNoPhase) ++r.phases_on[bit(to_dim)];
  uint32_t dims = 0;
  for (int b = 0; b < 32; ++b) dims |= r.phases_on[b] ? uint32_t{1} << b : 0;
  if (!r.phase_log.empty() && r.phase_log.back().dims == dims) return;
  if (!r.phase_log.empty() && r.phase_log.back().at == now) {
    r.phase_log.back().dims = dims;  // several changes at one instant: the last one holds
    return;
  }
  r.phase_log.push_back(PhaseMark{now, dims});
}

}  // namespace orrery
