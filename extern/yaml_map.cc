#include "extern/yaml_map.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

#include <algorithm>
#include <map>
#include <sstream>

#include "core/parse.h"
#include "extern/json_util.h"

namespace orrery {

namespace {

// Counts a document's nodes from the parser's events, each alias as the
// nodes of what it names (known when that node ended), saturating past
// `limit`: O(the file's size), whatever it stands for.
class ExpandedCounter : public YAML::EventHandler {
 public:
  explicit ExpandedCounter(uint64_t limit) : limit_(limit) {}
  uint64_t total() const { return total_; }

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t anchor) override { Leaf(anchor); }
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t anchor, const std::string&) override {
    Leaf(anchor);
  }
  void OnAlias(const YAML::Mark&, YAML::anchor_t anchor) override {
    auto it = anchors_.find(anchor);
    Add(it == anchors_.end() ? 1 : it->second);  // an alias to a node still open: refused by yaml-cpp
  }
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open_.push_back({1, anchor});
  }
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t anchor, YAML::EmitterStyle::value) override {
    open_.push_back({1, anchor});
  }
  void OnSequenceEnd() override { Close(); }
  void OnMapEnd() override { Close(); }

 private:
  struct Open {
    uint64_t nodes;
    YAML::anchor_t anchor;
  };
  void Leaf(YAML::anchor_t anchor) {
    if (anchor != YAML::NullAnchor) anchors_[anchor] = 1;
    Add(1);
  }
  void Close() {
    if (open_.empty()) return;
    const Open done = open_.back();
    open_.pop_back();
    if (done.anchor != YAML::NullAnchor) anchors_[done.anchor] = done.nodes;
    Add(done.nodes);
  }
  void Add(uint64_t n) {
    uint64_t& to = open_.empty() ? total_ : open_.back().nodes;
    to = std::min(to + std::min(n, limit_ + 1), limit_ + 1);  // both at most limit + 1: no overflow
  }
  uint64_t limit_;
  uint64_t total_ = 0;
  std::vector<Open> open_;
  std::map<YAML::anchor_t, uint64_t> anchors_;
};

}  // namespace

Status CheckYamlNodes(const std::string& text, const std::string& path, uint64_t limit) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  ExpandedCounter counter(limit);
  parser.HandleNextDocument(counter);  // the first document, the one YAML::Load reads
  if (counter.total() <= limit) return Status::Ok();
  return Status::Invalid(path + ": more than " + std::to_string(limit) +
                         " YAML nodes with its aliases expanded (an alias counts as a copy of what it names); "
                         "allowed: at most " +
                         std::to_string(limit) + " nodes");
}

Result<YAML::Node> LoadYamlBounded(const std::string& path) {
  ORRERY_PARSE_OR_RETURN(const std::string text, ReadTextFile(path, kMaxYamlBytes));
  ORRERY_RETURN_IF_ERROR(CheckYamlNodes(text, path));
  return YAML::Load(text);
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
