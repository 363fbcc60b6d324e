#include "gen/device.h"

#include <nlohmann/json.hpp>

#include "core/parse.h"
#include "extern/json_util.h"

namespace orrery::gen {

const std::vector<DevicePreset>& DevicePresets() {
  static const std::vector<DevicePreset> presets = {
      // Kernel model: SMs from the architecture whitepapers; efficiencies in docs/generator.md, "Compute model".
      {"a100", 312, 2039, 80, "NVIDIA A100 80GB SXM datasheet: BF16 tensor 312 TFLOPS dense, HBM2e 2,039 GB/s, 80 GB",
       DeviceModel{108, 256, 128, 0.80, 0.85, 0.60}},
      {"h100", 989.5, 3350, 80,
       "NVIDIA H100 SXM5 datasheet: BF16 tensor 1,979 TFLOPS with 2:4 sparsity, 989.5 dense, HBM3 3.35 TB/s, 80 GB",
       DeviceModel{132, 256, 128, 0.75, 0.85, 0.50}},
  };
  return presets;
}

Result<DevicePreset> FindDevice(const std::string& name) {
  std::vector<std::string> names;
  for (const DevicePreset& d : DevicePresets()) {
    if (d.name == name) return d;
    names.push_back(d.name);
  }
  const std::string close = ClosestMatch(name, names);
  return ValueError(Where{"", 0, "--device"}, name,
                    "unknown device" + (close.empty() ? std::string() : " (did you mean '" + close + "'?)"),
                    JoinStrings(names, ", "));
}

std::string DeviceSystemJson(const DevicePreset& d, double efficiency) {
  nlohmann::ordered_json j;
  j["roofline-enabled"] = 1;
  j["peak-perf"] = d.peak_tflops * efficiency;
  j["local-mem-bw"] = d.hbm_gbps;
  j["preferred-dataset-splits"] = 4;
  return j.dump(2) + "\n";
}

}  // namespace orrery::gen
