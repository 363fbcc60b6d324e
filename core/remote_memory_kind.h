// ASTRA-sim's remote (disaggregated) memory models: the one enum that the
// remote-memory JSON reader (extern/astra_config.h) fills and the memory model
// (memory/remote_memory.h) runs. Standard library only.
#pragma once

namespace orrery {

// NO_MEMORY_EXPANSION, PER_NPU_MEMORY_EXPANSION, PER_NODE_MEMORY_EXPANSION, MEMORY_POOL.
enum class RemoteMemoryKind { kNone, kPerNpu, kPerNode, kPool };

}  // namespace orrery
