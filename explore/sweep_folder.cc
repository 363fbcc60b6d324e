#include "explore/sweep_folder.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <utility>

#include "core/fnv.h"
#include "core/output_file.h"
#include "core/parse.h"
#include "explore/sweep_rows.h"
#include "extern/json_util.h"

namespace orrery::sweep {

FolderLock::FolderLock(FolderLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

FolderLock& FolderLock::operator=(FolderLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

FolderLock::~FolderLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the flock
}

Result<FolderLock> FolderLock::Take(const std::string& dir, const std::string& name, bool wait) {
  const std::string path = dir + "/" + name;
  FolderLock lock;
  lock.fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (lock.fd_ < 0) return Status::Env(path + ": cannot open the lock file (" + std::strerror(errno) + ")");
  while (::flock(lock.fd_, LOCK_EX | (wait ? 0 : LOCK_NB)) != 0) {
    if (errno == EINTR) continue;
    const int err = errno;
    if (err != EWOULDBLOCK) return Status::Env(path + ": cannot lock it (" + std::strerror(err) + ")");
    char pid[32] = {0};
    const ssize_t n = ::pread(lock.fd_, pid, sizeof pid - 1, 0);
    std::string holder = n > 0 ? std::string(pid, static_cast<size_t>(n)) : "";
    while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
    return Status::Env(dir + ": in use by another orrery sweep" + (holder.empty() ? "" : " (pid " + holder + ")") +
                       ", which holds " + path + "; wait for it to finish");
  }
  const std::string me = std::to_string(::getpid()) + "\n";  // for the message above (best effort)
  if (::ftruncate(lock.fd_, 0) == 0) (void)!::pwrite(lock.fd_, me.data(), me.size(), 0);
  return lock;
}

std::string StemName(int shard_index, int shard_count) {
  if (shard_count <= 1) return "sweep";
  return "sweep.shard-" + std::to_string(shard_index + 1) + "-of-" + std::to_string(shard_count);
}

std::string SpecIdentity(const SweepSpec& spec, const std::string& base_canonical, bool critical_path) {
  std::string text = "orrery-sweep-identity 1\n" + base_canonical + "generate=" + spec.generate + "\n";
  for (const std::string& p : spec.axis_paths) text += "axis=" + p + "\n";
  text += "enumeration=" + spec.enumeration + "\ncritical-path=" + (critical_path ? "true" : "false") + "\n";
  return HexU64(Fnv1a(kFnvOffset, text));
}

namespace {

std::string IdentityJson(const FolderIdentity& id) {
  nlohmann::ordered_json j;
  j["identity"] = id.identity;
  j["spec"] = id.spec;
  j["axis_paths"] = id.axis_paths;
  j["points"] = id.points;
  j["rows"] = id.rows;
  j["shard"] = std::to_string(id.shard_index + 1) + "/" + std::to_string(id.shard_count);
  j["merged"] = id.merged;
  return j.dump(2) + "\n";
}

std::string Describe(const FolderIdentity& id) { return "spec " + id.spec + " (identity " + id.identity + ")"; }

}  // namespace

namespace {

// A count of STEM.id (points, rows), at most a spec's enumeration.
uint64_t IdentityCount(const nlohmann::json& v, const std::string& key) {
  return JsonCountOrThrow(v, key, kMaxSweepEnumerated);
}

}  // namespace

Result<std::optional<FolderIdentity>> ReadIdentity(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::optional<FolderIdentity>();
  auto text = ReadTextFile(path);
  if (!text.ok()) return text.status();
  FolderIdentity id;
  try {
    const nlohmann::json j = nlohmann::json::parse(text.value());
    id.identity = j.at("identity").get<std::string>();
    id.spec = j.at("spec").get<std::string>();
    id.axis_paths = j.at("axis_paths").get<std::vector<std::string>>();
    id.points = IdentityCount(j.at("points"), "points");
    id.rows = IdentityCount(j.at("rows"), "rows");
    id.merged = j.at("merged").get<bool>();
    const std::string shard = j.at("shard").get<std::string>();
    const size_t slash = shard.find('/');
    auto i = ParseInt(shard.substr(0, slash), Where{path, 0, "shard"}, 1, 1 << 20);
    auto n = ParseInt(slash == std::string::npos ? "" : shard.substr(slash + 1), Where{path, 0, "shard"}, 1, 1 << 20);
    if (!i.ok() || !n.ok()) throw std::invalid_argument("shard \"" + shard + "\" is not I/N");
    id.shard_index = static_cast<int>(i.value() - 1);
    id.shard_count = static_cast<int>(n.value());
  } catch (const std::exception& e) {
    return Status::Invalid(path + ": not a sweep folder's identity (" + e.what() +
                           "); it is written by orrery sweep: remove it to let a sweep write it again");
  }
  return std::optional<FolderIdentity>(std::move(id));
}

namespace {

// The STEM.id files in `dir`, by stem.
Result<std::map<std::string, FolderIdentity>> Identities(const std::string& dir) {
  std::map<std::string, FolderIdentity> ids;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind("sweep", 0) != 0 || name.size() < 3 || name.compare(name.size() - 3, 3, ".id") != 0) continue;
    ORRERY_PARSE_OR_RETURN(const std::optional<FolderIdentity> id, ReadIdentity(it->path().string()));
    if (id) ids.emplace(name.substr(0, name.size() - 3), *id);
  }
  if (ec) return Status::Env(dir + ": cannot list the folder: " + ec.message());
  return ids;
}

}  // namespace

Status ClaimFolder(const std::string& dir, const FolderIdentity& id) {
  ORRERY_PARSE_OR_RETURN(const FolderLock folder, FolderLock::Take(dir, "sweep.lock", true));
  ORRERY_PARSE_OR_RETURN(const auto ids, Identities(dir));
  for (const auto& [stem, other] : ids) {
    if (other.identity == id.identity) continue;
    return Status::Invalid(
        dir + " holds the rows of another sweep: " + dir + "/" + stem + ".id names " + Describe(other) +
        ", and this sweep is " + Describe(id) +
        "; running it here would mix its rows with those or drop them: give this sweep another --out (or remove " +
        dir + "/" + stem + ".* to start over)");
  }
  return WriteFileWhole(dir + "/" + StemName(id.shard_index, id.shard_count) + ".id", IdentityJson(id));
}

void RemoveStaleTemporaries(const std::string& dir, const std::string& stem) {
  std::error_code ec;
  std::vector<std::filesystem::path> stale;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    for (const char* ext : {".jsonl.tmp-", ".csv.tmp-"}) {
      if (name.rfind("." + stem + ext, 0) == 0) stale.push_back(it->path());
    }
  }
  for (const auto& path : stale) std::filesystem::remove(path, ec);
}

namespace {

struct Shard {
  int index = 0, count = 0;  // I-1 and N of sweep.shard-I-of-N
  std::string stem;
  std::optional<FolderIdentity> id;
  RowFile file;
};

// sweep.shard-I-of-N.jsonl: I-1 and N; false for any other name.
bool ParseShardName(const std::string& name, int* index, int* count) {
  const std::string head = "sweep.shard-", tail = ".jsonl";
  if (name.size() <= head.size() + tail.size() || name.rfind(head, 0) != 0 ||
      name.compare(name.size() - tail.size(), tail.size(), tail) != 0) {
    return false;
  }
  const std::string mid = name.substr(head.size(), name.size() - head.size() - tail.size());
  const size_t of = mid.find("-of-");
  if (of == std::string::npos) return false;
  auto i = ParseInt(mid.substr(0, of), Where{name, 0, "I"}, 1, 1 << 20);
  auto n = ParseInt(mid.substr(of + 4), Where{name, 0, "N"}, 1, 1 << 20);
  if (!i.ok() || !n.ok()) return false;
  *index = static_cast<int>(i.value() - 1);
  *count = static_cast<int>(n.value());
  return true;
}

// The shards in `dir`, each locked (one still being written: exit 1) and read.
Status ReadShards(const std::string& dir, std::vector<Shard>* shards, std::vector<FolderLock>* locks) {
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    Shard sh;
    const std::string name = it->path().filename().string();
    if (!ParseShardName(name, &sh.index, &sh.count)) continue;
    sh.stem = name.substr(0, name.size() - 6);
    shards->push_back(std::move(sh));
  }
  if (ec) return Status::Invalid(dir + ": cannot list: " + ec.message());
  if (shards->empty()) return Status::Invalid(dir + ": no sweep.shard-I-of-N.jsonl files to merge");
  std::sort(shards->begin(), shards->end(), [](const Shard& a, const Shard& b) { return a.stem < b.stem; });
  for (Shard& sh : *shards) {
    ORRERY_PARSE_OR_RETURN(FolderLock lock, FolderLock::Take(dir, sh.stem + ".jsonl.lock", false));
    locks->push_back(std::move(lock));
    ORRERY_PARSE_OR_RETURN(sh.file, ReadRows(dir + "/" + sh.stem + ".jsonl"));
    ORRERY_PARSE_OR_RETURN(sh.id, ReadIdentity(dir + "/" + sh.stem + ".id"));
  }
  return Status::Ok();
}

// The shards are of one sweep, and their merge replaces no unsharded sweep's rows.
Status CheckOneSweep(const std::string& dir, const std::vector<Shard>& shards) {
  const Shard* with_id = nullptr;
  for (const Shard& sh : shards) {
    if (sh.index >= sh.count) return Status::Invalid(dir + "/" + sh.stem + ".jsonl: shard number beyond the count");
    if (!sh.id) {
      return Status::Invalid(dir + "/" + sh.stem + ".jsonl has no " + sh.stem +
                             ".id: which sweep its rows belong to is not known, so it cannot be merged safely; run "
                             "that shard again (it keeps its rows, runs what is missing and writes the .id)");
    }
    if (with_id && with_id->id->identity != sh.id->identity) {
      return Status::Invalid(dir + ": " + with_id->stem + " and " + sh.stem +
                             " come from different sweeps: " + Describe(*with_id->id) + " and " + Describe(*sh.id) +
                             "; refusing to merge them (each sweep needs an --out of its own)");
    }
    if (!with_id) with_id = &sh;
  }
  ORRERY_PARSE_OR_RETURN(const std::optional<FolderIdentity> merged, ReadIdentity(dir + "/sweep.id"));
  if (merged && !merged->merged) {
    return Status::Invalid(dir + "/sweep.jsonl holds the rows of an unsharded sweep (" + Describe(*merged) +
                           "); merging the shards would replace them: merge the shards in a folder of their own");
  }
  if (merged && with_id && merged->identity != with_id->id->identity) {
    return Status::Invalid(dir + "/sweep.jsonl holds a merge of another sweep (" + Describe(*merged) + ") than " +
                           with_id->stem + " (" + Describe(*with_id->id) + "); refusing to replace it");
  }
  return Status::Ok();
}

// What is missing: shards never written, shards short of rows (not finished,
// or a torn last row). Empty: the merge is whole.
std::vector<std::string> Missing(const std::vector<Shard>& shards) {
  std::vector<std::string> missing;
  std::set<int> present;
  for (const Shard& sh : shards) present.insert(sh.index);
  std::string absent, first;
  for (int i = 0; i < shards[0].count; ++i) {
    if (present.count(i)) continue;
    absent += (absent.empty() ? "" : ", ") + std::to_string(i + 1);
    if (first.empty()) first = StemName(i, shards[0].count) + ".jsonl";
  }
  if (!absent.empty()) {
    missing.push_back("shard(s) " + absent + " of " + std::to_string(shards[0].count) + " missing (no " + first +
                      (absent.find(',') != std::string::npos ? ", ..." : "") + ")");
  }
  for (const Shard& sh : shards) {
    const uint64_t have = sh.file.rows.size();
    if (sh.id && have < sh.id->rows) {
      missing.push_back(sh.stem + " has " + std::to_string(have) + " of its " + std::to_string(sh.id->rows) + " rows" +
                        (sh.file.torn_bytes ? " (and a torn last line)" : "") + ": its sweep has not finished");
    }
  }
  return missing;
}

// Every shard of one split: sweep.shard-I-of-N with one N.
Status CheckOneSplit(const std::string& dir, const std::vector<Shard>& shards) {
  for (const Shard& sh : shards) {
    if (sh.count == shards[0].count) continue;
    return Status::Invalid(dir + ": " + shards[0].stem + " and " + sh.stem + " split the points differently (" +
                           std::to_string(shards[0].count) + " and " + std::to_string(sh.count) +
                           " shards); merge the shards of one --shard=I/N split (move the others to another folder)");
  }
  return Status::Ok();
}

// The shards' rows in index order (a point in two shards: an error), and
// the axis paths in the order rows first name them.
Result<std::vector<Row>> UnionRows(const std::string& dir, const std::vector<Shard>& shards,
                                   std::vector<std::string>* axis_paths) {
  std::map<uint64_t, std::pair<Row, std::string>> rows;
  for (const Shard& sh : shards) {
    for (const Row& r : sh.file.rows) {
      for (const Assignment& a : r.point) {
        if (std::find(axis_paths->begin(), axis_paths->end(), a.path) == axis_paths->end()) {
          axis_paths->push_back(a.path);
        }
      }
      auto [it, fresh] = rows.emplace(r.index, std::make_pair(r, dir + "/" + sh.stem + ".jsonl"));
      if (!fresh) {
        return Status::Invalid("point " + std::to_string(r.index) + " is in both " + it->second.second + " and " + dir +
                               "/" + sh.stem + ".jsonl; shards must not overlap (refusing to merge duplicates)");
      }
    }
  }
  std::vector<Row> all;
  for (auto& [i, rf] : rows) all.push_back(std::move(rf.first));
  return all;
}

}  // namespace

Result<Summary> MergeShards(const std::string& dir, const MergeOptions& options) {
  ORRERY_PARSE_OR_RETURN(const FolderLock out_lock, FolderLock::Take(dir, "sweep.jsonl.lock", false));
  ORRERY_PARSE_OR_RETURN(const FolderLock folder_lock, FolderLock::Take(dir, "sweep.lock", true));
  std::vector<Shard> shards;
  std::vector<FolderLock> locks;
  ORRERY_RETURN_IF_ERROR(ReadShards(dir, &shards, &locks));
  ORRERY_RETURN_IF_ERROR(CheckOneSplit(dir, shards));
  std::vector<std::string> axis_paths;
  ORRERY_PARSE_OR_RETURN(std::vector<Row> all, UnionRows(dir, shards, &axis_paths));
  ORRERY_RETURN_IF_ERROR(CheckOneSweep(dir, shards));
  Summary sum;
  const std::vector<std::string> missing = Missing(shards);
  const auto id = std::find_if(shards.begin(), shards.end(), [](const Shard& sh) { return sh.id.has_value(); });
  if (id != shards.end()) axis_paths = id->id->axis_paths;  // the spec's column order
  sum.points = all.size();
  if (id != shards.end() && id->id->points > all.size()) sum.missing = id->id->points - all.size();
  if (!missing.empty()) {
    std::string list;
    for (const std::string& m : missing) list += (list.empty() ? "" : "; ") + m;
    if (!options.partial) {
      return Status::Invalid(dir + ": the shards are incomplete: " + list +
                             "; run what is missing (a finished shard reruns in seconds doing nothing), or give "
                             "--partial to merge what is there");
    }
    sum.notes.push_back("--partial: merged what is there: " + list +
                        (sum.missing ? "; " + std::to_string(sum.missing) + " points missing" : ""));
  }
  for (const Row& r : all) sum.failed += r.status != "ok";
  sum.jsonl = dir + "/sweep.jsonl";
  sum.csv = dir + "/sweep.csv";
  ORRERY_RETURN_IF_ERROR(WriteTables(axis_paths, all, sum.jsonl, sum.csv));
  if (id == shards.end()) return sum;
  FolderIdentity merged = *id->id;
  merged.rows = all.size();
  merged.shard_index = 0;
  merged.merged = true;
  ORRERY_RETURN_IF_ERROR(WriteFileWhole(dir + "/sweep.id", IdentityJson(merged)));
  return sum;
}

}  // namespace orrery::sweep
