#include "extern/json_util.h"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace orrery {

// One read of the file's size into the string (the trace digest reads every
// rank's file: through a stringstream that was two copies and most of the
// time); then whatever follows (a file that grew, or one without a size: a
// pipe) is appended through the stream.
Result<std::string> ReadTextFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::Invalid(path + ": cannot open file (does it exist?)");
  std::string text;
  in.seekg(0, std::ios::end);
  const std::streamoff size = in ? static_cast<std::streamoff>(in.tellg()) : -1;
  in.clear();
  in.seekg(0);
  in.clear();  // a pipe cannot seek: read it from where it is
  if (size > 0) {
    text.resize(static_cast<size_t>(size));
    in.read(text.data(), size);
    text.resize(static_cast<size_t>(in.gcount()));
    in.clear();
  }
  if (in && in.peek() != std::char_traits<char>::eof()) {
    std::ostringstream rest;
    rest << in.rdbuf();
    text += rest.str();
  }
  return text;
}

namespace {

// "file:line:column" of byte `pos` in `text`.
std::string Position(const std::string& path, const std::string& text, size_t pos) {
  size_t line = 1, col = 1;
  for (size_t i = 0; i < pos && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return path + ":" + std::to_string(line) + ":" + std::to_string(col);
}

}  // namespace

Result<nlohmann::json> ReadJsonFile(const std::string& path) {
  Result<std::string> text = ReadTextFile(path);
  if (!text.ok()) return text.status();
  const std::string& s = text.value();
  // A key given twice in one object would silently keep the last value: refused.
  std::vector<std::vector<std::string>> keys;  // per open object
  std::string duplicate;
  auto callback = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    (void)depth;
    using E = nlohmann::json::parse_event_t;
    if (event == E::object_start) keys.emplace_back();
    if (event == E::object_end && !keys.empty()) keys.pop_back();
    if (event == E::key && !keys.empty() && duplicate.empty()) {
      const std::string k = parsed.get<std::string>();
      auto& seen = keys.back();
      if (std::find(seen.begin(), seen.end(), k) != seen.end()) duplicate = k;
      seen.push_back(k);
    }
    return true;
  };
  try {
    nlohmann::json j = nlohmann::json::parse(s, callback, true, /*ignore_comments=*/false);
    if (!duplicate.empty()) return Status::Invalid(path + ": key \"" + duplicate + "\" is given twice in one object");
    return j;
  } catch (const nlohmann::json::parse_error& e) {
    std::string what = e.what();
    auto p = what.find("syntax error");
    if (p != std::string::npos) what = what.substr(p);
    return Status::Invalid(Position(path, s, e.byte == 0 ? 0 : e.byte - 1) + ": malformed JSON: " + what);
  } catch (const nlohmann::json::exception& e) {
    // A number beyond a double (1e309) is refused while parsing; name it and where it is.
    std::string what = e.what();
    const auto q1 = what.find('\'');
    const auto q2 = q1 == std::string::npos ? std::string::npos : what.find('\'', q1 + 1);
    if (q2 != std::string::npos) {
      const std::string token = what.substr(q1 + 1, q2 - q1 - 1);
      const size_t at = s.find(token);
      return Status::Invalid((at == std::string::npos ? path : Position(path, s, at)) + ": " + token +
                             ": not a finite number; allowed: numbers within a double's range (about 1.8e308)");
    }
    auto p = what.find("] ");
    return Status::Invalid(path + ": unreadable JSON: " + (p == std::string::npos ? what : what.substr(p + 2)));
  }
}

std::string UnknownKeyMessage(const std::string& key, const std::vector<std::string>& valid) {
  std::string msg = "unknown key '" + key + "'";
  const std::string near = ClosestMatch(key, valid);
  if (!near.empty()) msg += " (did you mean '" + near + "'?)";
  msg += "; valid keys: " + JoinStrings(valid, ", ");
  return msg;
}

}  // namespace orrery
