#include "system/algorithm.h"

#include "system/chunk.h"
#include "system/chunk_store.h"
#include "system/message_transport.h"
#include "system/npu_sys.h"

namespace orrery {

void Algorithm::Bundle(uint64_t bytes, bool processed) {
  const ChunkContext* c = chunk_->ctx_;
  if (processed) {
    // The reduction follows the hop: the queue relays (core/event_queue.h,
    // kRelayKind) without waking the chunk in between.
    c->queue->ScheduleAfter(c->endpoint_delay_ns, chunk_, Chunk::kBundleReducing, c->ReduceCost(bytes));
    return;
  }
  c->queue->ScheduleAfter(c->endpoint_delay_ns, chunk_, Chunk::kBundleArrived, 0);
}

void Algorithm::Send(int dst, uint64_t bytes) {
  // The common case, inline and without a call (so no saved registers): a
  // direct send to the peer of the last one, over a route priced for this
  // size.
  Chunk* s = chunk_;
  MessageTransport* t = s->ctx_->transport;
  FixedRoute* route = s->peer_route_;
  if (t->direct() && s->peer_rank_ == dst && route != nullptr && route->Priced(bytes)) {
    t->SendDirect(s->rank_, dst, bytes, route, s->peer_, Chunk::kDelivered, static_cast<uint64_t>(s->rank_));
    return;
  }
  SendGeneral(dst, bytes);
}

void Algorithm::SendGeneral(int dst, uint64_t bytes) {
  const ChunkContext* c = chunk_->ctx_;
  MessageTransport* t = c->transport;
  // The receiving chunk is in the directory (its rank has started this
  // collective; it stays until it has taken every message sent to it): when
  // the backend knows the delay now and nothing redirects messages, deliver
  // straight to it.
  if (t->direct()) {
    Chunk* s = chunk_;
    if (s->peer_rank_ != dst) {
      if (Chunk* found = c->store->Receiver(s->tag_, dst)) {
        s->peer_ = found;
        s->peer_rank_ = dst;
        s->peer_route_ = t->RouteOf(rank(), dst);
      }
    }
    if (s->peer_rank_ == dst) {
      t->SendDirect(rank(), dst, bytes, s->peer_route_, s->peer_, Chunk::kDelivered, static_cast<uint64_t>(rank()));
      return;
    }
  } else if (t->Mirrored(rank(), dst)) {
    return;  // the peer's identical send is modelled at the receive
  }
  t->Send(rank(), dst, bytes, chunk_->tag_, 0, nullptr, 0);
}

void Algorithm::Recv(int src, uint64_t bytes) {
  // Both ends are calls with nothing after them (jumps: no saved registers).
  if (chunk_->ctx_->transport->redirects()) {
    RecvRedirected(src, bytes);
    return;
  }
  chunk_->PostRecvFrom(src);
}

void Algorithm::RecvRedirected(int src, uint64_t bytes) {
  MessageTransport* t = chunk_->ctx_->transport;
  // Symmetric run: `src` sends us this message at this very instant (it runs
  // the same schedule), so it arrives after the network delay from src to us.
  if (t->Mirrored(rank(), src)) t->Send(src, rank(), bytes, chunk_->tag_, 0, nullptr, 0);
  chunk_->PostRecvFrom(t->SimulatedPeer(rank(), src));
}

void Algorithm::StartTimer(uint64_t delay_ns, uint64_t arg) {
  chunk_->ctx_->queue->ScheduleAfter(delay_ns, chunk_, Chunk::kTimer, arg);
}

void Algorithm::Exit() { chunk_->owner_->ProceedToNextPhase(chunk_); }

}  // namespace orrery
