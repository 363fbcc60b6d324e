// Shared helpers for reading configuration files with precise error messages.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/names.h"  // ClosestMatch, JoinStrings
#include "core/status.h"

namespace orrery {

// Reads and parses a JSON file; a syntax error names file:line:column.
Result<nlohmann::json> ReadJsonFile(const std::string& path);
// Reads a whole file into a string.
Result<std::string> ReadTextFile(const std::string& path);

// "unknown key 'x' (did you mean 'y'?); valid keys: a, b, c"
std::string UnknownKeyMessage(const std::string& key, const std::vector<std::string>& valid);

}  // namespace orrery
