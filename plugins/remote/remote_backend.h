// The remote network backend: a network simulator in another process (any
// language) serves the model over plugins/remote/remote.proto.
#pragma once
#include <memory>
#include <string>

#include "core/status.h"
#include "network/backend.h"

namespace orrery {

// "remote": params "remote-endpoint" (host:port or unix:/path), "remote-model"
// (what to ask the peer for), "remote-timeout-ms".
void RegisterRemoteBackend(BackendRegistry* registry);

// The reference peer: serves Orrery's own analytical or congestion-aware model
// over the protocol on one accepted connection (returns when Orrery says Bye).
// `listen` is host:port (port 0 picks one) or unix:/path; `on_listening` is
// called with the bound endpoint before accepting.
Status ServeRemotePeer(const std::string& listen, int connections,
                       const std::function<void(const std::string&)>& on_listening);

}  // namespace orrery
