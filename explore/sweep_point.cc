#include "explore/sweep_point.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <sstream>

#include "core/fnv.h"
#include "core/limits.h"
#include "core/output_file.h"
#include "core/parse.h"
#include "extern/astra_config.h"
#include "extern/json_util.h"
#include "gen/gen_source.h"
#include "network/notation.h"

namespace orrery::sweep {

namespace {

bool IsNumber(const std::string& s) { return ParseDouble(s, Where{"", 0, "x"}, DoubleRange{-1e300, 1e300, true}).ok(); }

}  // namespace

std::string ExactNumber(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

namespace {

// The base's files that only a completed point reads, checked once: missing,
// every point would fail and the sweep still exit 0.
Status CheckBaseFiles(const SweepSpec& spec) {
  const SpecFiles& f = spec.base.files;
  if (!f.comm_groups.empty()) {
    if (auto text = ReadTextFile(f.comm_groups); !text.ok())
      return text.status().Prefixed(spec.file + ": base.comm-groups: ");
  }
  if (!f.workload_prefix.empty() && TraceFilesOf(f.workload_prefix).empty()) {
    return Status::Invalid(spec.file + ": base.workload = \"" + f.workload_prefix + "\": no trace files " +
                           f.workload_prefix + ".<rank>.et; allowed: the prefix of Chakra traces, one per NPU");
  }
  return Status::Ok();
}

}  // namespace

Result<Base> ReadBase(const SweepSpec& spec, const Registries& registries) {
  ORRERY_RETURN_IF_ERROR(CheckBaseFiles(spec));
  Base b;
  auto inputs = ReadSpecInputs(spec.base, registries);
  if (!inputs.ok()) return inputs.status();
  b.spec = std::move(inputs.value());
  auto sys = ReadJsonFile(spec.base.files.system);
  if (!sys.ok()) return sys.status();
  b.system = sys.value();
  if (!spec.generate.empty()) {
    auto options = gen::ReadGenerateArguments(spec.generate);
    if (!options.ok()) return options.status().Prefixed(spec.file + ": generate: ");
    if (!options->system_out.empty()) {
      return Status::Invalid(spec.file + ": generate: --system-out=" + options->system_out +
                             ": a sweep writes no file per point; run 'orrery gen --device=" + options->device +
                             " --system-out=F.json' once and name F.json in base.system");
    }
    b.generate = std::move(options.value());
  }
  // Completing the base once fills the Spec's caches (the traces' digest,
  // groups, custom algorithms) that points with as many NPUs reuse; a base
  // that does not complete leaves each point to say why.
  if (b.spec.source) {
    orrery::Spec warm = b.spec;
    if (CompleteSpec(&warm, registries).ok()) b.spec = std::move(warm);
  }
  return b;
}

// The point's workload: the base's generator options with the point's gen.*
// flags replaced, generated once per distinct flags and network.
void Preparer::GeneratePoint(const std::vector<Assignment>& point, Prepared* p) {
  gen::GenOptions o = *base_.generate;
  Status set;
  for (const Assignment& a : point) {
    if (a.path.rfind("gen.", 0) != 0) continue;
    if (Status st = gen::SetGenFlag(&o, a.path.substr(4), a.value.text); set.ok()) set = st;
  }
  const std::string what = "--generate=\"" + gen::GenArgsText(o) + "\"";
  if (set.ok()) set = gen::FinishGenOptions(&o);
  const std::string key = gen::GenArgsText(o) + "|" + p->spec.files.network;
  auto it = generated_.find(key);
  if (it == generated_.end()) {
    Entry e;
    if (!set.ok()) {
      e.error = set.Prefixed(what + ": ").message();
    } else {
      auto source = gen::GeneratedSource(o, p->spec.files.network, what);
      e = source.ok() ? Entry{source.value(), ""} : Entry{nullptr, source.status().message()};
    }
    it = generated_.emplace(key, std::move(e)).first;
  }
  p->spec.source = it->second.source;
  p->error = it->second.error;
  if (p->error.empty()) p->generate = std::move(o);
}

namespace {

// network.notation and network.dimK.FIELD (values checked when the spec was
// read; read again here through core/parse.h, nothing is taken on trust).
Status SetNetwork(const Assignment& a, const std::string& where, std::vector<Dim>* dims, SpecFiles* files) {
  const std::string& path = a.path;
  if (path == "network.notation") {
    auto parsed = ParseTopologyNotation(a.value.text);
    if (!parsed.ok()) return parsed.status().Prefixed(where + ": network.notation: ");
    *dims = parsed.value();
    files->network = a.value.text;
    return Status::Ok();
  }
  const size_t dot = path.find('.', 8);
  const Where at{where, 0, path};
  ORRERY_PARSE_OR_RETURN(const int64_t k, ParseInt(path.substr(11, dot - 11), at, 0, 1 << 20));
  if (k >= static_cast<int64_t>(dims->size())) {
    return Status::Invalid(where + ": " + path + ": the network has " + std::to_string(dims->size()) + " dimension(s)");
  }
  const std::string field = path.substr(dot + 1);
  Dim& d = (*dims)[k];
  if (field == "bandwidth_gbps") {
    ORRERY_PARSE_OR_RETURN(d.bandwidth_gbps, ParseDouble(a.value.text, at, kBandwidthGBps));
  }
  if (field == "latency_ns") {
    ORRERY_PARSE_OR_RETURN(d.latency_ns, ParseDouble(a.value.text, at, kLatencyNs));
  }
  if (field == "npus" || field == "links_per_npu") {
    ORRERY_PARSE_OR_RETURN(const int64_t n,
                           ParseInt(a.value.text, at, 1, field == "npus" ? kMaxNpus : kMaxLinksPerNpu));
    (field == "npus" ? d.npus : d.links_per_npu) = static_cast<int>(n);
  }
  return Status::Ok();
}

// The point's NPUs: the dimensions' product within kMaxNpus, checked before it is formed.
Status CheckNpus(const std::vector<Dim>& dims, const std::string& where) {
  std::vector<Factor> factors;
  for (size_t k = 0; k < dims.size(); ++k)
    factors.push_back({"network.dim" + std::to_string(k) + ".npus", dims[k].npus});
  return CheckedProduct(factors, kMaxNpus, Where{where, 0, ""}, "NPUs up to " + std::to_string(kMaxNpus) + " (2^26)")
      .status();
}

// system.KEY into the system document: an *-implementation value applies to
// every dimension; a number is an integer when written as one (no . e E) and
// fits int64, else a double (the system reader checks its range).
Status SetSystemKey(const Assignment& a, size_t dims, const std::string& where, nlohmann::json* sys) {
  const std::string key = a.path.substr(7);
  nlohmann::json& v = (*sys)[key];
  if (key.size() > 15 && key.compare(key.size() - 15, 15, "-implementation") == 0) {
    v = nlohmann::json::array();
    for (size_t d = 0; d < dims; ++d) v.push_back(a.value.text);
  } else if (!a.value.is_string && IsNumber(a.value.text)) {
    const Where at{where, 0, a.path};
    auto i = ParseInt(a.value.text, at, INT64_MIN, INT64_MAX);
    if (a.value.text.find_first_of(".eE") == std::string::npos && i.ok()) {
      v = i.value();
    } else {
      ORRERY_PARSE_OR_RETURN(v, ParseDouble(a.value.text, at, DoubleRange{-1e300, 1e300, false}));
    }
  } else {
    v = a.value.text;
  }
  return Status::Ok();
}

// run.backend, run.iterations, run.symmetry (checked when the spec was read); run.heterogeneity
// names a file, set by the caller.
Status SetRunOption(const Assignment& a, const std::string& where, RunOptions* run) {
  if (a.path == "run.backend") run->backend = a.value.text;
  if (a.path == "run.iterations") {
    ORRERY_PARSE_OR_RETURN(run->iterations, ParseInt(a.value.text, Where{where, 0, a.path}, 1, 1000000));
  }
  if (a.path == "run.symmetry") ParseSymmetry(a.value.text, &run->symmetry);
  return Status::Ok();
}

// The point's hash: its resolved inputs (SpecHash), or, for a point that
// could not be resolved, its assignments and the reason.
std::string PointHash(const Prepared& p, const std::vector<Assignment>& point) {
  if (p.error.empty()) return SpecHash(p.spec);
  std::string text = "unresolved point\n" + p.error + "\n";
  for (const Assignment& a : point) text += a.path + "=" + a.value.text + "\n";
  return HexU64(Fnv1a(kFnvOffset, text));
}

}  // namespace

Result<Prepared> Preparer::Prepare(uint64_t index, const std::vector<Assignment>& point) {
  Prepared p;
  p.spec = base_.spec;  // the point: the base with fields replaced
  orrery::Spec& c = p.spec;
  std::vector<Dim> dims = base_.spec.dims;
  nlohmann::json sys = base_.system;
  const std::string where = spec_.file + ": point " + std::to_string(index);
  for (const Assignment& a : point) {
    if (a.path.rfind("network.", 0) == 0) ORRERY_RETURN_IF_ERROR(SetNetwork(a, where, &dims, &c.files));
    if (a.path.rfind("system.", 0) == 0) ORRERY_RETURN_IF_ERROR(SetSystemKey(a, dims.size(), where, &sys));
    if (a.path.rfind("run.", 0) == 0) ORRERY_RETURN_IF_ERROR(SetRunOption(a, where, &c.run));
    // A heterogeneity file by point ("none": the cluster as configured), relative to the spec.
    if (a.path == "run.heterogeneity") {
      c.files.heterogeneity = a.value.text == "none" ? "" : ResolveSpecPath(spec_.file, a.value.text);
    }
  }
  ORRERY_RETURN_IF_ERROR(CheckNpus(dims, where));
  for (const Dim& d : dims) {
    if (!(d.bandwidth_gbps >= 0.001)) {
      return Status::Invalid(where + ": a dimension's bandwidth_gbps = " + ExactNumber(d.bandwidth_gbps) +
                             "; allowed: >= 0.001");
    }
  }
  ORRERY_PARSE_OR_RETURN(c.system, ParseAstraSystemJson(sys, spec_.base.files.system + " (" + where + ")"));
  c.dims = std::move(dims);
  if (base_.generate) GeneratePoint(point, &p);
  // The rest of the point follows from its inputs (run/spec.h); a
  // point that does not complete is a row with the reason.
  if (p.error.empty()) {
    if (Status st = CompleteSpec(&c, registries_); !st.ok()) p.error = st.message();
  }
  p.hash = PointHash(p, point);
  return p;
}

}  // namespace orrery::sweep
