#include "extern/config_values.h"

#include "extern/json_util.h"
#include "extern/yaml_map.h"

namespace orrery {
namespace {

std::string MarkText(const std::string& path, const YAML::Mark& m) {
  if (m.line < 0) return path;
  return path + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
}

// What a YAML node is, for "expected a number, found a list".
const char* YamlKind(const YAML::Node& n) {
  if (!n.IsDefined() || n.IsNull()) return "nothing";
  if (n.IsSequence()) return "a list";
  if (n.IsMap()) return "a mapping";
  return "a scalar";
}

std::string YamlShown(const YAML::Node& n) {
  if (n.IsScalar()) return "\"" + n.Scalar() + "\"";
  YAML::Emitter e;
  e << YAML::Flow << n;
  std::string s = e.good() ? std::string(e.c_str()) : std::string("?");
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

const char* JsonKind(const nlohmann::json& v) {
  switch (v.type()) {
    case nlohmann::json::value_t::null: return "null";
    case nlohmann::json::value_t::object: return "an object";
    case nlohmann::json::value_t::array: return "a list";
    case nlohmann::json::value_t::string: return "a string";
    case nlohmann::json::value_t::boolean: return "a boolean";
    case nlohmann::json::value_t::binary: return "binary data";
    default: return "a number";
  }
}

std::string JsonShown(const nlohmann::json& v) {
  std::string s = v.dump();
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

}  // namespace

Result<YAML::Node> LoadYaml(const std::string& path) {
  try {
    return LoadYamlBounded(path);
  } catch (const YAML::ParserException& e) {
    return Status::Invalid(MarkText(path, e.mark) + ": malformed YAML: " + e.msg);
  } catch (const YAML::Exception& e) {
    return Status::Invalid(MarkText(path, e.mark) + ": unreadable YAML: " + e.msg);
  }
}

Where YamlWhere(const std::string& path, const YAML::Node& node, const std::string& key) {
  const int line = node.IsDefined() && node.Mark().line >= 0 ? node.Mark().line + 1 : 0;
  return Where{path, line, key};
}

Result<std::string> YamlKey(const std::string& path, const YAML::Node& key_node) {
  if (!key_node.IsScalar()) {
    return ValueError(YamlWhere(path, key_node, "key"), YamlShown(key_node),
                      std::string("a key must be a plain name, found ") + YamlKind(key_node), "a name");
  }
  return key_node.Scalar();
}

Result<double> YamlDouble(const std::string& path, const YAML::Node& node, const std::string& key, DoubleRange range) {
  const Where where = YamlWhere(path, node, key);
  if (!node.IsScalar()) {
    return ValueError(where, YamlShown(node), std::string("expected a number, found ") + YamlKind(node),
                      DescribeRange(range));
  }
  return ParseDouble(node.Scalar(), where, range);
}

Result<int64_t> YamlInt(const std::string& path, const YAML::Node& node, const std::string& key, int64_t min,
                        int64_t max) {
  const Where where = YamlWhere(path, node, key);
  if (!node.IsScalar()) {
    return ValueError(where, YamlShown(node), std::string("expected a number, found ") + YamlKind(node),
                      DescribeIntRange(min, max));
  }
  return ParseInt(node.Scalar(), where, min, max);
}

Result<std::string> YamlString(const std::string& path, const YAML::Node& node, const std::string& key,
                               const std::string& what) {
  if (!node.IsScalar()) {
    return ValueError(YamlWhere(path, node, key), YamlShown(node),
                      "expected a single " + what + ", found " + YamlKind(node), "a single " + what);
  }
  return node.Scalar();
}

Result<double> JsonDouble(const std::string& path, const nlohmann::json& value, const std::string& key,
                          DoubleRange range) {
  const Where where{path, 0, key};
  if (!value.is_number()) {
    return ValueError(where, JsonShown(value), std::string("expected a number, found ") + JsonKind(value),
                      DescribeRange(range));
  }
  const double d = value.get<double>();
  ORRERY_RETURN_IF_ERROR(CheckDouble(d, where, range));
  return d;
}

Result<int64_t> JsonInt(const std::string& path, const nlohmann::json& value, const std::string& key, int64_t min,
                        int64_t max) {
  const Where where{path, 0, key};
  const std::string allowed = DescribeIntRange(min, max);
  if (value.is_number_unsigned()) {
    const uint64_t u = value.get<uint64_t>();  // nlohmann stores every non-negative integer here
    if (max < 0 || u > static_cast<uint64_t>(max) || static_cast<int64_t>(u) < min) {
      return ValueError(where, JsonShown(value), "out of range", allowed);
    }
    return static_cast<int64_t>(u);
  }
  if (value.is_number_integer()) {
    const int64_t i = value.get<int64_t>();
    if (i < min || i > max) return ValueError(where, JsonShown(value), "out of range", allowed);
    return i;
  }
  if (value.is_number_float()) return DoubleToInt(value.get<double>(), where, min, max);
  return ValueError(where, JsonShown(value), std::string("expected a number, found ") + JsonKind(value), allowed);
}

Result<uint64_t> JsonUint(const std::string& path, const nlohmann::json& value, const std::string& key, uint64_t min,
                          uint64_t max) {
  const Where where{path, 0, key};
  const std::string allowed = DescribeUintRange(min, max);
  if (value.is_number_unsigned()) {
    const uint64_t u = value.get<uint64_t>();
    if (u < min || u > max) return ValueError(where, JsonShown(value), "out of range", allowed);
    return u;
  }
  if (value.is_number_integer()) {
    // A signed integer: what the JSON parser makes of a negative number, and
    // what a document built in code may hold for any (a sweep's system.* values).
    const int64_t i = value.get<int64_t>();
    if (i < 0) return ValueError(where, JsonShown(value), "negative", allowed);
    if (static_cast<uint64_t>(i) < min || static_cast<uint64_t>(i) > max) {
      return ValueError(where, JsonShown(value), "out of range", allowed);
    }
    return static_cast<uint64_t>(i);
  }
  if (value.is_number_float()) return DoubleToUint(value.get<double>(), where, min, max);
  return ValueError(where, JsonShown(value), std::string("expected a number, found ") + JsonKind(value), allowed);
}

Result<bool> JsonFlag(const std::string& path, const nlohmann::json& value, const std::string& key) {
  if (value.is_boolean()) return value.get<bool>();
  if (value.is_number() && (value.get<double>() == 0 || value.get<double>() == 1)) return value.get<double>() != 0;
  return ValueError(Where{path, 0, key}, JsonShown(value), "not a switch", "0, 1, true or false");
}

Result<std::string> JsonString(const std::string& path, const nlohmann::json& value, const std::string& key,
                               const std::string& allowed) {
  if (value.is_string()) return value.get<std::string>();
  return ValueError(Where{path, 0, key}, JsonShown(value), std::string("expected a string, found ") + JsonKind(value),
                    allowed);
}

}  // namespace orrery
