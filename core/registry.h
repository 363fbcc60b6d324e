// The one way Orrery chooses things by name. Network backends
// (network/backend.h), memory backends (memory/backend.h) and collective
// algorithms from plugins (system/collective_plugin.h) each keep a
// NameRegistry of their entries (a one-line description and a factory);
// built-ins and plugins register the same way. Names list in sorted order, so
// help texts and error messages are deterministic; an unknown name gets one
// message naming it, the nearest known name and the allowed list.
#pragma once
#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/names.h"
#include "core/status.h"

namespace orrery {

template <class Entry>
class NameRegistry {
 public:
  // `what` names the kind of entry in messages, e.g. "network backend".
  explicit NameRegistry(const char* what) : what_(what) {}

  // Fails when the name is empty or already taken.
  Status Add(const std::string& name, Entry entry) {
    if (name.empty()) return Status::Invalid(std::string(what_) + " name must not be empty");
    if (entries_.count(name)) return Status::Invalid(std::string(what_) + " '" + name + "' is already registered");
    entries_.emplace(name, std::move(entry));
    return Status::Ok();
  }
  const Entry* Find(const std::string& name) const {
    auto it = entries_.find(name);
    return it == entries_.end() ? nullptr : &it->second;
  }
  // Every name, sorted.
  std::vector<std::string> Names() const {
    std::vector<std::string> v;
    v.reserve(entries_.size());
    for (const auto& [name, e] : entries_) v.push_back(name);
    return v;
  }
  // One line per entry: the name in a 20-column field, then its description.
  std::string Help() const {
    std::string out;
    for (const auto& [name, e] : entries_) {
      out += "  " + name + std::string(20 - std::min<size_t>(19, name.size()), ' ') + e.description + "\n";
    }
    return out;
  }
  // "unknown network backend (did you mean 'analytical'?); valid: analytical, congestion-aware"
  std::string Unknown(const std::string& name) const {
    const std::vector<std::string> valid = Names();
    std::string msg = "unknown " + std::string(what_);
    const std::string near = ClosestMatch(name, valid);
    if (!near.empty()) msg += " (did you mean '" + near + "'?)";
    return msg + "; valid: " + JoinStrings(valid, ", ");
  }
  const char* what() const { return what_; }

 private:
  const char* what_;
  std::map<std::string, Entry> entries_;
};

}  // namespace orrery
