// Accelerator presets for the generator: the spec-sheet figures the system
// configuration needs (peak FLOP/s for the roofline, HBM bandwidth and
// capacity), and one efficiency knob, the achieved fraction of peak.
#pragma once
#include <string>
#include <vector>

#include "core/status.h"

namespace orrery::gen {

struct DevicePreset {
  std::string name;
  double peak_tflops = 0;  // dense BF16 tensor-core peak, TFLOP/s
  double hbm_gbps = 0;     // HBM bandwidth, GB/s (10^9 bytes/s)
  double hbm_gb = 0;       // HBM capacity, GB (10^9 bytes)
  std::string source;
};

const std::vector<DevicePreset>& DevicePresets();
Result<DevicePreset> FindDevice(const std::string& name);

// An ASTRA-sim system JSON that times generated compute nodes on `d` with the
// roofline: "peak-perf" = efficiency x peak, "local-mem-bw" = HBM bandwidth,
// and "device" = its name (the run's MFU takes the device's peak from it).
std::string DeviceSystemJson(const DevicePreset& d, double efficiency);

}  // namespace orrery::gen
