// `orrery gen ARGS...`: generate per-rank workloads from a model and a
// parallelism strategy (docs/generator.md). Returns the process exit code
// (0 ok, 2 bad input, 1 environment); messages go to `err`, results to `out`.
#pragma once
#include <ostream>
#include <string>
#include <vector>

namespace orrery {

int RunGenCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace orrery
