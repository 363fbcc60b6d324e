#include "network/backend.h"

namespace orrery {

Status BackendRegistry::Register(const std::string& name, std::string description, BackendFactory factory) {
  if (entries_.count(name)) return Status::Invalid("network backend '" + name + "' is already registered");
  entries_[name] = Entry{std::move(description), std::move(factory)};
  return Status::Ok();
}

const BackendRegistry::Entry* BackendRegistry::Find(const std::string& name) const {
  auto it = entries_.find(name);
  return it == entries_.end() ? nullptr : &it->second;
}

std::string BackendRegistry::Help() const {
  std::string out;
  for (const auto& [name, e] : entries_) out += "  " + name + std::string(20 - std::min<size_t>(19, name.size()), ' ') + e.description + "\n";
  return out;
}

std::vector<std::string> BackendRegistry::Names() const {
  std::vector<std::string> v;
  for (const auto& [name, e] : entries_) v.push_back(name);
  return v;
}

}  // namespace orrery
