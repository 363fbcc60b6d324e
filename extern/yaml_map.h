// The entries of a YAML mapping, read checked: every key a plain scalar and
// given once. yaml-cpp keeps a repeated key (the second silently shadows or
// doubles the first) and throws on a key that is itself a list or mapping;
// every reader of Orrery's YAML files goes through here instead.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "core/status.h"

namespace orrery {

// Every YAML input is read through LoadYamlMapping or LoadYaml
// (extern/config_values.h): at most kMaxYamlBytes, and at most kMaxYamlNodes
// nodes with every alias expanded. An alias is a second copy to every reader
// that walks the tree, so a file of a few lines ("billion laughs") stands for
// 10^9 nodes; the count takes one pass over the text, whatever it stands for.
inline constexpr uint64_t kMaxYamlBytes = uint64_t{64} << 20;
inline constexpr uint64_t kMaxYamlNodes = uint64_t{1} << 24;

// The YAML text of `path` parsed (a bounded read), its expanded nodes
// counted first. Throws yaml-cpp's exceptions on syntax errors, as YAML::Load does.
Result<YAML::Node> LoadYamlBounded(const std::string& path);
// The nodes of `text`'s first document with every alias expanded, counted
// from the parser's events in one pass over the text: an error past `limit`.
Status CheckYamlNodes(const std::string& text, const std::string& path, uint64_t limit = kMaxYamlNodes);

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
