// The remote network backend: a network simulator in another process (any
// language) serves the model over plugins/remote/remote.proto.
#pragma once
#include <functional>
#include <memory>
#include <string>

#include "core/status.h"
#include "network/backend.h"

namespace orrery {

// "remote": params "remote-endpoint" (host:port or unix:/path), "remote-model"
// (what to ask the peer for), "remote-timeout-ms".
void RegisterRemoteBackend(BackendRegistry* registry);

// Told of each peer session that ended badly: which client ("client 3
// (127.0.0.1:40112)", "client 1 (pid 812)") and why (text already made printable).
using PeerSessionLog = std::function<void(const std::string& client, const Status& why)>;

// The reference peer: serves Orrery's own analytical or congestion-aware model
// over the protocol to `connections` clients one after another (0: forever).
// `listen` is host:port (port 0 picks one) or unix:/path; `on_listening` is
// called with the bound endpoint before accepting. A client that sends
// garbage, disconnects or is refused ends only its own session: it is logged
// (glog WARNING, and `on_bad_session`), counts toward `connections`, and the
// peer goes on. Errors: the endpoint (exit 2), listening or accepting (exit 1).
Status ServeRemotePeer(const std::string& listen, int connections,
                       const std::function<void(const std::string&)>& on_listening,
                       const PeerSessionLog& on_bad_session = nullptr);

}  // namespace orrery
