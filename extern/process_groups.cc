#include "extern/process_groups.h"

#include <nlohmann/json.hpp>

#include "core/limits.h"
#include "extern/config_values.h"

namespace orrery {

namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

size_t SkipSpaces(const std::string& s, size_t i) {
  while (i < s.size() && IsSpace(s[i])) ++i;
  return i;
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Appends code point `cp` as UTF-8.
void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// One escape of a Python string literal at s[i] (after the backslash): appends
// what it stands for and returns the index after it, or npos when it is not one
// Python's repr writes (\\ \' \" \n \r \t \xhh \uhhhh).
size_t Unescape(const std::string& s, size_t i, std::string* out) {
  if (i >= s.size()) return std::string::npos;
  switch (s[i]) {
    case '\\':
    case '\'':
    case '"': out->push_back(s[i]); return i + 1;
    case 'n': out->push_back('\n'); return i + 1;
    case 'r': out->push_back('\r'); return i + 1;
    case 't': out->push_back('\t'); return i + 1;
    case 'x':
    case 'u': {
      const size_t digits = s[i] == 'x' ? 2 : 4;
      if (i + digits >= s.size()) return std::string::npos;
      uint32_t cp = 0;
      for (size_t k = 1; k <= digits; ++k) {
        const int d = HexDigit(s[i + k]);
        if (d < 0) return std::string::npos;
        cp = cp * 16 + static_cast<uint32_t>(d);
      }
      AppendUtf8(cp, out);
      return i + digits + 1;
    }
    default: return std::string::npos;
  }
}

// The JSON text inside inputs.values: the one string of a Python list
// ['...'] (or ["..."]), or the whole value when it is the JSON array itself.
Result<std::string> TableText(const std::string& values, const std::string& where) {
  const std::string here = where + ": inputs.values";
  size_t i = SkipSpaces(values, 0);
  if (i >= values.size() || values[i] != '[') {
    return Status::Invalid(here +
                           " does not start with '['; expected the process-group table as converters write "
                           "it, ['[{\"pg_name\": ..., \"ranks\": [...]}]']");
  }
  i = SkipSpaces(values, i + 1);
  if (i >= values.size() || (values[i] != '\'' && values[i] != '"')) return values;  // the JSON array itself
  const char quote = values[i++];
  std::string text;
  while (i < values.size() && values[i] != quote) {
    if (values[i] != '\\') {
      text.push_back(values[i++]);
      continue;
    }
    const size_t next = Unescape(values, i + 1, &text);
    if (next == std::string::npos) {
      return Status::Invalid(here + ": byte " + std::to_string(i) +
                             ": an escape Python does not write in a string; allowed: \\\\ \\' \\\" \\n \\r \\t "
                             "\\xhh \\uhhhh");
    }
    i = next;
  }
  if (i >= values.size()) return Status::Invalid(here + ": the quoted table never ends (no closing " + quote + ")");
  i = SkipSpaces(values, i + 1);
  if (i < values.size() && values[i] == ',') i = SkipSpaces(values, i + 1);
  if (i >= values.size()) return Status::Invalid(here + ": the list never ends (no closing ']')");
  if (values[i] != ']' || SkipSpaces(values, i + 1) != values.size()) {
    return Status::Invalid(here + ": expected one quoted table in the list, then ']' (found more at byte " +
                           std::to_string(i) + ")");
  }
  return text;
}

Result<nlohmann::json> ParseTableJson(const std::string& text, const std::string& where) {
  constexpr int kMaxDepth = 8;  // the table is an array of objects holding arrays of numbers
  bool too_deep = false;
  auto depth_guard = [&](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
    if (depth > kMaxDepth) too_deep = true;
    return !too_deep;
  };
  try {
    nlohmann::json j = nlohmann::json::parse(text, depth_guard, true, false);
    if (too_deep) {
      return Status::Invalid(where + ": the process-group table nests deeper than " + std::to_string(kMaxDepth) +
                             " levels; expected a list of {\"pg_name\": ..., \"ranks\": [...]}");
    }
    return j;
  } catch (const nlohmann::json::exception& e) {
    std::string what = e.what();
    const auto p = what.find("] ");
    return Status::Invalid(
        where + ": the process-group table is not JSON: " + (p == std::string::npos ? what : what.substr(p + 2)));
  }
}

Result<ProcessGroupEntry> ReadEntry(const nlohmann::json& item, size_t index, const std::string& where) {
  const std::string at = "[" + std::to_string(index) + "]";
  if (!item.is_object()) {
    return Status::Invalid(where + ": process-group table" + at + " is not an object; expected {\"pg_name\": ..., " +
                           "\"ranks\": [...]}");
  }
  ProcessGroupEntry e;
  const auto name = item.find("pg_name");
  if (name == item.end()) return Status::Invalid(where + ": process-group table" + at + " has no \"pg_name\"");
  if (name->is_string()) {
    e.name = name->get<std::string>();
  } else if (name->is_number_integer()) {
    e.name = name->dump();
  } else {
    return Status::Invalid(where + ": process-group table" + at + ".pg_name = " + name->dump() +
                           ": expected a string (or an integer)");
  }
  if (e.name.empty()) return Status::Invalid(where + ": process-group table" + at + ".pg_name is empty");
  const std::string key = "process group \"" + e.name + "\"";
  const auto ranks = item.find("ranks");
  if (ranks == item.end() || !ranks->is_array()) {
    return Status::Invalid(where + ": " + key + " has no \"ranks\" list (an empty list is every rank)");
  }
  for (size_t k = 0; k < ranks->size(); ++k) {
    ORRERY_PARSE_OR_RETURN(const int64_t r,
                           JsonInt(where, (*ranks)[k], key + ".ranks[" + std::to_string(k) + "]", 0, kMaxNpus - 1));
    e.ranks.push_back(r);
  }
  if (const auto size = item.find("group_size"); size != item.end() && !size->is_null()) {
    ORRERY_PARSE_OR_RETURN(e.group_size, JsonInt(where, *size, key + ".group_size", 1, kMaxNpus));
  }
  return e;
}

}  // namespace

bool IsProcessGroupNode(const ChakraProtoMsg::Node& node) {
  return node.type() == ChakraProtoMsg::METADATA_NODE && node.name() == kProcessGroupNodeName;
}

Result<std::vector<ProcessGroupEntry>> ParseProcessGroupTable(const std::string& values, const std::string& where) {
  if (values.size() > kMaxProcessGroupTableBytes) {
    return Status::Invalid(where + ": inputs.values holds " + std::to_string(values.size()) +
                           " bytes; a process-group table is allowed at most " +
                           std::to_string(kMaxProcessGroupTableBytes) + " bytes");
  }
  ORRERY_PARSE_OR_RETURN(const std::string text, TableText(values, where));
  ORRERY_PARSE_OR_RETURN(const nlohmann::json j, ParseTableJson(text, where));
  if (!j.is_array()) {
    return Status::Invalid(where + ": the process-group table is not a list; expected [{\"pg_name\": ..., " +
                           "\"ranks\": [...]}, ...]");
  }
  std::vector<ProcessGroupEntry> out;
  for (size_t i = 0; i < j.size(); ++i) {
    ORRERY_PARSE_OR_RETURN(ProcessGroupEntry e, ReadEntry(j[i], i, where));
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace orrery
