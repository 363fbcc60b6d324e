#include "system/options.h"

namespace orrery {

bool CollectiveRegistry::Register(const std::string& name, std::string description, CollectiveAlgorithmFn build,
                                  std::string* error) {
  // Every name extern/astra_config.cc maps to a built-in (a plugin of the same name would win there).
  static const char* kBuiltin[] = {"ring",      "direct",    "halvingDoubling",    "doubleBinaryTree",
                                   "oneRing",   "oneDirect", "oneHalvingDoubling", "inSwitch"};
  for (const char* b : kBuiltin) {
    if (name == b) {
      *error = "collective algorithm '" + name + "' is built in";
      return false;
    }
  }
  if (name.empty() || entries_.count(name)) {
    *error = "collective algorithm '" + name + "' is already registered";
    return false;
  }
  entries_[name] = Entry{std::move(description), std::move(build)};
  return true;
}

const CollectiveRegistry::Entry* CollectiveRegistry::Find(const std::string& name) const {
  auto it = entries_.find(name);
  return it == entries_.end() ? nullptr : &it->second;
}

std::vector<std::string> CollectiveRegistry::Names() const {
  std::vector<std::string> v;
  for (const auto& [name, e] : entries_) v.push_back(name);
  return v;
}

}  // namespace orrery
