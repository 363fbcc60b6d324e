#include "network/backend.h"

namespace orrery {

Status BackendRegistry::Register(const std::string& name, std::string description, BackendFactory factory) {
  return entries_.Add(name, Entry{std::move(description), std::move(factory)});
}

const BackendRegistry::Entry* BackendRegistry::Find(const std::string& name) const { return entries_.Find(name); }

std::string BackendRegistry::Help() const { return entries_.Help(); }

std::vector<std::string> BackendRegistry::Names() const { return entries_.Names(); }

std::string BackendRegistry::Unknown(const std::string& name) const { return entries_.Unknown(name); }

}  // namespace orrery
