#include "gen/generate.h"

#include <cstdio>
#include <fstream>

#include "core/units.h"
#include "gen/device.h"
#include "gen/dlrm.h"
#include "gen/dlrm_model.h"
#include "gen/gen_args.h"
#include "gen/model.h"
#include "gen/strategy.h"
#include "gen/summary.h"

namespace orrery {

int RunGenCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  auto fail = [&](const Status& st) {
    err << "orrery: " << st.message() << "\n";
    return st.exit_code();
  };
  auto opts = gen::ParseGenArgs(args);
  if (!opts.ok()) return fail(opts.status());
  std::vector<Dim> dims;
  if (Status st = gen::ResolvePlacement(&opts.value(), &dims); !st.ok()) return fail(st);
  const gen::GenOptions& o = opts.value();
  if (o.help) {
    out << gen::GenUsage();
    return 0;
  }
  if (o.list_devices) {
    for (const gen::DevicePreset& d : gen::DevicePresets()) {
      char line[160];
      std::snprintf(line, sizeof line, "%s: %g TFLOP/s dense BF16, HBM %g GB/s, %g GB", d.name.c_str(),
                    d.peak_tflops, d.hbm_gbps, d.hbm_gb);
      out << line << "  [" << d.source << "]\n";
    }
    return 0;
  }
  if (!o.system_out.empty()) {
    auto d = gen::FindDevice(o.device);
    if (!d.ok()) return fail(d.status());
    std::ofstream f(o.system_out);
    f << gen::DeviceSystemJson(d.value(), o.efficiency);
    if (!f) return fail(Status::Env(o.system_out + ": cannot write the system configuration"));
    out << "wrote " << o.system_out << " (" << o.device << " at " << o.efficiency << " of peak)\n";
    if (o.model.empty()) return 0;
  }
  if (o.list_models) {
    for (const gen::ModelDesc& m : gen::Presets()) {
      char params[32];
      std::snprintf(params, sizeof params, "%.1f B", Billions(static_cast<double>(gen::ParamCount(m))));
      if (m.kind == gen::ModelKind::kDlrm) {
        out << m.name << ": " << params << " parameters, " << gen::DescribeDlrm(m.dlrm) << "  [" << m.source << "]\n";
        continue;
      }
      out << m.name << ": " << params << " parameters, " << m.layers << " layers, hidden " << m.hidden << ", heads "
          << m.heads << "/" << m.kv_heads << ", vocab " << m.vocab << ", seq " << m.seq_len
          << (m.experts ? ", " + std::to_string(m.experts) + " experts top-" + std::to_string(m.top_k) : "")
          << "  [" << m.source << "]\n";
    }
    return 0;
  }
  auto model = gen::LoadModel(o.model);
  if (!model.ok()) return fail(model.status());
  if (Status st = gen::CheckFlagsForModel(o, model.value()); !st.ok()) return fail(st);
  auto write = [&](const gen::Workload& w) {
    if (o.out.empty()) return 0;
    if (Status st = gen::WriteChakra(w, o.out); !st.ok()) return fail(st);
    out << "wrote " << w.layout.npus() << " traces " << o.out << ".<rank>.et and " << o.out << ".comm_groups.json\n";
    return 0;
  };
  if (model->kind == gen::ModelKind::kDlrm) {
    auto d = gen::GenerateDlrmFromOptions(model.value(), o);
    if (!d.ok()) return fail(d.status());
    if (o.summary || o.out.empty()) out << gen::FormatDlrmSummary(model.value(), d->strategy, d->workload, o.hbm_bytes);
    return write(d->workload);
  }
  if (Status st = gen::ValidateStrategy(model.value(), o.strategy); !st.ok()) return fail(st);
  if (!o.allow_over_capacity) {
    if (Status st = gen::CheckCapacity(model.value(), o.strategy, o.hbm_bytes); !st.ok()) return fail(st);
  }
  auto w = gen::GenerateDense(model.value(), o.strategy);
  if (!w.ok()) return fail(w.status());
  if (o.summary || o.out.empty()) out << gen::FormatSummary(model.value(), o.strategy, w.value(), o.hbm_bytes, dims);
  return write(w.value());
}

}  // namespace orrery
