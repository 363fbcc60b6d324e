#include "explore/sweep_point.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "core/parse.h"
#include "extern/astra_config.h"
#include "extern/json_util.h"
#include "network/notation.h"
#include "core/fnv.h"
#include "gen/gen_source.h"

namespace orrery::sweep {

namespace {

bool IsNumber(const std::string& s) {
  return ParseDouble(s, Where{"", 0, "x"}, DoubleRange{-1e300, 1e300, true}).ok();
}

}  // namespace

std::string ExactNumber(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

Result<Base> ReadBase(const SweepSpec& spec, const Registries& registries) {
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

Result<Prepared> Preparer::Prepare(uint64_t index, const std::vector<Assignment>& point) {
  Prepared p;
  p.spec = base_.spec;  // the point: the base with fields replaced
  orrery::Spec& c = p.spec;
  std::vector<Dim> dims = base_.spec.dims;
  nlohmann::json sys = base_.system;
  const std::string where = spec_.file + ": point " + std::to_string(index);
  for (const Assignment& a : point) {
    const std::string& path = a.path;
    if (path == "network.notation") {
      auto parsed = ParseTopologyNotation(a.value.text);
      if (!parsed.ok()) return parsed.status().Prefixed(where + ": network.notation: ");
      dims = parsed.value();
      c.files.network = a.value.text;
    } else if (path.rfind("network.dim", 0) == 0) {
      const size_t dot = path.find('.', 8);
      const int k = std::stoi(path.substr(11, dot - 11));
      if (k >= static_cast<int>(dims.size())) {
        return Status::Invalid(where + ": " + path + ": the network has " + std::to_string(dims.size()) +
                               " dimension(s)");
      }
      const std::string field = path.substr(dot + 1);
      const double v = std::stod(a.value.text);
      if (field == "bandwidth_gbps") dims[k].bandwidth_gbps = v;
      if (field == "latency_ns") dims[k].latency_ns = v;
      if (field == "npus") dims[k].npus = static_cast<int>(v);
      if (field == "links_per_npu") dims[k].links_per_npu = static_cast<int>(v);
    } else if (path.rfind("system.", 0) == 0) {
      const std::string key = path.substr(7);
      if (key.size() > 15 && key.compare(key.size() - 15, 15, "-implementation") == 0) {
        sys[key] = nlohmann::json::array();
        for (size_t d = 0; d < dims.size(); ++d) sys[key].push_back(a.value.text);  // one per dimension
      } else if (!a.value.is_string && IsNumber(a.value.text)) {
        sys[key] = std::stod(a.value.text);
        if (a.value.text.find_first_of(".eE") == std::string::npos) sys[key] = std::stoll(a.value.text);
      } else {
        sys[key] = a.value.text;
      }
    } else if (path == "run.backend") {
      c.run.backend = a.value.text;
    } else if (path == "run.iterations") {
      c.run.iterations = std::stoi(a.value.text);
    } else if (path == "run.symmetry") {
      ParseSymmetry(a.value.text, &c.run.symmetry);  // checked when the spec was read
    }
  }
  for (const Dim& d : dims) {
    if (!(d.bandwidth_gbps >= 0.001)) {
      return Status::Invalid(where + ": a dimension's bandwidth_gbps = " + ExactNumber(d.bandwidth_gbps) +
                             "; allowed: >= 0.001");
    }
  }
  auto parsed = ParseAstraSystemJson(sys, spec_.base.files.system + " (" + where + ")");
  if (!parsed.ok()) return parsed.status();
  c.system = std::move(parsed.value());
  c.dims = std::move(dims);
  if (base_.generate) GeneratePoint(point, &p);
  // The rest of the point follows from its inputs (run/spec.h); a
  // point that does not complete is a row with the reason.
  if (p.error.empty()) {
    if (Status st = CompleteSpec(&c, registries_); !st.ok()) p.error = st.message();
  }
  // The hash names the point's resolved inputs (SpecHash); a point that
  // could not be resolved is named by its assignments and the reason.
  if (p.error.empty()) {
    p.hash = SpecHash(c);
  } else {
    std::string text = "unresolved point\n" + p.error + "\n";
    for (const Assignment& a : point) text += a.path + "=" + a.value.text + "\n";
    p.hash = HexU64(Fnv1a(kFnvOffset, text));
  }
  return p;
}

}  // namespace orrery::sweep
