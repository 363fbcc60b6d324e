// Shared helpers for reading configuration files with precise error messages.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/names.h"  // ClosestMatch, JoinStrings
#include "core/status.h"

namespace orrery {

// Files read whole (JSON configurations, CSV tables) at most this many bytes,
// and reports (report/report_reader.cc) at most kMaxReportFileBytes: a
// larger or endless input (/dev/zero, a pipe that never ends) is refused
// once that many bytes are read, naming the file and the limit.
inline constexpr uint64_t kMaxTextFileBytes = uint64_t{256} << 20;
inline constexpr uint64_t kMaxReportFileBytes = uint64_t{1} << 30;
// A pipe, FIFO or device that delivers nothing for this long is an error,
// not a wait without end (a FIFO nobody opens for writing).
inline constexpr int kReadIdleMs = 60000;

// Reads and parses a JSON file (at most kMaxTextFileBytes); a syntax error names file:line:column.
Result<nlohmann::json> ReadJsonFile(const std::string& path);
// Reads a whole file into a string, at most `max_bytes`; a non-regular file
// (pipe, FIFO, device) is read without blocking on it for more than `idle_ms`
// at a time. The message names the file and the limit.
Result<std::string> ReadTextFile(const std::string& path, uint64_t max_bytes = kMaxTextFileBytes,
                                 int idle_ms = kReadIdleMs);

// "unknown key 'x' (did you mean 'y'?); valid keys: a, b, c"
std::string UnknownKeyMessage(const std::string& key, const std::vector<std::string>& valid);

}  // namespace orrery
