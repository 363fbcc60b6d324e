// Every name a command may use, filled in one place: the built-in network
// backends (analytical, congestion-aware), the remote backend, the built-in
// memory backends, and what plugins register — those named in ORRERY_PLUGINS
// (a.so:b.so), then --plugin, then ns-3's plugin when the run asks for the
// ns3 backend and it sits beside the binary. `orrery run`, `sweep` and
// `search` build theirs here. Read-only once built, so the simulations of a
// sweep or a search share it across threads (a plugin's factories are called
// from several threads at once).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "memory/backend.h"
#include "network/backend.h"
#include "plugins/loader.h"
#include "system/collective_plugin.h"

namespace orrery {

struct RegistrySet {
  BackendRegistry backends;
  CollectiveRegistry algorithms;
  MemoryRegistry memories;
  std::vector<LoadedPlugin> loaded;  // in load order
};

// The plugin paths of ORRERY_PLUGINS followed by `flags` (--plugin, repeatable).
std::vector<std::string> PluginPaths(const std::vector<std::string>& flags);

// `backend`: the network backend the command will name ("" when it does not
// know yet); "ns3" (or "help") loads ns-3's plugin when it was built.
Result<std::unique_ptr<RegistrySet>> BuildRegistrySet(const std::vector<std::string>& plugin_flags,
                                                      const std::string& backend = "");

}  // namespace orrery
