#include "extern/yaml_map.h"

#include <map>

#include "core/parse.h"
#include "extern/json_util.h"

namespace orrery {

Status CheckYamlNodes(const YAML::Node& root, const std::string& path, uint64_t limit) {
  std::vector<YAML::Node> todo = {root};
  uint64_t nodes = 0;
  while (!todo.empty()) {
    const YAML::Node n = todo.back();
    todo.pop_back();
    if (++nodes > limit) {
      return Status::Invalid(path + ": more than " + std::to_string(limit) +
                             " YAML nodes with its aliases expanded (an alias counts as a copy of what it names); "
                             "allowed: at most " +
                             std::to_string(limit) + " nodes");
    }
    if (n.IsMap()) {
      for (auto it = n.begin(); it != n.end(); ++it) {
        todo.push_back(it->first);
        todo.push_back(it->second);
      }
    } else if (n.IsSequence()) {
      for (auto it = n.begin(); it != n.end(); ++it) todo.push_back(*it);
    }
  }
  return Status::Ok();
}

Result<YAML::Node> LoadYamlBounded(const std::string& path) {
  ORRERY_PARSE_OR_RETURN(const std::string text, ReadTextFile(path, kMaxYamlBytes));
  YAML::Node root = YAML::Load(text);
  ORRERY_RETURN_IF_ERROR(CheckYamlNodes(root, path));
  return root;
}

Result<YAML::Node> LoadYamlMapping(const std::string& path, const YamlFileText& text) {
  Result<YAML::Node> root{YAML::Node()};
  try {
    root = LoadYamlBounded(path);
  } catch (const YAML::Exception& e) {
    return Status::Invalid(path + ":" + std::to_string(e.mark.line + 1) + ": " + text.syntax + ": " + e.msg);
  }
  if (!root.ok()) {
    const std::string& m = root.status().message();
    // The file cannot be opened: the reader's words; too large, endless or too many nodes: the limit's.
    if (m.find("cannot open file") != std::string::npos) return Status::Invalid(path + ": " + text.unreadable);
    return root.status();
  }
  if (!root->IsMap()) return Status::Invalid(path + ": " + text.not_a_mapping);
  return root;
}

Result<std::vector<YamlEntry>> MappingEntries(const YAML::Node& map, const std::string& path,
                                              const std::string& context) {
  std::vector<YamlEntry> out;
  std::map<std::string, int> seen;  // key -> its first line
  const std::string in = context.empty() ? "" : context + ": ";
  for (auto it = map.begin(); it != map.end(); ++it) {
    const int line = it->first.Mark().line + 1;
    const std::string where = path + ":" + std::to_string(line) + ": " + in;
    if (!it->first.IsScalar()) return Status::Invalid(where + "a key must be a plain name, not a list or mapping");
    const std::string key = it->first.Scalar();
    if (auto [first, added] = seen.try_emplace(key, line); !added) {
      return Status::Invalid(where + "key '" + key + "' is given twice (first on line " +
                             std::to_string(first->second) + "); allowed: each key once");
    }
    out.push_back(YamlEntry{key, it->first, it->second, line});
  }
  return out;
}

}  // namespace orrery
