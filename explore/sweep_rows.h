// Sweep rows on disk (explore/sweep_rows.cc): the JSON Lines log and the CSV.
#pragma once
#include <string>
#include <vector>

#include "core/status.h"
#include "explore/sweep.h"

namespace orrery::sweep {

// Reads a JSON Lines file of rows (none when it does not exist); a last line
// without its newline (a kill mid-write) is dropped and the file cut back to
// the last whole line.
Result<std::vector<Row>> ReadRows(const std::string& path);

// Writes `rows` sorted by index to `jsonl` and `csv` (each through a
// temporary file renamed over it); the CSV has as many dimension columns as
// the row with the most.
Status WriteTables(const std::vector<std::string>& axis_paths, std::vector<Row> rows, const std::string& jsonl,
                   const std::string& csv);

}  // namespace orrery::sweep
