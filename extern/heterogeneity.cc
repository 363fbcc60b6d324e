#include "extern/heterogeneity.h"

#include <algorithm>
#include <functional>
#include <map>
#include <vector>

#include "core/parse.h"
#include "extern/json_util.h"
#include "extern/yaml_map.h"

namespace orrery {

namespace {

// The ranks of one entry: a scalar rank, a list of ranks, or "a-b".
Status ReadRanks(const std::string& path, const YamlEntry& e, int64_t npus, int64_t* budget, std::vector<int>* out) {
  const Where where{path, e.line, "ranks"};
  const int64_t max = npus - 1;
  auto one = [&](const std::string& text) -> Status {
    ORRERY_PARSE_OR_RETURN(const int64_t r, ParseInt(text, where, 0, max));
    out->push_back(static_cast<int>(r));
    return Status::Ok();
  };
  if (e.value.IsSequence()) {
    if (static_cast<int64_t>(e.value.size()) > *budget) {
      return ValueError(where, std::to_string(e.value.size()) + " ranks", "too many ranks listed",
                        "at most " + std::to_string(kMaxHeterogeneityEntries) + " in the whole file");
    }
    for (const YAML::Node& r : e.value) {
      if (!r.IsScalar()) return ValueError(where, "(not a scalar)", "wrong type", "a list of ranks");
      ORRERY_RETURN_IF_ERROR(one(r.Scalar()));
    }
  } else if (e.value.IsScalar()) {
    const std::string text = e.value.Scalar();
    const size_t dash = text.find('-', 1);
    if (dash == std::string::npos) {
      ORRERY_RETURN_IF_ERROR(one(text));
    } else {
      ORRERY_PARSE_OR_RETURN(const int64_t lo, ParseInt(text.substr(0, dash), where, 0, max));
      ORRERY_PARSE_OR_RETURN(const int64_t hi, ParseInt(text.substr(dash + 1), where, 0, max));
      if (hi < lo) return ValueError(where, text, "an empty range", "\"a-b\" with a <= b");
      if (hi - lo + 1 > *budget) {
        return ValueError(where, text, "too many ranks listed",
                          "at most " + std::to_string(kMaxHeterogeneityEntries) + " in the whole file");
      }
      for (int64_t r = lo; r <= hi; ++r) out->push_back(static_cast<int>(r));
    }
  } else {
    return ValueError(where, "(a mapping)", "wrong type", "a rank, a list of ranks or a range \"a-b\"");
  }
  *budget -= static_cast<int64_t>(out->size());
  if (*budget < 0) {
    return ValueError(where, std::to_string(out->size()) + " ranks", "too many ranks listed",
                      "at most " + std::to_string(kMaxHeterogeneityEntries) + " in the whole file");
  }
  return Status::Ok();
}

struct Item {
  std::vector<int> ranks;
  int dim = -1;
  double value = 1;
  int line = 0;
};

// One item of `compute` (keys ranks, speed) or `links` (ranks, dim, bandwidth).
Result<Item> ReadItem(const std::string& path, const std::string& section, const YAML::Node& node, int64_t npus,
                      int dims, int64_t* budget) {
  const bool links = section == "links";
  const std::string value_key = links ? "bandwidth" : "speed";
  const std::vector<std::string> valid = links ? std::vector<std::string>{"ranks", "dim", "bandwidth"}
                                               : std::vector<std::string>{"ranks", "speed"};
  Item item;
  item.line = node.Mark().line + 1;
  if (!node.IsMap()) {
    return ValueError(Where{path, item.line, section}, "(not a mapping)", "wrong type",
                      links ? "a mapping with ranks, dim and bandwidth" : "a mapping with ranks and speed");
  }
  ORRERY_PARSE_OR_RETURN(const std::vector<YamlEntry> entries, MappingEntries(node, path, section));
  bool has_ranks = false, has_value = false;
  for (const YamlEntry& e : entries) {
    const Where where{path, e.line, e.key};
    if (e.key == "ranks") {
      ORRERY_RETURN_IF_ERROR(ReadRanks(path, e, npus, budget, &item.ranks));
      has_ranks = true;
      continue;
    }
    if (std::find(valid.begin(), valid.end(), e.key) == valid.end()) {
      return Status::Invalid(where.Describe() + ": " + section + ": " + UnknownKeyMessage(e.key, valid));
    }
    if (!e.value.IsScalar()) return ValueError(where, "(not a scalar)", "wrong type", "a number");
    if (e.key == "dim") {
      ORRERY_PARSE_OR_RETURN(const int64_t d, ParseInt(e.value.Scalar(), where, 0, dims - 1));
      item.dim = static_cast<int>(d);
      continue;
    }
    ORRERY_PARSE_OR_RETURN(item.value, ParseDouble(e.value.Scalar(), where,
                                                   DoubleRange{kMinHeterogeneityFactor, kMaxHeterogeneityFactor}));
    has_value = true;
  }
  const Where at{path, item.line, section};
  if (!has_ranks) return Status::Invalid(at.Describe() + ": an item without 'ranks'");
  if (!has_value) return Status::Invalid(at.Describe() + ": an item without '" + value_key + "'");
  if (links && item.dim < 0) return Status::Invalid(at.Describe() + ": an item without 'dim'");
  return item;
}

// The items of one section, each (rank[, dim]) once: sorted (key, value).
template <typename K>
Status Collect(const std::string& path, const std::string& section, const std::vector<Item>& items,
               const std::function<K(int, int)>& key, std::vector<std::pair<K, double>>* out) {
  std::map<K, std::pair<double, int>> seen;  // key -> (value, line)
  for (const Item& item : items) {
    for (int r : item.ranks) {
      auto [it, fresh] = seen.emplace(key(r, item.dim), std::make_pair(item.value, item.line));
      if (!fresh) {
        return Status::Invalid(path + ":" + std::to_string(item.line) + ": " + section + ": rank " + std::to_string(r) +
                               (item.dim >= 0 ? " in dim " + std::to_string(item.dim) : "") +
                               " is listed again (first on line " + std::to_string(it->second.second) +
                               "); allowed: each rank once" + (item.dim >= 0 ? " per dimension" : ""));
      }
    }
  }
  out->clear();
  for (const auto& [k, v] : seen) {
    if (v.first != 1.0) out->emplace_back(k, v.first);  // 1 is the default: not listed
  }
  return Status::Ok();
}

}  // namespace

Result<Heterogeneity> ReadHeterogeneityYaml(const std::string& path, int64_t npus, int dims) {
  ORRERY_PARSE_OR_RETURN(const YAML::Node root,
                         LoadYamlMapping(path,
                                         {"cannot read the heterogeneity file", "YAML syntax error",
                                          "a heterogeneity file is a mapping with 'compute' and/or 'links' lists"}));
  ORRERY_PARSE_OR_RETURN(const std::vector<YamlEntry> entries, MappingEntries(root, path, ""));
  std::vector<Item> compute, links;
  int64_t budget = kMaxHeterogeneityEntries;
  for (const YamlEntry& e : entries) {
    const Where where{path, e.line, e.key};
    if (e.key != "compute" && e.key != "links") {
      return Status::Invalid(where.Describe() + ": " + UnknownKeyMessage(e.key, {"compute", "links"}));
    }
    if (!e.value.IsSequence()) return ValueError(where, "(not a list)", "wrong type", "a list of items");
    for (const YAML::Node& item : e.value) {
      ORRERY_PARSE_OR_RETURN(Item it, ReadItem(path, e.key, item, npus, dims, &budget));
      (e.key == "compute" ? compute : links).push_back(std::move(it));
    }
  }
  Heterogeneity h;
  h.path = path;
  ORRERY_RETURN_IF_ERROR(Collect<int>(
      path, "compute", compute, [](int r, int) { return r; }, &h.compute_speed));
  ORRERY_RETURN_IF_ERROR(Collect<uint64_t>(
      path, "links", links, [](int r, int d) { return Heterogeneity::LinkKey(r, d); }, &h.link));
  return h;
}

}  // namespace orrery
