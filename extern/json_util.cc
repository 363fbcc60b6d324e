#include "extern/json_util.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace orrery {

// A regular file in one read of its size (the trace digest reads every
// rank's file: through a stringstream that was two copies and most of the
// time); anything else that can be read (a pipe, /dev/stdin) through the
// stream to its end. A directory is refused (it opens, and its "size" is
// huge on some file systems).
Result<std::string> ReadTextFile(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!ec && std::filesystem::is_directory(status)) {
    return Status::Invalid(path + ": is a directory; a file is expected here");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::Invalid(path + ": cannot open file (does it exist?)");
  std::string text;
  if (!ec && std::filesystem::is_regular_file(status)) {
    const uintmax_t size = std::filesystem::file_size(path, ec);
    if (!ec && size > 0 && size < text.max_size()) {
      text.resize(static_cast<size_t>(size));
      in.read(text.data(), static_cast<std::streamsize>(size));
      text.resize(static_cast<size_t>(in.gcount()));  // it may have shrunk
      if (in.bad()) return Status::Invalid(path + ": read error");
      in.clear();
    }
  }
  if (in.peek() != std::char_traits<char>::eof()) {  // a file that grew, or no size: a pipe
    std::ostringstream rest;
    rest << in.rdbuf();
    text += rest.str();
  }
  if (in.bad()) return Status::Invalid(path + ": read error");
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
