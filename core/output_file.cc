#include "core/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <utility>

#include "core/parse.h"

namespace orrery {

namespace {

constexpr size_t kBufferBytes = size_t{1} << 20;

std::string Named(const std::string& label, const std::string& path) {
  return label.empty() ? path : label + " = \"" + path + "\"";
}

// Written in place: devices, FIFOs and the kernel's own files.
bool InPlace(const std::string& path, const struct stat* st) {
  if (path.rfind("/dev/", 0) == 0 || path.rfind("/proc/", 0) == 0) return true;
  return st != nullptr && !S_ISREG(st->st_mode) && !S_ISDIR(st->st_mode);
}

// The file a path names: a symbolic link followed to the file it points at,
// so the rename replaces that file and not the link.
std::string Target(const std::string& path) {
  struct stat lst;
  if (lstat(path.c_str(), &lst) != 0 || !S_ISLNK(lst.st_mode)) return path;
  char resolved[PATH_MAX];
  return realpath(path.c_str(), resolved) ? std::string(resolved) : path;
}

std::string DirOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string BaseOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

Status OpenError(const std::string& label, const std::string& path, int err) {
  const std::string msg = Named(label, path) + ": cannot write it (" + std::strerror(err) +
                          "); allowed: a file path in an existing, writable directory";
  const bool bad_path = err == ENOENT || err == ENOTDIR || err == EISDIR || err == ENAMETOOLONG || err == ELOOP;
  return bad_path ? Status::Invalid(msg) : Status::Env(msg);
}

}  // namespace

OutputFile::OutputFile(OutputFile&& other) noexcept { *this = std::move(other); }

OutputFile& OutputFile::operator=(OutputFile&& other) noexcept {
  if (this == &other) return *this;
  Discard();
  fd_ = std::exchange(other.fd_, -1);
  in_place_ = other.in_place_;
  target_existed_ = other.target_existed_;
  sync_ = other.sync_;
  path_ = std::move(other.path_);
  label_ = std::move(other.label_);
  target_ = std::move(other.target_);
  temp_ = std::exchange(other.temp_, std::string());
  buffer_ = std::move(other.buffer_);
  error_ = std::move(other.error_);
  return *this;
}

OutputFile::~OutputFile() { Discard(); }

void OutputFile::Discard() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!in_place_ && !temp_.empty()) ::unlink(temp_.c_str());
  temp_.clear();
}

Result<OutputFile> OutputFile::Create(const std::string& path, const std::string& label, Sync sync) {
  if (path.empty()) {
    return Status::Invalid(label + " = \"\": empty; allowed: a file path in an existing, writable directory");
  }
  OutputFile f;
  f.path_ = path;
  f.label_ = label;
  f.sync_ = sync == Sync::kYes;
  f.target_ = Target(path);
  struct stat st;
  const bool exists = ::stat(f.target_.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) return OpenError(label, path, EISDIR);
  f.in_place_ = InPlace(path, exists ? &st : nullptr);
  f.target_existed_ = exists;
  if (f.in_place_) {
    f.fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (f.fd_ < 0) return OpenError(label, path, errno);
    return f;
  }
  // An existing file we may not write stays refused, as opening it would be.
  if (exists && ::access(f.target_.c_str(), W_OK) != 0) return OpenError(label, path, errno);
  static std::atomic<unsigned> counter{0};
  const std::string stem = DirOf(f.target_) + "/." + BaseOf(f.target_) + ".tmp-" + std::to_string(::getpid()) + "-";
  for (int attempt = 0; f.fd_ < 0; ++attempt) {
    f.temp_ = stem + std::to_string(counter.fetch_add(1));
    f.fd_ = ::open(f.temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (f.fd_ < 0 && (errno != EEXIST || attempt > 100)) {
      const int err = errno;
      f.temp_.clear();
      return OpenError(label, path, err);
    }
  }
  if (exists) (void)::fchmod(f.fd_, st.st_mode & 07777);  // the file keeps its permissions
  return f;
}

Status OutputFile::Failed(const char* doing, int err) {
  const bool kept = !in_place_;
  std::string msg = Named(label_, path_) + ": " + doing + " failed (" + std::strerror(err) + ")";
  if (kept) msg += target_existed_ ? "; the file is left as it was" : "; no file was left";
  Discard();
  error_ = Status::Env(msg);
  return error_;
}

Status OutputFile::Flush() {
  size_t done = 0;
  while (done < buffer_.size()) {
    const ssize_t n = ::write(fd_, buffer_.data() + done, buffer_.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Failed("writing it", n < 0 ? errno : EIO);
    done += static_cast<size_t>(n);
  }
  buffer_.clear();
  return Status::Ok();
}

Status OutputFile::Write(std::string_view data) {
  if (!error_.ok()) return error_;
  if (fd_ < 0) return error_ = Status::Env(Named(label_, path_) + ": written after it was closed");
  buffer_.append(data);
  return buffer_.size() >= kBufferBytes ? Flush() : Status::Ok();
}

Status OutputFile::Commit() {
  if (!error_.ok()) return error_;
  if (fd_ < 0) return Status::Ok();
  ORRERY_RETURN_IF_ERROR(Flush());
  if (!in_place_ && sync_ && ::fsync(fd_) != 0) return Failed("writing it to disk", errno);
  const int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0) return Failed("closing it", errno);
  if (in_place_) return Status::Ok();
  if (::rename(temp_.c_str(), target_.c_str()) != 0) return Failed("replacing it", errno);
  temp_.clear();
  const int dir = sync_ ? ::open(DirOf(target_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
  if (dir >= 0) {  // the rename itself on disk (best effort: some file systems refuse)
    (void)::fsync(dir);
    ::close(dir);
  }
  return Status::Ok();
}

Status WriteFileWhole(const std::string& path, std::string_view text, const std::string& label, OutputFile::Sync sync) {
  ORRERY_PARSE_OR_RETURN(OutputFile f, OutputFile::Create(path, label, sync));
  ORRERY_RETURN_IF_ERROR(f.Write(text));
  return f.Commit();
}

namespace {

struct Identity {
  bool exists = false, regular = false;
  dev_t dev = 0;
  ino_t ino = 0;
  std::string canonical;
};

Identity IdentityOf(const std::string& path) {
  Identity id;
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    id.exists = true;
    id.regular = S_ISREG(st.st_mode);
    id.dev = st.st_dev;
    id.ino = st.st_ino;
  }
  std::error_code ec;
  const std::filesystem::path c = std::filesystem::weakly_canonical(std::filesystem::absolute(path, ec), ec);
  id.canonical = ec ? path : c.string();
  return id;
}

bool SameFile(const Identity& a, const Identity& b) {
  if (a.exists && b.exists) return a.regular && b.regular && a.dev == b.dev && a.ino == b.ino;
  return !a.exists && !b.exists && a.canonical == b.canonical;
}

}  // namespace

Status CheckOutputsAreNotInputs(const std::vector<NamedFile>& outputs, const std::vector<NamedFile>& inputs) {
  std::vector<std::pair<const NamedFile*, Identity>> seen;
  for (const NamedFile& in : inputs) {
    if (in.path.empty()) continue;
    Identity id = IdentityOf(in.path);
    if (id.exists && id.regular) seen.emplace_back(&in, std::move(id));  // what is not there cannot be lost
  }
  const size_t first_output = seen.size();
  for (const NamedFile& out : outputs) {
    if (out.path.empty() || InPlace(out.path, nullptr)) continue;
    const Identity id = IdentityOf(out.path);
    if (id.exists && !id.regular) continue;
    for (size_t k = 0; k < seen.size(); ++k) {
      if (!SameFile(id, seen[k].second)) continue;
      const NamedFile& other = *seen[k].first;
      const std::string same = out.flag + " = \"" + out.path + "\" names the same file as " + other.flag + " (" +
                               other.path + ")";
      if (k < first_output) {
        return Status::Invalid(same + ", an input; writing it would destroy that input: give " + out.flag +
                               " another path");
      }
      return Status::Invalid(same + ", another output; one would overwrite the other: give each output its own path");
    }
    seen.emplace_back(&out, id);
  }
  return Status::Ok();
}

std::vector<std::string> TraceFilesOf(const std::string& prefix) {
  std::vector<std::string> files;
  if (prefix.empty()) return files;
  const std::string dir = DirOf(prefix), base = BaseOf(prefix) + ".";
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= base.size() + 3 || name.compare(0, base.size(), base) != 0 ||
        name.compare(name.size() - 3, 3, ".et") != 0) {
      continue;
    }
    const std::string digits = name.substr(base.size(), name.size() - base.size() - 3);
    if (std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      files.push_back(dir + "/" + name);
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace orrery
