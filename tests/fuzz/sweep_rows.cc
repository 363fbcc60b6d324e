// Fuzz target: sweep rows on disk as `sweep` resumes them and `sweep merge`
// unions them (explore/sweep_rows.h, explore/sweep_folder.h). The fuzzed
// bytes are a bundle of files (fuzz_util.h: "@@ NAME" lines): sweep.jsonl,
// sweep.shard-I-of-N.jsonl, their .id files, anything. Each JSON Lines file
// is read; the bundle is merged in one folder (whole, then --partial), and
// resumed in another by a fixed 4-point spec, unsharded and as shard 1 of 2,
// whose points are recorded without being simulated. In the files, @H0..@H3
// stand for the fixed spec's point hashes and @ID for its identity, so
// seeds can hold rows a resume keeps.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "explore/sweep.h"
#include "explore/sweep_folder.h"
#include "explore/sweep_rows.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using namespace orrery;

constexpr char kSpec[] = R"(base:
  network: base_network.yml
  system: base_system.json
  workload: base
  comm-groups: base_groups.json
axes:
  network.dim0.bandwidth_gbps: [50, 100]
  network.dim0.latency_ns: [500, 1000]
)";

struct Reference {
  sweep::SweepSpec spec;
  std::vector<std::string> hashes;  // by point
  std::string identity;
};

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "sweep_rows: %s\n", what.c_str());
  std::abort();
}

// Records every point of the shard as a row without simulating it.
sweep::Runner NoSimulation(const sweep::SweepSpec& spec, int shard_index, int shard_count) {
  return [&spec, shard_index, shard_count](const sweep::Plan&, const std::vector<size_t>& todo,
                                           const std::function<void(sweep::Row)>& record) {
    for (size_t t : todo) {
      const size_t k = static_cast<size_t>(shard_index) + t * static_cast<size_t>(shard_count);
      sweep::Row row;
      row.index = spec.indices[k];
      row.point = spec.points[k];
      row.hash = "0000000000000000";
      row.status = "not simulated (fuzz)";
      record(std::move(row));
    }
    return Status::Ok();
  };
}

Reference MakeReference() {
  Reference ref;
  fuzz::BaseNetwork(), fuzz::BaseSystem(), fuzz::BaseTraces(), fuzz::BaseGroups();
  const std::string path = fuzz::WriteInput("rows_spec.yml", reinterpret_cast<const uint8_t*>(kSpec),
                                            sizeof(kSpec) - 1);
  auto spec = sweep::ReadSweepSpec(path);
  if (!spec.ok()) Die(spec.status().message());
  ref.spec = std::move(spec.value());
  sweep::Options dry;
  dry.dry_run = true;
  std::string text;
  if (auto s = sweep::RunSweep(ref.spec, dry, &text); !s.ok()) Die(s.status().message());
  for (size_t at = text.find('['); at != std::string::npos; at = text.find('[', at + 1)) {
    ref.hashes.push_back(text.substr(at + 1, text.find(']', at) - at - 1));
  }
  sweep::Options once;
  once.out_dir = fuzz::FreshDir("rows_reference");
  if (auto s = sweep::RunSweep(ref.spec, once, nullptr, NoSimulation(ref.spec, 0, 1)); !s.ok()) {
    Die(s.status().message());
  }
  auto id = sweep::ReadIdentity(once.out_dir + "/sweep.id");
  if (!id.ok() || !id.value()) Die("no sweep.id");
  ref.identity = id.value()->identity;
  return ref;
}

void Replace(std::string* text, const std::string& from, const std::string& to) {
  for (size_t at = text->find(from); at != std::string::npos; at = text->find(from, at + to.size())) {
    text->replace(at, from.size(), to);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Reference ref = MakeReference();
  fuzz::Bundle files = fuzz::SplitBundle(data, size);
  for (auto& [name, text] : files) {
    Replace(&text, "@ID", ref.identity);
    for (size_t k = 0; k < ref.hashes.size(); ++k) Replace(&text, "@H" + std::to_string(k), ref.hashes[k]);
  }
  const std::string merge = fuzz::FreshDir("rows_merge");
  fuzz::WriteBundle(files, merge);
  for (const auto& [name, text] : files) fuzz::Note("read " + name, sweep::ReadRows(merge + "/" + name).status());
  const Status merged = sweep::MergeShards(merge).status();
  fuzz::Note("merge", merged);
  if (!merged.ok()) fuzz::Note("merge --partial", sweep::MergeShards(merge, sweep::MergeOptions{true}).status());
  const std::string resume = fuzz::FreshDir("rows_resume");
  fuzz::WriteBundle(files, resume);
  for (const auto& [index, count] : {std::make_pair(0, 1), std::make_pair(0, 2)}) {
    sweep::Options o;
    o.out_dir = resume;
    o.shard_index = index;
    o.shard_count = count;
    fuzz::Note("resume " + sweep::StemName(index, count),
               sweep::RunSweep(ref.spec, o, nullptr, NoSimulation(ref.spec, index, count)).status());
  }
  return 0;
}
