// The report's notes on how the simulated ranks' graphs were read and timed
// (RunReport::notes): compute nodes timed by their measured duration beside
// the roofline, rooted collectives without a root, control edges dropped.
#pragma once
#include <string>
#include <vector>

#include "workload/executor.h"

namespace orrery {

// One sentence per thing worth saying; none when the run read its graphs as
// traces always were (every existing report stays as it was).
std::vector<std::string> GraphNotes(const Executor& exec, const CollectiveEngine& engine, bool roofline);

}  // namespace orrery
