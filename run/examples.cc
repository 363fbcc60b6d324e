#include "run/examples.h"

#include <fstream>

#include "core/output_file.h"
#include "core/units.h"
#include "gen/toy_traces.h"

namespace orrery {

std::string ExampleNames() { return "default, data-parallel"; }

// Inputs in a temporary folder, gone after the run: not worth waiting for the disk.
static Status WriteFile(const std::string& path, const std::string& text) {
  return WriteFileWhole(path, text, "", OutputFile::Sync::kNo);
}

Status WriteExample(const std::string& name, const std::string& dir, RunConfig* config) {
  if (name != "default" && name != "data-parallel") {
    return Status::Invalid("--example = \"" + name + "\": unknown example; valid: " + ExampleNames());
  }
  const bool dp = name == "data-parallel";
  ORRERY_RETURN_IF_ERROR(
      WriteFile(dir + "/network.yml",
                "topology: [ Ring ]\nnpus_count: [ 8 ]\nbandwidth: [ 50.0 ]  # GB/s\nlatency: [ 500.0 ]  # ns\n"));
  ORRERY_RETURN_IF_ERROR(WriteFile(dir + "/system.json", R"({
  "scheduling-policy": "LIFO",
  "endpoint-delay": 10,
  "active-chunks-per-dimension": 1,
  "preferred-dataset-splits": 4,
  "all-reduce-implementation": ["ring"],
  "all-gather-implementation": ["ring"],
  "reduce-scatter-implementation": ["ring"],
  "all-to-all-implementation": ["ring"],
  "collective-optimization": "localBWAware",
  "local-mem-bw": 50,
  "boost-mode": 0
}
)"));
  ORRERY_RETURN_IF_ERROR(WriteFile(dir + "/memory.json", "{\n  \"memory-type\": \"NO_MEMORY_EXPANSION\"\n}\n"));
  if (dp) {
    DataParallelSpec spec;
    spec.npus = 8;
    spec.layers = 4;
    spec.allreduce_bytes = kBytesPerMiB;
    ORRERY_RETURN_IF_ERROR(WriteDataParallelTraces(spec, dir + "/trace"));
  } else {
    ORRERY_RETURN_IF_ERROR(WriteSingleCollectiveTraces(8, CollectiveKind::kAllReduce, kBytesPerMiB, dir + "/trace"));
  }
  config->files.workload_prefix = dir + "/trace";
  config->files.network = dir + "/network.yml";
  config->files.system = dir + "/system.json";
  config->files.remote_memory = dir + "/memory.json";
  return Status::Ok();
}

}  // namespace orrery
