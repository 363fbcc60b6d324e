#include "core/event_queue.h"

#include <algorithm>

#include "core/status.h"

namespace orrery {

EventId EventQueue::ScheduleAt(Tick at, EventHandler* handler, uint32_t kind, uint64_t arg) {
  ORRERY_CHECK(at >= now_, "event scheduled in the past");
  const uint64_t seq = next_seq_++;
  heap_.push_back(Event{at, seq, handler, arg, kind});
  std::push_heap(heap_.begin(), heap_.end(), Later());
  return seq;
}

EventId EventQueue::ScheduleClosureAt(Tick at, Closure fn) {
  uint32_t slot;
  if (!closures_.free_slots.empty()) {
    slot = closures_.free_slots.back();
    closures_.free_slots.pop_back();
    closures_.slots[slot] = std::move(fn);
  } else {
    slot = static_cast<uint32_t>(closures_.slots.size());
    closures_.slots.push_back(std::move(fn));
  }
  return ScheduleAt(at, &closures_, 0, slot);
}

void EventQueue::ClosureRunner::HandleEvent(uint32_t, uint64_t arg) {
  Closure fn = std::move(slots[arg]);
  slots[arg] = Closure();
  free_slots.push_back(static_cast<uint32_t>(arg));
  fn();
}

void EventQueue::Cancel(EventId id) {
  if (id < next_seq_) cancelled_.insert(id);
}

bool EventQueue::RunOne() {
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), Later());
    Event ev = heap_.back();
    heap_.pop_back();
    if (!cancelled_.empty()) {
      auto it = cancelled_.find(ev.seq);
      if (it != cancelled_.end()) {
        cancelled_.erase(it);
        continue;
      }
    }
    now_ = ev.time;
    ++executed_;
    ev.handler->HandleEvent(ev.kind, ev.arg);
    return true;
  }
  return false;
}

void EventQueue::Run(Tick until) {
  while (!heap_.empty()) {
    if (heap_.front().time > until) return;
    RunOne();
  }
}

}  // namespace orrery
