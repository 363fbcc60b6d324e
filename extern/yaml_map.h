// The entries of a YAML mapping, read checked: every key a plain scalar and
// given once. yaml-cpp keeps a repeated key (the second silently shadows or
// doubles the first) and throws on a key that is itself a list or mapping;
// every reader of Orrery's YAML files goes through here instead.
#pragma once
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "core/status.h"

namespace orrery {

// What a reader says of its file when it cannot be read, does not parse, or
// is not a mapping: "<path>: <unreadable>", "<path>:<line>: <syntax>: <what>",
// "<path>: <not_a_mapping>".
struct YamlFileText {
  const char* unreadable;
  const char* syntax;
  const char* not_a_mapping;
};
// The file's top-level mapping, or the error in the reader's words.
Result<YAML::Node> LoadYamlMapping(const std::string& path, const YamlFileText& text);

struct YamlEntry {
  std::string key;
  YAML::Node key_node, value;
  int line = 0;  // 1-based line of the key
};

// `map` must be a mapping; `path` and `context` ("base", "model") name it in errors:
// "<path>:<line>: <context>: key 'x' is given twice (first on line N)".
Result<std::vector<YamlEntry>> MappingEntries(const YAML::Node& map, const std::string& path,
                                              const std::string& context);

}  // namespace orrery
