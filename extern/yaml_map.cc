#include "extern/yaml_map.h"

#include <map>

namespace orrery {

Result<YAML::Node> LoadYamlMapping(const std::string& path, const YamlFileText& text) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    return Status::Invalid(path + ": " + text.unreadable);
  } catch (const YAML::Exception& e) {
    return Status::Invalid(path + ":" + std::to_string(e.mark.line + 1) + ": " + text.syntax + ": " + e.msg);
  }
  if (!root.IsMap()) return Status::Invalid(path + ": " + text.not_a_mapping);
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
