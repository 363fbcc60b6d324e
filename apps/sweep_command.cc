// `orrery sweep SPEC.yml --jobs=N --out=DIR [--shard=I/N] [--dry-run]` and
// `orrery sweep merge DIR`: the command line of explore/sweep.h.
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <thread>

#include "apps/commands.h"
#include "core/parse.h"
#include "explore/sweep.h"
#include "explore/sweep_mpi.h"

namespace orrery::cli {

namespace {

struct SweepFlags {
  std::vector<std::string> args;
  std::string jobs, shard, out = "sweep-results";
  bool dry_run = false, quiet = false, critical_path = false, mpi = false, partial = false;
  std::vector<std::string> plugins;
};

void PrintNotes(const sweep::Summary& sum) {
  for (const std::string& note : sum.notes) std::fprintf(stderr, "orrery: note: %s\n", note.c_str());
}

int RunSweepCommand(const SweepFlags& f) {
  if (f.args.size() == 2 && f.args[0] == "merge") {
    auto merged = sweep::MergeShards(f.args[1], sweep::MergeOptions{f.partial});
    if (!merged.ok()) return Fail(merged.status());
    PrintNotes(merged.value());
    std::printf("merged %llu points (%llu failed) into %s and %s\n", static_cast<unsigned long long>(merged->points),
                static_cast<unsigned long long>(merged->failed), merged->jsonl.c_str(), merged->csv.c_str());
    return 0;
  }
  if (f.args.size() != 1 || f.args[0] == "merge") {
    return Fail(Status::Invalid(
        "usage: orrery sweep SPEC.yml [--jobs=N] [--out=DIR] [--shard=I/N] [--dry-run] [--mpi] [--critical-path], "
        "or orrery sweep merge DIR [--partial]"));
  }
  if (f.partial) return Fail(Status::Invalid("--partial is a flag of 'orrery sweep merge DIR' only"));
  sweep::Options o;
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  o.jobs = cores;
  if (!f.jobs.empty()) {
    auto j = IntFlag("--jobs", f.jobs, 1, 4096);
    if (!j.ok()) return Fail(j.status());
    o.jobs = static_cast<int>(j.value());
  }
  if (!f.shard.empty()) {
    const size_t slash = f.shard.find('/');
    auto bad = [&] {
      return Fail(ValueError(Where{"", 0, "--shard"}, f.shard, "not I/N with 1 <= I <= N", "e.g. --shard=3/64"));
    };
    if (slash == std::string::npos) return bad();
    auto i = ParseInt(f.shard.substr(0, slash), Where{"", 0, "--shard"}, 1, 1 << 20);
    auto n = ParseInt(f.shard.substr(slash + 1), Where{"", 0, "--shard"}, 1, 1 << 20);
    if (!i.ok() || !n.ok() || i.value() > n.value()) return bad();
    o.shard_index = static_cast<int>(i.value() - 1);
    o.shard_count = static_cast<int>(n.value());
  }
  o.out_dir = f.out;
  o.dry_run = f.dry_run;
  o.critical_path = f.critical_path;
  o.progress = !f.quiet && isatty(STDERR_FILENO);
  auto set = BuildRegistrySet(f.plugins);
  if (!set.ok()) return Fail(set.status());
  const RegistrySet& r = *set.value();
  const Registries registries{&r.backends, &r.algorithms, &r.memories};
  o.registries = &registries;
  auto finish = [&](const Result<sweep::Summary>& result, const std::string& dry) {
    if (!result.ok()) return Fail(result.status());
    const sweep::Summary* sum = &result.value();
    PrintNotes(*sum);
    if (o.dry_run) {
      std::fputs(dry.c_str(), stdout);
      return 0;
    }
    std::printf("%llu points in this run: %llu simulated, %llu already done, %llu failed; %s, %s\n",
                static_cast<unsigned long long>(sum->in_shard), static_cast<unsigned long long>(sum->ran),
                static_cast<unsigned long long>(sum->skipped), static_cast<unsigned long long>(sum->failed),
                sum->csv.c_str(), sum->jsonl.c_str());
    return 0;
  };
  if (f.mpi) return sweep::RunSweepMpi(f.args[0], o, finish);
  auto spec = sweep::ReadSweepSpec(f.args[0]);
  if (!spec.ok()) return Fail(spec.status());
  std::string dry;
  return finish(sweep::RunSweep(spec.value(), o, &dry), dry);
}

}  // namespace

void AddSweepCommand(Commands* commands, CLI::App* root) {
  auto f = std::make_shared<SweepFlags>();
  CLI::App* cmd = commands->AddLeaf(root, "sweep",
                                    "simulate every point of a design space (YAML spec), resumable and shardable; "
                                    "'sweep merge DIR' unions shards",
                                    [f] { return RunSweepCommand(*f); });
  cmd->add_option("ARGS", f->args, "SPEC.yml, or: merge DIR")->required();
  cmd->add_option("--jobs", f->jobs, "simulations at once in this process (default: every core)")->type_name("N");
  cmd->add_option("--out", f->out, "the output folder: sweep.csv and sweep.jsonl (per shard: sweep.shard-I-of-N.*)")
      ->type_name("DIR")
      ->capture_default_str();
  cmd->add_option("--shard", f->shard, "run slice I of N of the points (index mod N = I-1), e.g. a Slurm array task")
      ->type_name("I/N");
  cmd->add_flag("--dry-run", f->dry_run, "print the number of points and the first ten, run nothing");
  cmd->add_flag("--quiet", f->quiet, "no progress line on stderr");
  cmd->add_flag("--partial", f->partial,
                "sweep merge: merge the shards that are there when some are missing or unfinished (a note says "
                "which), instead of refusing");
  cmd->add_flag("--mpi", f->mpi,
                "run as one rank of an MPI job (mpirun -n N orrery sweep SPEC --mpi): rank 0 hands out points "
                "and writes the output, the others simulate (needs an MPI build)");
  cmd->add_option("--plugin", f->plugins,
                  "load a plugin shared library whose backends or algorithms points name (repeatable)")
      ->type_name("PATH.so")
      ->allow_extra_args(false);
  cmd->add_flag("--critical-path", f->critical_path,
                "find every point's critical path: its communication per network dimension in the row "
                "(dimK_exposed_comm_ns)");
}

}  // namespace orrery::cli
