// Every file the program writes goes through here, so an output is whole or
// absent: written to a temporary file beside it (".NAME.tmp-PID-N"), every
// write checked, flushed to disk (fsync), closed, and renamed over the target
// only then. A failure removes the temporary file and leaves an earlier file
// of that name as it was; the Status names the file and the system's reason
// (exit 1). A path that is not a regular file — a character device such as
// /dev/stdout, /dev/null or /dev/full, a FIFO, anything under /dev/ or /proc/ —
// cannot be renamed over: it is written in place, every write still checked.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace orrery {

class OutputFile {
 public:
  OutputFile() = default;
  OutputFile(OutputFile&& other) noexcept;
  OutputFile& operator=(OutputFile&& other) noexcept;
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  // Not committed (a failed run): the temporary file is removed, the target untouched.
  ~OutputFile();

  // Whether Commit waits for the data to reach the disk (fsync) before the
  // rename, so a power loss too leaves the old file or the new one. kNoSync
  // is for sets of thousands of files (a trace per rank: 9 ms each on a VM's
  // disk), which a killed process still leaves whole or absent.
  enum class Sync { kYes, kNo };

  // Creates the temporary file (or opens a device) at once, so a bad path
  // fails before any work. `label` names the file in messages: a flag
  // ("--timeline" gives `--timeline = "PATH": ...`) or "" (the path alone).
  // A missing folder or a path that is a folder: exit 2; no permission, no
  // space: exit 1.
  static Result<OutputFile> Create(const std::string& path, const std::string& label = "", Sync sync = Sync::kYes);

  // Buffered; the first failure is kept and returned by every later call.
  Status Write(std::string_view data);
  // Flushes, syncs, closes and renames over the target.
  Status Commit();
  // Open: created and neither committed nor failed.
  bool is_open() const { return fd_ >= 0; }
  // The first failure (Write, Commit), or OK.
  const Status& status() const { return error_; }
  const std::string& path() const { return path_; }

 private:
  Status Flush();
  Status Failed(const char* doing, int err);
  void Discard();
  int fd_ = -1;
  bool in_place_ = false, target_existed_ = false, sync_ = true;
  std::string path_, label_, target_, temp_, buffer_;
  Status error_;
};

// `text` written to `path` through an OutputFile.
Status WriteFileWhole(const std::string& path, std::string_view text, const std::string& label = "",
                      OutputFile::Sync sync = OutputFile::Sync::kYes);

// A file a command reads or writes, with the flag that names it.
struct NamedFile {
  std::string flag;  // "--system-configuration", "the spec", ...
  std::string path;
};

// Refuses (exit 2, naming both flags and the path) an output that is one of
// the inputs, or two outputs that are one file: the same file by device and
// inode, or, for outputs that do not exist yet, the same canonical path.
// Only regular files count: devices and FIFOs (/dev/stdout for both) are never
// refused, and neither are inputs that do not exist (a preset's name, a
// topology notation) or empty paths.
Status CheckOutputsAreNotInputs(const std::vector<NamedFile>& outputs, const std::vector<NamedFile>& inputs);

// The files of a trace set on disk: PREFIX.<rank>.et for every rank present.
std::vector<std::string> TraceFilesOf(const std::string& prefix);

}  // namespace orrery
