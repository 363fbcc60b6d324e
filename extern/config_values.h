// Checked reads of single values from parsed YAML and JSON documents: every
// number goes through core/parse (whole text, finite, in range), every wrong
// type is an error naming the file, the line (YAML) or key path (JSON), the key
// and the value:
//   net.yml:4: bandwidth_gbps = "1.6TB/s": not a number (trailing "TB/s"); allowed: ...
//   sys.json: endpoint-delay = "abc": expected a number, found a string; allowed: ...
#pragma once
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "core/parse.h"
#include "core/status.h"

namespace orrery {

// Reads and parses a YAML file; a syntax error names file:line:column, and no
// yaml-cpp exception escapes.
Result<YAML::Node> LoadYaml(const std::string& path);
// "file:line" of a node (1-based line), or "file" when the node has no mark.
Where YamlWhere(const std::string& path, const YAML::Node& node, const std::string& key);
// The text of a mapping key; an error when the key is not a plain scalar.
Result<std::string> YamlKey(const std::string& path, const YAML::Node& key_node);

Result<double> YamlDouble(const std::string& path, const YAML::Node& node, const std::string& key, DoubleRange range);
Result<int64_t> YamlInt(const std::string& path, const YAML::Node& node, const std::string& key, int64_t min,
                        int64_t max);
// A scalar used as a name (block, backend): lists and mappings are errors.
// `what` names the expected kind in the message ("name", "value").
Result<std::string> YamlString(const std::string& path, const YAML::Node& node, const std::string& key,
                               const std::string& what = "name");

// JSON values: `key` is the path inside the document, e.g. "endpoint-delay" or
// "all-reduce-implementation[1]"; JSON has no line numbers here.
Result<double> JsonDouble(const std::string& path, const nlohmann::json& value, const std::string& key,
                          DoubleRange range);
Result<int64_t> JsonInt(const std::string& path, const nlohmann::json& value, const std::string& key, int64_t min,
                        int64_t max);
Result<uint64_t> JsonUint(const std::string& path, const nlohmann::json& value, const std::string& key, uint64_t min,
                          uint64_t max);
// A switch: true/false or 0/1 (ASTRA-sim writes 0 and 1).
Result<bool> JsonFlag(const std::string& path, const nlohmann::json& value, const std::string& key);
Result<std::string> JsonString(const std::string& path, const nlohmann::json& value, const std::string& key,
                               const std::string& allowed);

}  // namespace orrery
