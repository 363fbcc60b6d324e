#include "gen/device.h"

#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

#include <map>

#include "core/parse.h"
#include "extern/json_util.h"
#include "extern/yaml_map.h"
#include "gen/kernels.h"

namespace orrery::gen {

const std::vector<DevicePreset>& DevicePresets() {
  static const std::vector<DevicePreset> presets = {
      // Kernel model: SMs from the architecture whitepapers; efficiencies in docs/generator.md, "Compute model".
      {"a100", 312, 2039, 80, "NVIDIA A100 80GB SXM datasheet: BF16 tensor 312 TFLOPS dense, HBM2e 2,039 GB/s, 80 GB",
       DeviceModel{108,
                   64,
                   64,
                   0.822,
                   0.88,
                   0.73,
                   0.63,
                   {{512, 0.462, 0.432}, {1024, 0.552, 0.500}, {2048, 0.666, 0.565}},
                   0.757,
                   {0.809, 0.748},
                   {0.576, 0.368},
                   16,
                   110}},
      {"h100", 989.5, 3350, 80,
       "NVIDIA H100 SXM5 datasheet: BF16 tensor 1,979 TFLOPS with 2:4 sparsity, 989.5 dense, HBM3 3.35 TB/s, 80 GB",
       DeviceModel{132, 256, 128, 0.80, 0.88, 0.50, 0.45, {}, 0, {}, {}, 0}},
  };
  return presets;
}

namespace {

// The keys of a device file other than `base` into `d`; each once, each a checked number.
Status ReadDeviceKeys(const YAML::Node& root, const std::string& path, DevicePreset* out) {
  DevicePreset& d = *out;
  struct Key {
    double* value;
    DoubleRange range;
  };
  double sms = d.model.sms, tile_m = d.model.tile_m, tile_n = d.model.tile_n;
  double collective_sms = d.model.collective_sms;
  // A file's attention efficiencies hold at every sequence length; one it leaves out is the
  // base's at 2,048 tokens (the base's memory efficiency when it has no attention points).
  const double unset = -1;
  double attention_forward = unset, attention_backward = unset;
  const std::map<std::string, Key> keys = {
      {"peak_tflops", {&d.peak_tflops, DoubleRange{0.001, 1e9, false}}},
      {"hbm_gbps", {&d.hbm_gbps, DoubleRange{0.001, 1e9, false}}},
      {"hbm_gb", {&d.hbm_gb, DoubleRange{0.001, 1e9, false}}},
      {"sms", {&sms, DoubleRange{1, 1e6, false}}},
      {"tile_m", {&tile_m, DoubleRange{1, 65536, false}}},
      {"tile_n", {&tile_n, DoubleRange{1, 65536, false}}},
      {"collective_sms", {&collective_sms, DoubleRange{0, 1e6, false}}},
      {"gemm_efficiency", {&d.model.gemm_efficiency, DoubleRange{0, 1, true}}},
      {"gemm_k_overhead", {&d.model.gemm_k_overhead, DoubleRange{0, 1e6, false}}},
      {"memory_efficiency", {&d.model.memory_efficiency, DoubleRange{0, 1, true}}},
      {"flash_efficiency", {&d.model.flash_efficiency, DoubleRange{0, 1, true}}},
      {"flash_backward_efficiency", {&d.model.flash_backward_efficiency, DoubleRange{0, 1, true}}},
      {"attention_forward_efficiency", {&attention_forward, DoubleRange{0, 1, true}}},
      {"attention_backward_efficiency", {&attention_backward, DoubleRange{0, 1, true}}},
      {"attention_dropout_efficiency", {&d.model.attention_dropout_efficiency, DoubleRange{0, 1, true}}},
      {"layernorm_persistent_forward_efficiency", {&d.model.layernorm_persistent.forward, DoubleRange{0, 1, true}}},
      {"layernorm_persistent_backward_efficiency", {&d.model.layernorm_persistent.backward, DoubleRange{0, 1, true}}},
      {"layernorm_apex_forward_efficiency", {&d.model.layernorm_apex.forward, DoubleRange{0, 1, true}}},
      {"layernorm_apex_backward_efficiency", {&d.model.layernorm_apex.backward, DoubleRange{0, 1, true}}},
  };
  std::vector<std::string> valid = {"base", "name"};
  for (const auto& [k, v] : keys) valid.push_back(k);
  ORRERY_PARSE_OR_RETURN(const std::vector<YamlEntry> entries, MappingEntries(root, path, ""));
  for (const YamlEntry& e : entries) {
    const std::string& key = e.key;
    const Where where{path, e.line, key};
    if (!e.value.IsScalar()) return ValueError(where, "(not a scalar)", "wrong type", "a single value");
    if (key == "base") continue;
    if (key == "name") {
      d.name = e.value.Scalar();
      continue;
    }
    const auto k = keys.find(key);
    if (k == keys.end()) return Status::Invalid(where.Describe() + ": " + UnknownKeyMessage(key, valid));
    ORRERY_PARSE_OR_RETURN(*k->second.value, ParseDouble(e.value.Scalar(), where, k->second.range));
    if (key == "sms" || key == "tile_m" || key == "tile_n" || key == "collective_sms") {
      if (*k->second.value != static_cast<double>(static_cast<int>(*k->second.value))) {
        return ValueError(where, e.value.Scalar(), "not an integer", DescribeRange(k->second.range) + ", whole");
      }
    }
  }
  if (attention_forward != unset || attention_backward != unset) {
    const AttentionPoint p{2048, attention_forward != unset ? attention_forward : AttentionEfficiency(d.model, 2048, false),
                           attention_backward != unset ? attention_backward : AttentionEfficiency(d.model, 2048, true)};
    d.model.attention = {p};
  }
  if (collective_sms > 0 && collective_sms >= sms) {
    return Status::Invalid(path + ": collective_sms = " + std::to_string(static_cast<int>(collective_sms)) +
                           ": not below sms (" + std::to_string(static_cast<int>(sms)) +
                           "); allowed: 0 .. sms - 1 (the SMs an NCCL collective holds)");
  }
  d.model.collective_sms = static_cast<int>(collective_sms);
  d.model.sms = static_cast<int>(sms);
  d.model.tile_m = static_cast<int>(tile_m);
  d.model.tile_n = static_cast<int>(tile_n);
  return Status::Ok();
}

// A device file (docs/generator.md, "Compute model"): `base` names a preset
// whose values are the defaults; every other key sets one number.
Result<DevicePreset> ReadDeviceYaml(const std::string& path) {
  ORRERY_PARSE_OR_RETURN(const YAML::Node root,
                         LoadYamlMapping(path, {"cannot read the device file (not a preset either; see --list-devices)",
                                                "YAML syntax error",
                                                "a device file is a mapping of keys, e.g. 'base: a100'"}));
  DevicePreset d;
  d.name = path;
  d.source = "device file " + path;
  if (const YAML::Node base = root["base"]) {
    const Where where{path, base.Mark().line + 1, "base"};
    if (!base.IsScalar()) return ValueError(where, "(not a scalar)", "wrong type", "a preset name");
    std::vector<std::string> names;
    bool found = false;
    for (const DevicePreset& p : DevicePresets()) {
      names.push_back(p.name);
      if (p.name == base.Scalar()) {
        d = p;
        found = true;
      }
    }
    if (!found) return ValueError(where, base.Scalar(), "unknown device preset", JoinStrings(names, ", "));
    d.name = path;
    d.source = "device file " + path + " on " + base.Scalar();
  }
  ORRERY_RETURN_IF_ERROR(ReadDeviceKeys(root, path, &d));
  for (const char* req : {"peak_tflops", "hbm_gbps", "hbm_gb", "sms"}) {
    if (!root["base"] && !root[req]) {
      return Status::Invalid(path + ": missing required key '" + req +
                             "' (or give 'base: a100' to start from a preset)");
    }
  }
  return d;
}

}  // namespace

Result<DevicePreset> FindDevice(const std::string& name) {
  std::vector<std::string> names;
  for (const DevicePreset& d : DevicePresets()) {
    if (d.name == name) return d;
    names.push_back(d.name);
  }
  if (name.find('/') != std::string::npos || name.find(".y") != std::string::npos) return ReadDeviceYaml(name);
  const std::string close = ClosestMatch(name, names);
  return ValueError(Where{"", 0, "--device"}, name,
                    "unknown device" + (close.empty() ? std::string() : " (did you mean '" + close + "'?)"),
                    JoinStrings(names, ", ") + " or a device YAML file");
}

std::string DeviceSystemJson(const DevicePreset& d, const SystemJsonOptions& o) {
  nlohmann::ordered_json j;
  j["roofline-enabled"] = 1;
  j["peak-perf"] = d.peak_tflops * o.efficiency;
  j["local-mem-bw"] = d.hbm_gbps;
  // The SMs an NCCL collective holds, as a share of the device's (gen/device.h):
  // part of Orrery's NCCL-like model, with localBWAware below; ASTRA-sim's has
  // no such cost (and the search's symbolic cost does not model it).
  if (o.group_collective_model == "hierarchical" && d.model.collective_sms > 0 && d.model.sms > 0) {
    j["collective-sm-fraction"] = static_cast<double>(d.model.collective_sms) / d.model.sms;
  }
  j["preferred-dataset-splits"] = 4;
  // The report's model FLOPs utilisation divides by this device's peak: a YAML
  // device by its file (its name may be its base preset's, with other figures).
  j["device"] = o.device.empty() ? d.name : o.device;
  // Orrery's defaults, written out: ASTRA-sim has no usable default for some
  // (no algorithm list: no rank finishes; no splits: it divides by zero).
  j["scheduling-policy"] = "LIFO";
  j["endpoint-delay"] = 10;
  j["active-chunks-per-dimension"] = 1;
  // The hierarchical model runs a group's collectives as NCCL's rings move
  // their bytes: an all-reduce over several dimensions reduce-scatters inside
  // the lower ones and all-reduces only its share across the upper ones
  // (localBWAware). ASTRA-sim's model keeps ASTRA-sim's default, baseline.
  j["collective-optimization"] = o.group_collective_model == "hierarchical" ? "localBWAware" : "baseline";
  if (o.dims > 0) {
    const std::vector<std::string> ring(static_cast<size_t>(o.dims), "ring");
    for (const char* key : {"all-reduce-implementation", "all-gather-implementation", "reduce-scatter-implementation",
                            "all-to-all-implementation"}) {
      j[key] = ring;
    }
  }
  j["group-collective-model"] = o.group_collective_model;
  return j.dump(2) + "\n";
}

}  // namespace orrery::gen
