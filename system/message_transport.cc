#include "system/message_transport.h"

#include <algorithm>

namespace orrery {

MessageTransport::MessageTransport(EventQueue* queue, const Topology* topology, bool mirror)
    : queue_(queue), topology_(topology), mirror_(mirror) {
  DecidePaths();
  switch_stats_.resize(std::max(1, topology->num_dims()));
}

void MessageTransport::SetRankClasses(const RankClassMap* classes) {
  classes_ = classes;
  DecidePaths();
  class_extra_.assign(std::max(1, topology_->num_dims()), DimStats{});
}

void MessageTransport::Send(int src, int dst, uint64_t bytes, uint64_t tag, uint64_t sub, RecvClient* on_sent,
                            uint64_t sent_cookie) {
  uint32_t slot;
  if (!free_msgs_.empty()) {
    slot = free_msgs_.back();
    free_msgs_.pop_back();
  } else {
    slot = static_cast<uint32_t>(msgs_.size());
    msgs_.emplace_back();
  }
  // Rank classes: a message to a member that is not simulated goes (over its own path) to the member's representative.
  msgs_[slot] = Msg{src, classes_ ? classes_->Simulated(src, dst) : dst, tag, sub, on_sent, sent_cookie};
  ++messages_sent_;
  if (!classes_) {
    backend_->Send(src, dst, bytes, slot);
    return;
  }
  // The message stands for one per member of the sending class: count the
  // others too (the backend's per-dimension counters grow by this one's share).
  const uint64_t w = classes_->size[classes_->class_of[src]];
  class_messages_ += w;
  const std::vector<DimStats>& st = backend_->dim_stats();
  class_before_.assign(st.begin(), st.end());
  backend_->Send(src, dst, bytes, slot);
  for (size_t d = 0; d < st.size() && d < class_extra_.size(); ++d) {
    class_extra_[d].messages += (w - 1) * (st[d].messages - class_before_[d].messages);
    class_extra_[d].bytes += (w - 1) * (st[d].bytes - class_before_[d].bytes);
    class_extra_[d].busy_ns = SatAdd(class_extra_[d].busy_ns, SatMul(w - 1, st[d].busy_ns - class_before_[d].busy_ns));
  }
}

void MessageTransport::SwitchArrive(uint64_t tag, int group_base, int dim, int members, SwitchWaiter* waiter) {
  if (mirror_ || classes_) {  // with classes every collective lies inside one class
    waiter->OnSwitchReady();  // every member is in the same state at the same time
    return;
  }
  const auto key = std::make_tuple(tag, group_base, dim);
  Rendezvous& r = rendezvous_[key];
  r.waiters.push_back(waiter);
  if (++r.arrived < members) return;
  std::vector<SwitchWaiter*> ready = std::move(r.waiters);
  rendezvous_.erase(key);
  for (SwitchWaiter* w : ready) w->OnSwitchReady();
}

}  // namespace orrery
