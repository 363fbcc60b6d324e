#include "workload/trace_groups.h"

#include <algorithm>

#include "extern/et_io.h"

namespace orrery {

namespace {

std::string NodeHere(const std::string& path, uint64_t id, int rank) {
  return path + ": node " + std::to_string(id) + " (rank " + std::to_string(rank) + ")";
}

// One entry's ranks on a network of `npus` NPUs: every NPU for an empty list;
// each listed rank inside the network, none twice, as many as group_size says.
Result<std::vector<int>> ResolveRanks(const ProcessGroupEntry& e, const std::string& here, int npus) {
  const std::string group = "process group \"" + e.name + "\"";
  std::vector<int> ranks;
  if (e.ranks.empty()) {
    if (e.group_size > 0 && e.group_size != npus) {
      return Status::Invalid(here + ": " + group + " is every rank (ranks []) of a " + std::to_string(e.group_size) +
                             "-rank job (group_size " + std::to_string(e.group_size) + "), but the network has " +
                             std::to_string(npus) + " NPU(s); simulate the whole job: a network of " +
                             std::to_string(e.group_size) + " NPUs and every rank's trace");
    }
    for (int r = 0; r < npus; ++r) ranks.push_back(r);
    return ranks;
  }
  for (const int64_t r : e.ranks) {
    if (r >= npus) {
      return Status::Invalid(here + ": " + group + " lists rank " + std::to_string(r) +
                             ", outside the network's ranks 0.." + std::to_string(npus - 1));
    }
    ranks.push_back(static_cast<int>(r));
  }
  std::sort(ranks.begin(), ranks.end());
  if (auto twice = std::adjacent_find(ranks.begin(), ranks.end()); twice != ranks.end()) {
    return Status::Invalid(here + ": " + group + " lists rank " + std::to_string(*twice) + " twice");
  }
  if (e.group_size > 0 && e.group_size != static_cast<int64_t>(ranks.size())) {
    return Status::Invalid(here + ": " + group + " lists " + std::to_string(ranks.size()) +
                           " rank(s) but its group_size is " + std::to_string(e.group_size));
  }
  return ranks;
}

// Adds one entry to `table`; a name given again must have the same ranks.
Status AddEntry(const ProcessGroupEntry& e, const std::string& here, int npus, TraceGroupTable* table) {
  ORRERY_PARSE_OR_RETURN(std::vector<int> ranks, ResolveRanks(e, here, npus));
  auto [it, added] = table->groups.emplace(e.name, ranks);
  if (!added && it->second != ranks) {
    return Status::Invalid(here + ": process group \"" + e.name + "\" is given twice, as " + RankListText(ranks) +
                           " and as " + RankListText(it->second));
  }
  return Status::Ok();
}

// The first difference between rank `rank`'s table and rank 0's, as an error.
Status CompareWithRank0(const TraceGroupTable& mine, const TraceGroupTable& rank0, const std::string& path, int rank) {
  const std::string here = path + " (rank " + std::to_string(rank) + ")";
  const std::string tail = "; every rank's trace must describe the same process groups";
  for (const auto& [name, ranks] : rank0.groups) {
    auto it = mine.groups.find(name);
    if (it == mine.groups.end()) {
      return Status::Invalid(here + ": process group \"" + name + "\" of " + rank0.origin + " (rank 0) is missing" +
                             tail);
    }
    if (it->second != ranks) {
      return Status::Invalid(here + ": process group \"" + name + "\" is " + RankListText(it->second) + " here but " +
                             RankListText(ranks) + " in " + rank0.origin + " (rank 0)" + tail);
    }
  }
  for (const auto& [name, ranks] : mine.groups) {
    if (!rank0.groups.count(name)) {
      return Status::Invalid(here + ": process group \"" + name + "\" " + RankListText(ranks) +
                             " is not in rank 0's table (" + rank0.origin + ")" + tail);
    }
  }
  return Status::Ok();
}

}  // namespace

std::string RankListText(const std::vector<int>& ranks) {
  std::string out = "[";
  for (size_t i = 0; i < ranks.size(); ++i) out += (i ? ", " : "") + std::to_string(ranks[i]);
  return out + "]";
}

Result<std::optional<RawGroupTable>> ReadRawGroupTable(const std::string& path, int rank) {
  EtReader reader;
  ORRERY_RETURN_IF_ERROR(reader.Open(path));
  ChakraProtoMsg::Node n;
  std::optional<RawGroupTable> table;
  while (true) {
    ORRERY_PARSE_OR_RETURN(const bool more, reader.NextOfType(ChakraProtoMsg::METADATA_NODE, &n));
    if (!more) break;
    if (!IsProcessGroupNode(n)) continue;
    ORRERY_PARSE_OR_RETURN(std::vector<ProcessGroupEntry> entries,
                           ParseProcessGroupTable(n.inputs().values(), NodeHere(path, n.id(), rank)));
    if (!table) table.emplace().origin = path + " node " + std::to_string(n.id());
    for (ProcessGroupEntry& e : entries) table->entries.emplace_back(n.id(), std::move(e));
  }
  return table;
}

Result<std::optional<TraceGroupTable>> ReadRankGroupTable(const std::string& path, int rank, int npus) {
  ORRERY_PARSE_OR_RETURN(const std::optional<RawGroupTable> raw, ReadRawGroupTable(path, rank));
  if (!raw) return std::optional<TraceGroupTable>();
  TraceGroupTable table;
  table.origin = raw->origin;
  for (const auto& [node, entry] : raw->entries) {
    ORRERY_RETURN_IF_ERROR(AddEntry(entry, NodeHere(path, node, rank), npus, &table));
  }
  return std::optional<TraceGroupTable>(std::move(table));
}

Result<TraceGroupTable> ReadTraceGroupTables(const std::vector<std::string>& paths,
                                             const std::vector<bool>& same_as_rank0) {
  const int npus = static_cast<int>(paths.size());
  if (npus == 0) return TraceGroupTable{};
  ORRERY_PARSE_OR_RETURN(const std::optional<TraceGroupTable> rank0, ReadRankGroupTable(paths[0], 0, npus));
  for (int r = 1; r < npus; ++r) {
    if (r < static_cast<int>(same_as_rank0.size()) && same_as_rank0[r]) continue;
    ORRERY_PARSE_OR_RETURN(const std::optional<TraceGroupTable> mine, ReadRankGroupTable(paths[r], r, npus));
    if (rank0.has_value() != mine.has_value()) {
      const int with = rank0 ? 0 : r;
      return Status::Invalid(paths[rank0 ? r : 0] + " (rank " + std::to_string(rank0 ? r : 0) +
                             ") has no process-group metadata (" + kProcessGroupNodeName + "), but " + paths[with] +
                             " (rank " + std::to_string(with) +
                             ") has; every rank's trace must describe the same process groups");
    }
    if (mine) ORRERY_RETURN_IF_ERROR(CompareWithRank0(*mine, *rank0, paths[r], r));
  }
  return rank0.value_or(TraceGroupTable{});
}

}  // namespace orrery
