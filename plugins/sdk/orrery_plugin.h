// The whole plugin ABI. A plugin is a shared library exporting one C symbol,
// `orrery_plugin_info`, that returns a versioned description; the host checks
// the version, then calls `register_fn` with the registries it may add to.
//
// This header needs only the standard library (a test compiles it with
// `-I plugins/sdk` alone). A plugin includes, beside it, the interface of what
// it provides:
//   a network backend     network/backend.h          (NetworkBackend, BackendRegistry)
//   a memory backend      memory/backend.h           (MemoryBackend, MemoryRegistry)
//   a collective algorithm system/collective_plugin.h (CollectiveRequest, CustomGraph, CollectiveRegistry)
// Bump ORRERY_PLUGIN_ABI_VERSION on any change to this file or to an interface
// a plugin implements (those three, core/event_queue.h, core/registry.h, ...).
#pragma once
#include <cstddef>
#include <cstdint>

// 2: the event queue's inline scheduling and its reserved kinds (relays,
// core/event_queue.h) changed since 1; a plugin built against 1 must be rebuilt.
// 3: the event queue changed again: its layout (run_end_), the inline RunOne
// (it stops at run_end_, before placeholder events) and the inline Append
// (it calls EventQueue::AppendToNewBlock, which a host of version 2 lacks).
#define ORRERY_PLUGIN_ABI_VERSION 3
#define ORRERY_EXPORT __attribute__((visibility("default")))

namespace orrery {

class BackendRegistry;     // network/backend.h
class CollectiveRegistry;  // system/collective_plugin.h
class MemoryRegistry;      // memory/backend.h

// What a plugin may register into.
struct PluginRegistries {
  BackendRegistry* network = nullptr;
  CollectiveRegistry* collectives = nullptr;  // may be null in hosts without a system layer
  MemoryRegistry* memory = nullptr;           // may be null in hosts without a memory layer
};

}  // namespace orrery

extern "C" {
struct OrreryPluginInfo {
  uint32_t abi_version;  // ORRERY_PLUGIN_ABI_VERSION the plugin was built with
  const char* name;      // the plugin's name, e.g. "my-net"
  const char* version;   // the plugin's own version, e.g. "0.3.1"
  // Registers everything the plugin provides. On failure, returns false and
  // writes a sentence into `error` (at most `error_size` bytes with the NUL).
  bool (*register_fn)(orrery::PluginRegistries* registries, char* error, size_t error_size);
};
// The entry point every plugin defines.
ORRERY_EXPORT const OrreryPluginInfo* orrery_plugin_info(void);
}
