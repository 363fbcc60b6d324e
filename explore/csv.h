// A strict CSV reader (RFC 4180): a header row, then records with exactly as
// many fields as the header. Fields are separated by commas; a field in double
// quotes may hold commas, line breaks and doubled quotes (""). Records end in
// LF or CRLF; the last may lack it. Anything else is an error naming file:line:
//   sweep.csv:7: 5 field(s), the header (line 1) has 6; allowed: exactly 6 comma-separated fields
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace orrery {

struct CsvTable {
  std::string path;                            // as given; used in messages
  std::vector<std::string> header;             // column names, unique and non-empty
  std::vector<std::vector<std::string>> rows;  // each header.size() fields, unquoted
  std::vector<int> lines;                      // the 1-based line where each row starts

  // The column's index, or -1.
  int Column(const std::string& name) const;
};

// Parses `text`; `path` only names the source in messages.
Result<CsvTable> ParseCsv(std::string_view text, const std::string& path);
// Reads and parses a file.
Result<CsvTable> ReadCsv(const std::string& path);

}  // namespace orrery
