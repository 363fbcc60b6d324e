#include "workload/node_recorder.h"

namespace orrery {

NodeRecorder::NodeRecorder(int ranks, int groups) : ranks_(static_cast<size_t>(ranks)), groups_(groups) {
  for (Rank& r : ranks_) {
    for (uint32_t& last : r.slot_last) last = kNoNode;
  }
}

bool NodeRecorder::BeginIteration(int rank, uint32_t nodes) {
  Rank& r = ranks_[rank];
  // Per group counters for the ranks that run only (with rank classes, the representatives).
  if (!r.begun) r.coll_seq.assign(static_cast<size_t>(groups_) + 1, 0);
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
  if (now > rec.start && slot != kSlotNone && r.slot_last[slot] != kNoNode) {
    rec.why = WaitedFor::kSlot;
    rec.pred = r.slot_last[slot];
  }
  rec.start = now;
}

void NodeRecorder::Done(int rank, uint32_t idx, int slot, Tick now) {
  Rank& r = ranks_[rank];
  r.records[Flat(rank, idx)].end = now;
  if (slot != kSlotNone) r.slot_last[slot] = Flat(rank, idx);
}

void NodeRecorder::CollectiveIssued(int rank, uint32_t idx, int group, int stream) {
  Rank& r = ranks_[rank];
  if (stream >= static_cast<int>(r.streams.size())) r.streams.resize(static_cast<size_t>(stream) + 1);
  r.streams[stream].open = idx;
  NodeRecord& rec = r.records[Flat(rank, idx)];
  rec.aux = r.coll_seq[group + 1]++;
  rec.aux2 = static_cast<uint32_t>(r.streams[stream].log.size());
}

void NodeRecorder::OnPhaseChange(int rank, uint64_t cookie, int from_dim, int to_dim, Tick now) {
  Rank& r = ranks_[rank];
  // The collective's stream: the one whose collective in flight it is (O(streams)).
  const uint32_t idx = static_cast<uint32_t>(cookie);
  size_t k = 0;
  while (k + 1 < r.streams.size() && r.streams[k].open != idx) ++k;
  if (r.streams.empty()) r.streams.resize(1);
  Rank::Stream& st = r.streams[k];
  auto bit = [](int dim) { return dim >= 0 && dim < 31 ? dim : 31; };
  if (from_dim != kNoPhase) --st.phases_on[bit(from_dim)];
  if (to_dim != kNoPhase) ++st.phases_on[bit(to_dim)];
  uint32_t dims = 0;
  for (int b = 0; b < 32; ++b) dims |= st.phases_on[b] ? uint32_t{1} << b : 0;
  std::vector<PhaseMark>& log = st.log;
  if (!log.empty() && log.back().dims == dims) return;
  if (!log.empty() && log.back().at == now) {
    log.back().dims = dims;  // several changes at one instant: the last one holds
    return;
  }
  log.push_back(PhaseMark{now, dims});
}

}  // namespace orrery
