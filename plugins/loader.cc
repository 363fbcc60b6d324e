#include "plugins/loader.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <exception>

#include "memory/backend.h"
#include "network/backend.h"
#include "system/collective_plugin.h"

namespace orrery {

namespace {

// The plugin's info: the file loaded as a shared library, its entry point
// called, and its ABI version and fields checked.
Result<const OrreryPluginInfo*> LoadPluginInfo(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return Status::Invalid("plugin " + path + ": no such file");
  if (!S_ISREG(st.st_mode)) return Status::Invalid("plugin " + path + ": not a regular file");
  // dlopen searches the library path for names without a slash; we load files.
  const std::string file = path.find('/') == std::string::npos ? "./" + path : path;
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    return Status::Invalid("plugin " + path + ": cannot be loaded as a shared library (" + (why ? why : "unknown") +
                           "); build it with orrery_add_plugin() from the installed SDK");
  }
  using InfoFn = const OrreryPluginInfo* (*)();
  auto info_fn = reinterpret_cast<InfoFn>(dlsym(handle, "orrery_plugin_info"));
  if (!info_fn) {
    return Status::Invalid("plugin " + path +
                           ": is a shared library but not an Orrery plugin (it does not export orrery_plugin_info)");
  }
  const OrreryPluginInfo* info = nullptr;
  try {
    info = info_fn();
  } catch (...) {
    return Status::Invalid("plugin " + path + ": orrery_plugin_info() threw an exception");
  }
  if (!info) return Status::Invalid("plugin " + path + ": orrery_plugin_info() returned null");
  if (info->abi_version != ORRERY_PLUGIN_ABI_VERSION) {
    return Status::Invalid("plugin " + path + " (" + (info->name ? info->name : "?") + ") was built for plugin ABI " +
                           std::to_string(info->abi_version) + " but this orrery speaks ABI " +
                           std::to_string(ORRERY_PLUGIN_ABI_VERSION) +
                           "; rebuild the plugin against this orrery's installed SDK");
  }
  if (!info->name || !info->register_fn) {
    return Status::Invalid("plugin " + path + ": its OrreryPluginInfo lacks a name or a register function");
  }
  return info;
}

// Registration goes into a scratch registry first so that a failing plugin
// leaves nothing half-registered, and collisions are caught by name.
struct Scratch {
  BackendRegistry network;
  CollectiveRegistry collectives;
  MemoryRegistry memory;
};

// "plugin PATH (NAME)", how the messages after loading name a plugin.
std::string Named(const LoadedPlugin& p) { return "plugin " + p.path + " (" + p.name + ")"; }

Status RegisterIntoScratch(const OrreryPluginInfo& info, const LoadedPlugin& out, const PluginRegistries& registries,
                           Scratch* scratch) {
  PluginRegistries mine;
  mine.network = &scratch->network;
  // A plugin sees only the registries this host offers (null otherwise).
  mine.collectives = registries.collectives ? &scratch->collectives : nullptr;
  mine.memory = registries.memory ? &scratch->memory : nullptr;
  char error[512] = {0};
  bool ok = false;
  try {
    ok = info.register_fn(&mine, error, sizeof(error));
  } catch (const std::exception& e) {
    return Status::Invalid(Named(out) + ": registration threw: " + e.what());
  } catch (...) {
    return Status::Invalid(Named(out) + ": registration threw an unknown exception");
  }
  if (!ok) {
    error[sizeof(error) - 1] = '\0';
    return Status::Invalid(Named(out) + ": registration failed: " + (error[0] ? error : "no reason given"));
  }
  return Status::Ok();
}

Status CheckNetworkNames(const Scratch& scratch, const LoadedPlugin& out, const PluginRegistries& registries) {
  for (const std::string& name : scratch.network.Names()) {
    if (registries.network->Find(name)) {
      return Status::Invalid(Named(out) + " registers network backend '" + name +
                             "', which already exists (built in or from another plugin); rename it");
    }
  }
  return Status::Ok();
}

Status AddMemoryBackends(const Scratch& scratch, LoadedPlugin& out, const PluginRegistries& registries) {
  for (const std::string& name : scratch.memory.Names()) {
    if (!registries.memory) {
      return Status::Invalid(Named(out) + " registers memory backend '" + name +
                             "' but this host takes no memory backends");
    }
    if (registries.memory->Find(name)) {
      return Status::Invalid(Named(out) + " registers memory backend '" + name + "', which already exists; rename it");
    }
  }
  for (const std::string& name : scratch.memory.Names()) {
    const MemoryRegistry::Entry* e = scratch.memory.Find(name);
    ORRERY_RETURN_IF_ERROR(registries.memory->Register(name, e->description, e->factory));
    out.memory_backends.push_back(name);
  }
  return Status::Ok();
}

Status AddCollectiveAlgorithms(const Scratch& scratch, LoadedPlugin& out, const PluginRegistries& registries) {
  for (const std::string& name : scratch.collectives.Names()) {
    if (!registries.collectives) {
      return Status::Invalid(Named(out) + " registers collective algorithm '" + name +
                             "' but this host takes network backends only");
    }
    if (registries.collectives->Find(name)) {
      return Status::Invalid(Named(out) + " registers collective algorithm '" + name +
                             "', which already exists; rename it");
    }
  }
  for (const std::string& name : scratch.collectives.Names()) {
    const CollectiveRegistry::Entry* e = scratch.collectives.Find(name);
    std::string err;
    if (!registries.collectives->Register(name, e->description, e->build, &err)) {
      return Status::Invalid(Named(out) + ": " + err);
    }
    out.collective_algorithms.push_back(name);
  }
  return Status::Ok();
}

Status AddNetworkBackends(const Scratch& scratch, LoadedPlugin& out, const PluginRegistries& registries) {
  for (const std::string& name : scratch.network.Names()) {
    const BackendRegistry::Entry* e = scratch.network.Find(name);
    ORRERY_RETURN_IF_ERROR(registries.network->Register(name, e->description, e->factory));
    out.network_backends.push_back(name);
  }
  return Status::Ok();
}

}  // namespace

Result<LoadedPlugin> LoadPlugin(const std::string& path, PluginRegistries* registries) {
  auto info = LoadPluginInfo(path);
  if (!info.ok()) return info.status();
  LoadedPlugin out;
  out.path = path;
  out.name = info.value()->name;
  out.version = info.value()->version ? info.value()->version : "";
  out.abi_version = info.value()->abi_version;
  Scratch scratch;
  ORRERY_RETURN_IF_ERROR(RegisterIntoScratch(*info.value(), out, *registries, &scratch));
  ORRERY_RETURN_IF_ERROR(CheckNetworkNames(scratch, out, *registries));
  ORRERY_RETURN_IF_ERROR(AddMemoryBackends(scratch, out, *registries));
  ORRERY_RETURN_IF_ERROR(AddCollectiveAlgorithms(scratch, out, *registries));
  ORRERY_RETURN_IF_ERROR(AddNetworkBackends(scratch, out, *registries));
  return out;  // the library stays loaded for the life of the process
}

}  // namespace orrery
