#include "explore/csv.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>

#include "extern/json_util.h"

namespace orrery {

int CsvTable::Column(const std::string& name) const {
  const auto it = std::find(header.begin(), header.end(), name);
  return it == header.end() ? -1 : static_cast<int>(it - header.begin());
}

namespace {

// Splits `text` into records of fields, tracking the line each record starts on.
class CsvLexer {
 public:
  CsvLexer(std::string_view text, const std::string& path) : text_(text), path_(path) {}

  bool AtEnd() const { return pos_ >= text_.size(); }
  int line() const { return line_; }

  // One record; `pos_` moves past its line break.
  Result<std::vector<std::string>> Record() {
    std::vector<std::string> fields;
    while (true) {
      auto field = Field();
      if (!field.ok()) return field.status();
      fields.push_back(std::move(field.value()));
      if (AtEnd()) return fields;
      const char c = text_[pos_];
      if (c == ',') {
        ++pos_;
        continue;
      }
      if (c == '\r' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '\n') ++pos_;
      if (text_[pos_] == '\n') {
        ++pos_;
        ++line_;
        return fields;
      }
      return Error("a bare carriage return", "records end in LF or CRLF");
    }
  }

 private:
  Status Error(const std::string& what, const std::string& allowed) const {
    return Status::Invalid(path_ + ":" + std::to_string(line_) + ": " + what + "; allowed: " + allowed);
  }

  Result<std::string> Field() {
    std::string out;
    if (!AtEnd() && text_[pos_] == '"') {
      const int opened = line_;
      ++pos_;
      while (true) {
        if (AtEnd()) {
          return Status::Invalid(path_ + ":" + std::to_string(opened) +
                                 ": a quoted field is never closed; allowed: a closing \" (write a quote inside a "
                                 "quoted field as \"\")");
        }
        const char c = text_[pos_++];
        if (c == '"') {
          if (!AtEnd() && text_[pos_] == '"') {
            out.push_back('"');
            ++pos_;
            continue;
          }
          break;
        }
        if (c == '\n') ++line_;
        out.push_back(c);
      }
      if (!AtEnd() && text_[pos_] != ',' && text_[pos_] != '\n' && text_[pos_] != '\r') {
        return Error("text after a closing quote (\"" + out + "\" then '" + std::string(1, text_[pos_]) + "')",
                     "a comma or the end of the line after a quoted field; a quote inside one is written \"\"");
      }
      return out;
    }
    while (!AtEnd() && text_[pos_] != ',' && text_[pos_] != '\n' && text_[pos_] != '\r') {
      if (text_[pos_] == '"') {
        return Error("a quote inside an unquoted field (\"" + out + "\"...)",
                     "quotes only around a whole field, with \"\" for a quote inside it");
      }
      out.push_back(text_[pos_++]);
    }
    return out;
  }

  std::string_view text_;
  const std::string& path_;
  size_t pos_ = 0;
  int line_ = 1;
};

}  // namespace

Result<CsvTable> ParseCsv(std::string_view text, const std::string& path) {
  CsvTable t;
  t.path = path;
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // a UTF-8 byte-order mark
  if (text.empty()) return Status::Invalid(path + ": empty file; allowed: a header row naming the columns, then rows");
  CsvLexer lex(text, path);
  auto header = lex.Record();
  if (!header.ok()) return header.status();
  t.header = std::move(header.value());
  // Each name once: one pass with a hash of the names seen (O(columns), not a scan per column).
  std::unordered_map<std::string_view, size_t> seen;
  seen.reserve(t.header.size());
  for (size_t i = 0; i < t.header.size(); ++i) {
    const std::string& name = t.header[i];
    if (name.empty()) {
      return Status::Invalid(path + ":1: column " + std::to_string(i + 1) +
                             " of the header has no name; allowed: a non-empty name for every column");
    }
    if (auto [first, added] = seen.try_emplace(name, i); !added) {
      return Status::Invalid(path + ":1: column name \"" + name + "\" appears twice (columns " +
                             std::to_string(first->second + 1) + " and " + std::to_string(i + 1) +
                             "); allowed: each name once");
    }
  }
  while (!lex.AtEnd()) {
    const int line = lex.line();
    auto row = lex.Record();
    if (!row.ok()) return row.status();
    if (row->size() != t.header.size()) {
      return Status::Invalid(path + ":" + std::to_string(line) + ": " + std::to_string(row->size()) +
                             " field(s), the header (line 1) has " + std::to_string(t.header.size()) +
                             "; allowed: exactly " + std::to_string(t.header.size()) +
                             " comma-separated fields (quote a field that holds a comma)");
    }
    t.rows.push_back(std::move(row.value()));
    t.lines.push_back(line);
  }
  return t;
}

Result<CsvTable> ReadCsv(const std::string& path) {
  auto text = ReadTextFile(path);
  if (!text.ok()) return text.status();
  return ParseCsv(text.value(), path);
}

}  // namespace orrery
