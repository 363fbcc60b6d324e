// `orrery sweep SPEC --mpi`: the points of a sweep over MPI ranks (optional
// build, cmake -DORRERY_MPI=AUTO|ON|OFF). Rank 0 reads the existing output
// (resume), hands out the points one at a time to whichever worker asks
// next, appends each row it gets back, and writes the tables in index order:
// the same bytes as `--jobs=1`. Workers read the spec themselves and simulate.
#pragma once
#include <functional>
#include <string>

#include "core/status.h"
#include "explore/sweep.h"

namespace orrery::sweep {

// True when this binary was built with MPI.
bool MpiBuilt();

// Runs the sweep as one rank of an MPI job. On rank 0 `finish` is called with
// the result (and the dry-run text) and its return value is the exit code;
// a worker returns 0, or 2 when it cannot read the spec. Without MPI built:
// exit 2 with how to build it.
int RunSweepMpi(const std::string& spec_path, const Options& options,
                const std::function<int(const Result<Summary>&, const std::string& dry_run_text)>& finish);

}  // namespace orrery::sweep
