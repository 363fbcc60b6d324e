#include "gen/generate.h"

#include <cstdio>
#include <fstream>

#include "core/output_file.h"
#include "core/parse.h"
#include "core/units.h"
#include "gen/device.h"
#include "gen/dlrm.h"
#include "gen/dlrm_model.h"
#include "gen/gen_args.h"
#include "gen/model.h"
#include "gen/strategy.h"
#include "gen/summary.h"

namespace orrery {

namespace {

void ListDevices(std::ostream& out) {
  for (const gen::DevicePreset& d : gen::DevicePresets()) {
    char line[160];
    std::snprintf(line, sizeof line, "%s: %g TFLOP/s dense BF16, HBM %g GB/s, %g GB", d.name.c_str(), d.peak_tflops,
                  d.hbm_gbps, d.hbm_gb);
    out << line << "  [" << d.source << "]\n";
  }
}

void ListModels(std::ostream& out) {
  for (const gen::ModelDesc& m : gen::Presets()) {
    char params[32];
    std::snprintf(params, sizeof params, "%.1f B", Billions(static_cast<double>(gen::ParamCount(m))));
    if (m.kind == gen::ModelKind::kDlrm) {
      out << m.name << ": " << params << " parameters, " << gen::DescribeDlrm(m.dlrm) << "  [" << m.source << "]\n";
      continue;
    }
    out << m.name << ": " << params << " parameters, " << m.layers << " layers, hidden " << m.hidden << ", heads "
        << m.heads << "/" << m.kv_heads << ", vocab " << m.vocab << ", seq " << m.seq_len
        << (m.experts ? ", " + std::to_string(m.experts) + " experts top-" + std::to_string(m.top_k) : "") << "  ["
        << m.source << "]\n";
  }
}

// --system-out=F.json: the device's system JSON, with an algorithm per
// dimension of --network when given.
Status WriteSystemJson(const gen::GenOptions& o, int dims, std::ostream& out) {
  ORRERY_PARSE_OR_RETURN(const gen::DevicePreset d, gen::FindDevice(o.device));
  ORRERY_RETURN_IF_ERROR(WriteFileWhole(
      o.system_out, gen::DeviceSystemJson(d, {o.efficiency, o.device, dims, o.group_collective_model}), "--system-out"));
  out << "wrote " << o.system_out << " (" << o.device << " at " << o.efficiency << " of peak";
  if (dims == 0) out << "; no algorithm lists: ASTRA-sim needs them, give --network to write ring per dimension";
  out << ")\n";
  return Status::Ok();
}

// The workload generated, summarised (--summary, or when nothing is written) and written (--out).
Status Generate(const gen::GenOptions& o, const std::vector<Dim>& dims, std::ostream& out) {
  ORRERY_PARSE_OR_RETURN(const gen::ModelDesc model, gen::LoadModel(o.model));
  ORRERY_RETURN_IF_ERROR(gen::CheckFlagsForModel(o, model));
  gen::Workload w;
  if (model.kind == gen::ModelKind::kDlrm) {
    ORRERY_PARSE_OR_RETURN(auto d, gen::GenerateDlrmFromOptions(model, o));
    if (o.summary || o.out.empty()) out << gen::FormatDlrmSummary(model, d.strategy, d.workload, o.hbm_bytes);
    w = std::move(d.workload);
  } else {
    ORRERY_RETURN_IF_ERROR(gen::ValidateStrategy(model, o.strategy));
    if (!o.allow_over_capacity) ORRERY_RETURN_IF_ERROR(gen::CheckCapacity(model, o.strategy, o.hbm_bytes));
    ORRERY_PARSE_OR_RETURN(w, gen::GenerateDense(model, o.strategy));
    if (o.summary || o.out.empty()) out << gen::FormatSummary(model, o.strategy, w, o.hbm_bytes, dims);
  }
  if (o.out.empty()) return Status::Ok();
  w.comm_streams = o.comm_streams;
  w.pg_metadata = o.pg_metadata;
  ORRERY_RETURN_IF_ERROR(gen::WriteChakra(w, o.out));
  out << "wrote " << w.layout.npus() << " traces " << o.out << ".<rank>.et and " << o.out << ".comm_groups.json\n";
  return Status::Ok();
}

// An output naming one of the files the generator reads is refused before anything is written.
Status CheckOutputsAgainstInputs(const gen::GenOptions& o) {
  std::vector<NamedFile> outputs = {{"--system-out", o.system_out}};
  if (!o.out.empty()) {
    for (const std::string& trace : TraceFilesOf(o.out)) outputs.push_back({"--out", trace});
    outputs.push_back({"--out", o.out + ".comm_groups.json"});
  }
  return CheckOutputsAreNotInputs(outputs, {{"--model", o.model}, {"--device", o.device}, {"--network", o.network}});
}

Status RunGen(const std::vector<std::string>& args, std::ostream& out) {
  ORRERY_PARSE_OR_RETURN(gen::GenOptions o, gen::ParseGenArgs(args));
  ORRERY_RETURN_IF_ERROR(CheckOutputsAgainstInputs(o));
  std::vector<Dim> dims;
  ORRERY_RETURN_IF_ERROR(gen::ResolvePlacement(&o, &dims));
  if (o.help) {
    out << gen::GenUsage();
    return Status::Ok();
  }
  if (o.list_devices) {
    ListDevices(out);
    return Status::Ok();
  }
  if (!o.system_out.empty()) {
    ORRERY_RETURN_IF_ERROR(WriteSystemJson(o, static_cast<int>(dims.size()), out));
    if (o.model.empty()) return Status::Ok();
  }
  if (o.list_models) {
    ListModels(out);
    return Status::Ok();
  }
  return Generate(o, dims, out);
}

}  // namespace

int RunGenCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const Status st = RunGen(args, out);
  if (st.ok()) return 0;
  err << "orrery: " << st.message() << "\n";
  return st.exit_code();
}

}  // namespace orrery
