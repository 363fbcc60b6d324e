#include "extern/json_util.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>

#include "core/parse.h"

namespace orrery {

namespace {

// Closes a file descriptor when it goes out of scope.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

std::string Mib(uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

Status TooLarge(const std::string& path, uint64_t max_bytes, const std::string& size) {
  return Status::Invalid(path + ": " + size + "; allowed: at most " + std::to_string(max_bytes) + " bytes (" +
                         Mib(max_bytes) + ")");
}

// Waits up to `idle_ms` for `fd` to have data or its writer to go: false on a timeout.
Result<bool> WaitReadable(int fd, int idle_ms, const std::string& path) {
  pollfd p{fd, POLLIN, 0};
  while (true) {
    const int r = ::poll(&p, 1, idle_ms);
    if (r > 0) return true;
    if (r == 0) return false;
    if (errno != EINTR) return Status::Env(path + ": cannot wait for data: " + std::strerror(errno));
  }
}

std::string Seconds(int ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", ms / 1000.0);
  return buf;
}

}  // namespace

// A regular file is checked against the limit by its size first (the trace
// digest reads every rank's file); anything else that can be read (a pipe,
// FIFO, /dev/stdin, a device) is opened without blocking and read to its end,
// waiting at most `idle_ms` for each piece. A directory is refused (it opens,
// and its "size" is huge on some file systems). Either way at most `max_bytes`.
Result<BoundedFileReader> BoundedFileReader::Open(const std::string& path, uint64_t max_bytes, int idle_ms) {
  struct stat st {};
  const bool known = ::stat(path.c_str(), &st) == 0;
  if (known && S_ISDIR(st.st_mode)) return Status::Invalid(path + ": is a directory; a file is expected here");
  const bool regular = known && S_ISREG(st.st_mode);
  BoundedFileReader r;
  r.path_ = path;
  r.max_bytes_ = max_bytes;
  r.idle_ms_ = idle_ms;
  r.fifo_ = known && S_ISFIFO(st.st_mode);
  r.fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | (regular ? 0 : O_NONBLOCK));
  if (r.fd_ < 0) return Status::Invalid(path + ": cannot open file (does it exist?)");
  if (regular) {
    if (static_cast<uint64_t>(st.st_size) > max_bytes) {
      return TooLarge(path, max_bytes, std::to_string(st.st_size) + " bytes, too large to read");
    }
    r.size_hint_ = static_cast<uint64_t>(st.st_size);
  }
  return Result<BoundedFileReader>(std::move(r));
}

BoundedFileReader::BoundedFileReader(BoundedFileReader&& o) noexcept { *this = std::move(o); }

BoundedFileReader& BoundedFileReader::operator=(BoundedFileReader&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(o.path_);
    fd_ = o.fd_;
    o.fd_ = -1;
    max_bytes_ = o.max_bytes_;
    read_ = o.read_;
    size_hint_ = o.size_hint_;
    idle_ms_ = o.idle_ms_;
    fifo_ = o.fifo_;
    heard_ = o.heard_;
  }
  return *this;
}

BoundedFileReader::~BoundedFileReader() {
  if (fd_ >= 0) ::close(fd_);
}

Result<size_t> BoundedFileReader::Read(char* buf, size_t n) {
  while (true) {
    const ssize_t got = ::read(fd_, buf, n);
    if (got > 0) {
      if (read_ + static_cast<uint64_t>(got) > max_bytes_) {
        return TooLarge(path_, max_bytes_, "more than " + std::to_string(max_bytes_) + " bytes (an endless input?)");
      }
      read_ += static_cast<uint64_t>(got);
      heard_ = true;
      return static_cast<size_t>(got);
    }
    if (got < 0 && errno == EINTR) continue;
    // A FIFO: before its writer came (data or its end), 0 bytes is not the end.
    const bool wait = (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) || (got == 0 && fifo_ && !heard_);
    if (!wait) {
      if (got < 0) return Status::Invalid(path_ + ": read error: " + std::strerror(errno));
      return size_t{0};  // the end
    }
    ORRERY_PARSE_OR_RETURN(const bool ready, WaitReadable(fd_, idle_ms_, path_));
    if (!ready) {
      return Status::Invalid(path_ + ": no data for " + Seconds(idle_ms_) +
                             " (a pipe or FIFO nobody writes to?); allowed: a file, or a pipe that delivers its data");
    }
    heard_ = true;
  }
}

Result<std::string> ReadTextFile(const std::string& path, uint64_t max_bytes, int idle_ms) {
  ORRERY_PARSE_OR_RETURN(BoundedFileReader reader, BoundedFileReader::Open(path, max_bytes, idle_ms));
  std::string text;
  text.reserve(static_cast<size_t>(reader.size_hint()));
  std::vector<char> buf(size_t{1} << 16);
  while (true) {
    ORRERY_PARSE_OR_RETURN(const size_t n, reader.Read(buf.data(), buf.size()));
    if (n == 0) return text;
    text.append(buf.data(), n);
  }
}

BoundedStreamBuf::int_type BoundedStreamBuf::underflow() {
  if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
  if (!status_.ok()) return traits_type::eof();
  Result<size_t> n = reader_->Read(buf_.data(), buf_.size());
  if (!n.ok()) {
    status_ = n.status();
    return traits_type::eof();
  }
  if (n.value() == 0) return traits_type::eof();
  setg(buf_.data(), buf_.data(), buf_.data() + n.value());
  return traits_type::to_int_type(*gptr());
}

namespace {

// "file:line:column" of byte `pos` in `text`.
std::string Position(const std::string& path, const std::string& text, size_t pos) {
  size_t line = 1, col = 1;
  for (size_t i = 0; i < pos && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return path + ":" + std::to_string(line) + ":" + std::to_string(col);
}

}  // namespace

Result<nlohmann::json> ReadJsonFile(const std::string& path) {
  Result<std::string> text = ReadTextFile(path);
  if (!text.ok()) return text.status();
  const std::string& s = text.value();
  // A key given twice in one object would silently keep the last value: refused.
  std::vector<std::set<std::string>> keys;  // per open object
  std::string duplicate;
  auto callback = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    (void)depth;
    using E = nlohmann::json::parse_event_t;
    if (event == E::object_start) keys.emplace_back();
    if (event == E::object_end && !keys.empty()) keys.pop_back();
    if (event == E::key && !keys.empty() && duplicate.empty()) {
      const std::string k = parsed.get<std::string>();
      if (!keys.back().insert(k).second) duplicate = k;
    }
    return true;
  };
  try {
    nlohmann::json j = nlohmann::json::parse(s, callback, true, /*ignore_comments=*/false);
    if (!duplicate.empty()) return Status::Invalid(path + ": key \"" + duplicate + "\" is given twice in one object");
    return j;
  } catch (const nlohmann::json::parse_error& e) {
    std::string what = e.what();
    auto p = what.find("syntax error");
    if (p != std::string::npos) what = what.substr(p);
    return Status::Invalid(Position(path, s, e.byte == 0 ? 0 : e.byte - 1) + ": malformed JSON: " + what);
  } catch (const nlohmann::json::exception& e) {
    // A number beyond a double (1e309) is refused while parsing; name it and where it is.
    std::string what = e.what();
    const auto q1 = what.find('\'');
    const auto q2 = q1 == std::string::npos ? std::string::npos : what.find('\'', q1 + 1);
    if (q2 != std::string::npos) {
      const std::string token = what.substr(q1 + 1, q2 - q1 - 1);
      const size_t at = s.find(token);
      return Status::Invalid((at == std::string::npos ? path : Position(path, s, at)) + ": " + token +
                             ": not a finite number; allowed: numbers within a double's range (about 1.8e308)");
    }
    auto p = what.find("] ");
    return Status::Invalid(path + ": unreadable JSON: " + (p == std::string::npos ? what : what.substr(p + 2)));
  }
}

std::string UnknownKeyMessage(const std::string& key, const std::vector<std::string>& valid) {
  std::string msg = "unknown key '" + key + "'";
  const std::string near = ClosestMatch(key, valid);
  if (!near.empty()) msg += " (did you mean '" + near + "'?)";
  msg += "; valid keys: " + JoinStrings(valid, ", ");
  return msg;
}

}  // namespace orrery
