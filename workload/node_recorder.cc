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

}  // namespace orrery
