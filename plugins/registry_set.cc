#include "plugins/registry_set.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "plugins/remote/remote_backend.h"

namespace orrery {
namespace {

// Optional backends built as plugins (ns3) load on demand from the build tree
// or from <prefix>/lib/orrery/plugins next to the installed binary.
void FindOptionalPlugin(const std::string& backend, const BackendRegistry& backends, std::vector<std::string>* paths) {
  if ((backend != "ns3" && backend != "help") || backends.Find("ns3")) return;
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  std::string dir = n > 0 ? std::string(self, static_cast<size_t>(n)) : "";
  dir = dir.substr(0, dir.rfind('/'));
  for (const std::string& candidate :
       {dir + "/../lib/orrery/plugins/liborrery_ns3.so", dir + "/../plugins/liborrery_ns3.so"}) {
    if (access(candidate.c_str(), R_OK) == 0) {
      paths->push_back(candidate);
      return;
    }
  }
}

}  // namespace

std::vector<std::string> PluginPaths(const std::vector<std::string>& flags) {
  std::vector<std::string> paths;
  if (const char* env = std::getenv("ORRERY_PLUGINS")) {
    const std::string list = env;
    for (size_t start = 0; start <= list.size();) {
      const size_t end = std::min(list.find(':', start), list.size());
      if (end > start) paths.push_back(list.substr(start, end - start));
      start = end + 1;
    }
  }
  paths.insert(paths.end(), flags.begin(), flags.end());
  return paths;
}

Result<std::unique_ptr<RegistrySet>> BuildRegistrySet(const std::vector<std::string>& plugin_flags,
                                                      const std::string& backend) {
  auto set = std::make_unique<RegistrySet>();
  RegisterBuiltinBackends(&set->backends);
  RegisterRemoteBackend(&set->backends);
  RegisterBuiltinMemoryBackends(&set->memories);
  std::vector<std::string> paths = PluginPaths(plugin_flags);
  FindOptionalPlugin(backend, set->backends, &paths);
  PluginRegistries registries{&set->backends, &set->algorithms, &set->memories};
  for (const std::string& path : paths) {
    auto p = LoadPlugin(path, &registries);
    if (!p.ok()) return p.status();
    set->loaded.push_back(std::move(p.value()));
  }
  return set;
}

}  // namespace orrery
