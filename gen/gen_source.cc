#include "gen/gen_source.h"

#include <optional>
#include <sstream>

#include "core/fnv.h"
#include "core/tick.h"
#include "extern/json_util.h"
#include "gen/device.h"
#include "gen/dlrm.h"
#include "gen/formulas.h"
#include "gen/gen_args.h"
#include "gen/model.h"
#include "gen/summary.h"

namespace orrery::gen {

namespace {

// Bytes of trace input a generated node stands for in the run's memory
// estimate (run/run_budget.h counts graph memory per trace byte).
constexpr uint64_t kInputBytesPerNode = 64;

class Generated : public GraphSource {
 public:
  Generated(Workload w, std::string description, std::string canonical, std::optional<WorkloadFigures> figures = {})
      : w_(std::move(w)),
        description_(std::move(description)),
        canonical_(std::move(canonical)),
        figures_(std::move(figures)) {
    if (figures_) {
      const Flops hardware = TotalFlops(w_);
      figures_->hardware_flops = FlopsText(hardware);
      figures_->hardware_flops_d = static_cast<double>(hardware);
    }
  }

  std::string Describe() const override { return description_; }

  Status Check(int npus, const std::string& network, uint64_t* rank0_bytes, uint64_t* total_bytes) const override {
    if (w_.layout.npus() != npus) {
      return Status::Invalid(description_ + ": the strategy places " + std::to_string(w_.layout.npus()) + " ranks (" +
                             w_.layout.OrderText() + ") but the network (" + network + ") has " + std::to_string(npus) +
                             " NPUs; they must be equal");
    }
    *rank0_bytes = w_.classes[w_.class_of_rank[0]].nodes().size() * kInputBytesPerNode;
    *total_bytes = 0;
    for (int r = 0; r < npus; ++r) {
      *total_bytes = SatAdd(*total_bytes, w_.classes[w_.class_of_rank[r]].nodes().size() * kInputBytesPerNode);
    }
    return Status::Ok();
  }

  Result<NpuGraph> Load(int rank, const GraphLoadOptions& options) const override {
    static const std::map<std::string, int> kNoGroups;
    return ToNpuGraph(w_, rank, options.groups ? *options.groups : kNoGroups);
  }

  bool SameInputAsRank0(int rank) const override { return w_.class_of_rank[rank] == w_.class_of_rank[0]; }

  // Pipeline stage x role (gen::Workload::class_of_rank): peers and groups move with the rank.
  const std::vector<int>* DeclaredClasses() const override { return &w_.class_of_rank; }
  bool RankPeers(int rank, std::vector<int>* peers) const override {
    gen::RankPeers(w_, rank, peers);
    return true;
  }

  std::map<std::string, std::vector<int>> CommGroups() const override { return w_.layout.AllGroups(); }

  Result<SourceDigest> Digest(int npus) const override {
    SourceDigest d;
    d.text = canonical_;
    d.same_as_rank0.assign(npus, false);
    for (int r = 0; r < npus && r < static_cast<int>(w_.class_of_rank.size()); ++r)
      d.same_as_rank0[r] = SameInputAsRank0(r);
    return d;
  }

  const WorkloadFigures* Figures() const override { return figures_ ? &*figures_ : nullptr; }

 private:
  Workload w_;
  std::string description_;
  std::string canonical_;
  std::optional<WorkloadFigures> figures_;
};

// Model FLOPs (gen/formulas.h ModelFlops without recomputation; a DLRM's
// closed form), tokens per iteration and the largest stage's memory.
WorkloadFigures FiguresOf(const GenOptions& o, const ModelDesc& m) {
  WorkloadFigures f;
  if (!o.device.empty()) {
    if (auto d = FindDevice(o.device); d.ok()) {
      f.device = o.device;  // a preset's name or a device YAML file, as given
      f.device_peak_tflops = d->peak_tflops;
    }
  }
  if (m.kind == ModelKind::kDlrm) {
    if (auto s = DlrmStrategyFromOptions(o); s.ok()) {
      const Flops flops = DlrmClosedFormFlops(m.dlrm, s->local_batch * s->npus);
      f.model_flops = FlopsText(flops);
      f.model_flops_d = static_cast<double>(flops);
    }
    return f;
  }
  const Strategy& s = o.strategy;
  const uint64_t batch = static_cast<uint64_t>(s.microbatch_size * s.microbatches * s.dp * s.ep);
  const Flops flops = ModelFlops(m, batch, Recompute::kNone, s.lm_head);
  f.model_flops = FlopsText(flops);
  f.model_flops_d = static_cast<double>(flops);
  f.tokens = batch * static_cast<uint64_t>(m.seq_len);
  for (int64_t stage = 0; stage < s.pp; ++stage) {
    const uint64_t bytes = StageMemory(m, s, stage).total_bytes;
    if (bytes > f.memory_bytes) {
      f.memory_bytes = bytes;
      f.memory_stage = stage;
    }
  }
  return f;
}

// The generator's arguments in one canonical form: split at whitespace, one
// space between; a model given as a file enters by its content's hash.
std::string CanonicalArguments(const std::vector<std::string>& args) {
  std::string out = "generated:";
  for (const std::string& a : args) {
    std::string token = a;
    if (a.rfind("--model=", 0) == 0) {
      if (auto text = ReadTextFile(a.substr(8)); text.ok())
        token = "--model=file:fnv1a64:" + HexU64(Fnv1a(kFnvOffset, text.value()));
    }
    out += " " + token;
  }
  return out;
}

}  // namespace

std::shared_ptr<const GraphSource> WorkloadSource(Workload workload, std::string description) {
  std::string canonical = "workload: " + description;
  return std::make_shared<Generated>(std::move(workload), std::move(description), std::move(canonical));
}

Result<GenOptions> ReadGenerateArguments(const std::string& arguments) {
  const std::string what = "--generate=\"" + arguments + "\"";
  std::vector<std::string> args;
  std::istringstream in(arguments);
  for (std::string a; in >> a;) args.push_back(a);
  if (args.empty())
    return Status::Invalid(
        what + ": empty; give orrery gen's flags, e.g. --generate=\"--model=gpt3-175b --tp=8 --pp=8 --dp=16\"");
  for (const std::string& a : args) {
    if (a.rfind("--network=", 0) == 0) {
      return Status::Invalid(what + ": --network: the run's --network-configuration is the network; leave it out");
    }
    for (const char* output : {"--out", "--summary", "--list-models", "--help"}) {
      const std::string o = output;
      if (a == o || a.rfind(o + "=", 0) == 0) {
        return Status::Invalid(what + ": " + o +
                               " is an output of 'orrery gen'; --generate simulates the workload "
                               "in memory (run 'orrery gen " +
                               o + "' separately)");
      }
    }
  }
  auto opts = ReadGenArgs(args);
  if (!opts.ok()) return opts.status().Prefixed(what + ": ");
  return opts;
}

Result<std::shared_ptr<const GraphSource>> GeneratedSource(const std::string& arguments, const std::string& network) {
  auto opts = ReadGenerateArguments(arguments);
  if (!opts.ok()) return opts.status();
  return GeneratedSource(std::move(opts.value()), network, "--generate=\"" + arguments + "\"");
}

Result<std::shared_ptr<const GraphSource>> GeneratedSource(GenOptions o, const std::string& network,
                                                           const std::string& what) {
  if (Status st = FinishGenOptions(&o); !st.ok()) return st.Prefixed(what + ": ");
  if (!o.place.empty()) {
    o.network = network;
    std::vector<Dim> dims;
    if (Status st = ResolvePlacement(&o, &dims); !st.ok()) return st.Prefixed(what + ": ");
  }
  auto model = LoadModel(o.model);
  if (!model.ok()) return model.status().Prefixed(what + ": ");
  if (Status st = CheckFlagsForModel(o, model.value()); !st.ok()) return st.Prefixed(what + ": ");
  if (model->kind == ModelKind::kDlrm) {
    auto d = GenerateDlrmFromOptions(model.value(), o);
    if (!d.ok()) return d.status().Prefixed(what + ": ");
    d->workload.comm_streams = o.comm_streams;
    return std::shared_ptr<const GraphSource>(
        std::make_shared<Generated>(std::move(d->workload), "generated workload " + what, CanonicalArguments(o.args),
                                    FiguresOf(o, model.value())));
  }
  if (Status st = ValidateStrategy(model.value(), o.strategy); !st.ok()) return st.Prefixed(what + ": ");
  if (!o.allow_over_capacity) {
    if (Status st = CheckCapacity(model.value(), o.strategy, o.hbm_bytes); !st.ok()) {
      return st.Prefixed(what + ": ");
    }
  }
  auto w = GenerateDense(model.value(), o.strategy);
  if (!w.ok()) return w.status().Prefixed(what + ": ");
  w->comm_streams = o.comm_streams;
  return std::shared_ptr<const GraphSource>(
      std::make_shared<Generated>(std::move(w.value()), "generated workload " + what, CanonicalArguments(o.args),
                                  FiguresOf(o, model.value())));
}

}  // namespace orrery::gen
