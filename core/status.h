// Errors that reach the user travel as a Status up to main (exit code 2 for
// bad input, 1 for the environment); bugs use ORRERY_CHECK, which aborts through
// glog (LOG(FATAL): message, file:line of the check, stack trace). This header
// stays free of glog so that plugins built against the SDK need only it.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

namespace orrery {

enum class StatusCode { kOk = 0, kInvalidInput = 2, kEnvironment = 1 };

class Status {
 public:
  Status() = default;
  static Status Ok() { return Status(); }
  static Status Invalid(std::string msg) { return Status(StatusCode::kInvalidInput, std::move(msg)); }
  static Status Env(std::string msg) { return Status(StatusCode::kEnvironment, std::move(msg)); }
  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  int exit_code() const { return static_cast<int>(code_); }
  // The same status with `context` before its message ("--generate=...: ").
  Status Prefixed(const std::string& context) const { return ok() ? *this : Status(code_, context + message_); }

 private:
  Status(StatusCode c, std::string m) : code_(c), message_(std::move(m)) {}
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

template <typename T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}          // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {}  // NOLINT
  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  T& value() { return *value_; }
  const T& value() const { return *value_; }
  T& operator*() { return *value_; }
  T* operator->() { return &*value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

[[noreturn]] void CheckFailed(const char* file, int line, const char* cond, const std::string& msg);

}  // namespace orrery

#define ORRERY_CHECK(cond, msg)                                           \
  do {                                                                    \
    if (!(cond)) ::orrery::CheckFailed(__FILE__, __LINE__, #cond, (msg)); \
  } while (0)

#define ORRERY_RETURN_IF_ERROR(expr) \
  do {                               \
    ::orrery::Status _st = (expr);   \
    if (!_st.ok()) return _st;       \
  } while (0)
