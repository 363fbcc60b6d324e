#include "core/status.h"

#include <glog/logging.h>

namespace orrery {

// Through glog's fatal path: the message names the caller's file and line, glog
// prints the stack trace and aborts.
void CheckFailed(const char* file, int line, const char* cond, const std::string& msg) {
  google::LogMessageFatal(file, line).stream() << "orrery: internal error: check '" << cond << "' failed: " << msg;
  std::abort();  // not reached: LogMessageFatal aborts in its destructor
}

}  // namespace orrery
