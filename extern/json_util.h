// Shared helpers for reading configuration files with precise error messages.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <streambuf>
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

// The same bounds, piece by piece, for a reader that streams (a report
// parsed as it is read keeps only what it folds, not the file's text).
class BoundedFileReader {
 public:
  static Result<BoundedFileReader> Open(const std::string& path, uint64_t max_bytes = kMaxTextFileBytes,
                                        int idle_ms = kReadIdleMs);
  BoundedFileReader(BoundedFileReader&& o) noexcept;
  BoundedFileReader& operator=(BoundedFileReader&& o) noexcept;
  ~BoundedFileReader();
  // Up to `n` bytes into `buf`: how many, 0 at the end; an error past the limit, on a read error, or
  // when a pipe stays silent for the idle time.
  Result<size_t> Read(char* buf, size_t n);
  // A regular file's size (0 otherwise): what a whole read reserves.
  uint64_t size_hint() const { return size_hint_; }

 private:
  BoundedFileReader() = default;
  std::string path_;
  int fd_ = -1;
  uint64_t max_bytes_ = 0, read_ = 0, size_hint_ = 0;
  int idle_ms_ = kReadIdleMs;
  bool fifo_ = false, heard_ = false;
};

// A std::streambuf over a BoundedFileReader: an error ends the stream, and
// status() says why (check it when a parse of the stream fails or ends early).
class BoundedStreamBuf : public std::streambuf {
 public:
  explicit BoundedStreamBuf(BoundedFileReader* reader) : reader_(reader), buf_(size_t{1} << 16) {}
  const Status& status() const { return status_; }

 protected:
  int_type underflow() override;

 private:
  BoundedFileReader* reader_;
  std::vector<char> buf_;
  Status status_;
};

// "unknown key 'x' (did you mean 'y'?); valid keys: a, b, c"
std::string UnknownKeyMessage(const std::string& key, const std::vector<std::string>& valid);

}  // namespace orrery
