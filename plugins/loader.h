// Loads plugins (shared libraries) and lets them register their backends. A
// plugin is opened with RTLD_NOW | RTLD_LOCAL and never unloaded.
#pragma once
#include <string>
#include <vector>

#include "core/status.h"
#include "plugins/sdk/orrery_plugin.h"

namespace orrery {

struct LoadedPlugin {
  std::string path;
  std::string name;
  std::string version;
  uint32_t abi_version = 0;
  std::vector<std::string> network_backends;  // what it registered
  std::vector<std::string> collective_algorithms;
  std::vector<std::string> memory_backends;
};

Result<LoadedPlugin> LoadPlugin(const std::string& path, PluginRegistries* registries);

}  // namespace orrery
