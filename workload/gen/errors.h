// The generator's error helpers, in core/parse.h's message format
// "<where> = <value>: <what is wrong>; allowed: <allowed>".
#pragma once
#include <string>
#include <utility>

#include "core/parse.h"

namespace orrery::gen {

inline Status GenValueError(const Where& where, const std::string& value, const std::string& what,
                            const std::string& allowed) {
  return Status::Invalid(where.Describe() + " = " + value + ": " + what + "; allowed: " + allowed);
}

}  // namespace orrery::gen

#define ORRERY_GEN_CONCAT_(a, b) a##b
#define ORRERY_GEN_CONCAT(a, b) ORRERY_GEN_CONCAT_(a, b)
// `lhs = value of expr`, or return its error. Several statements: brace it under an `if`.
#define ORRERY_GEN_ASSIGN_OR_RETURN(lhs, expr) ORRERY_GEN_ASSIGN_(ORRERY_GEN_CONCAT(gen_parsed_, __LINE__), lhs, expr)
#define ORRERY_GEN_ASSIGN_(tmp, lhs, expr) \
  auto tmp = (expr);                       \
  if (!tmp.ok()) return tmp.status();      \
  lhs = std::move(tmp.value())
