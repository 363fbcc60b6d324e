#include "core/algorithm_kind.h"
#include "system/collective_plugin.h"

namespace orrery {

const char* ComTypeName(ComType t) {
  switch (t) {
    case ComType::kAllReduce: return "ALL_REDUCE";
    case ComType::kAllGather: return "ALL_GATHER";
    case ComType::kReduceScatter: return "REDUCE_SCATTER";
    case ComType::kAllToAll: return "ALL_TO_ALL";
  }
  return "?";
}

bool CollectiveRegistry::Register(const std::string& name, std::string description, CollectiveAlgorithmFn build,
                                  std::string* error) {
  // Every built-in name (extern/astra_config.cc would map it to the built-in).
  if (FindBuiltinAlgorithm(name)) {
    *error = "collective algorithm '" + name + "' is built in";
    return false;
  }
  const Status st = entries_.Add(name, Entry{std::move(description), std::move(build)});
  if (!st.ok()) *error = st.message();
  return st.ok();
}

const CollectiveRegistry::Entry* CollectiveRegistry::Find(const std::string& name) const { return entries_.Find(name); }

std::vector<std::string> CollectiveRegistry::Names() const { return entries_.Names(); }

}  // namespace orrery
