// Small embedded examples a newcomer can run without any input files.
#pragma once
#include <string>

#include "core/status.h"
#include "run/run.h"

namespace orrery {

// Writes the example's inputs into `dir` and fills in a RunConfig for them.
// "default": 8 NPUs on a ring (50 GB/s, 500 ns), one 1 MiB all-reduce, ring
// algorithm, 4 chunks — ASTRA-sim's own regression example.
Status WriteExample(const std::string& name, const std::string& dir, RunConfig* config);
std::string ExampleNames();

}  // namespace orrery
