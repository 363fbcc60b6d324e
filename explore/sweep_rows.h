// Sweep rows on disk (explore/sweep_rows.cc): the JSON Lines log and the CSV.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "explore/sweep.h"

namespace orrery::sweep {

// A JSON Lines file of rows as read: a last line without its newline (a kill
// mid-write) is not a row; the file itself is left as it is.
struct RowFile {
  std::vector<Row> rows;
  uint64_t torn_bytes = 0;  // the partial last line's bytes (0: none)
};

// Reads a JSON Lines file of rows (none when it does not exist).
Result<RowFile> ReadRows(const std::string& path);

// Writes `rows` sorted by index to `jsonl` and `csv`, each whole or not at
// all (core/output_file.h); the CSV has a column per axis path, in their
// order, and as many dimension columns as the row with the most.
Status WriteTables(const std::vector<std::string>& axis_paths, std::vector<Row> rows, const std::string& jsonl,
                   const std::string& csv);

// A count read from a JSON value (a row's, a folder identity's), checked
// through core/parse.h: a negative, fractional, too large or non-number value
// throws std::invalid_argument with the message; never cast. Instantiated for
// nlohmann::json and nlohmann::ordered_json.
template <typename Json>
uint64_t JsonCountOrThrow(const Json& v, const std::string& key, uint64_t max);

}  // namespace orrery::sweep
