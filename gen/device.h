// Accelerator presets for the generator: the spec-sheet figures the system
// configuration needs (peak FLOP/s for the roofline, HBM bandwidth and
// capacity), and one efficiency knob, the achieved fraction of peak.
#pragma once
#include <string>
#include <vector>

#include "core/status.h"

namespace orrery::gen {

// What the kernel model (gen/kernels.h) needs of a device: its SMs and GEMM
// tile (wave and tile quantisation), and the efficiencies measured on
// kernels: a large GEMM's fraction of peak, a streaming kernel's fraction of
// HBM bandwidth, FlashAttention's fraction of peak. Sources: docs/generator.md.
// The standard (unfused) attention core's kernels at one sequence length:
// the scores and context batched GEMMs and the softmax together, as
// fractions of HBM bandwidth (their modelled bytes over the measured time).
struct AttentionPoint {
  double seq = 0;
  double forward = 0, backward = 0;
};

struct NormEfficiency {
  double forward = 0, backward = 0;
};

struct DeviceModel {
  int sms = 0;
  int tile_m = 256, tile_n = 128;
  double gemm_efficiency = 1;
  double memory_efficiency = 1;
  double flash_efficiency = 1;           // FlashAttention forward
  double flash_backward_efficiency = 1;  // and backward
  // The attention core by sequence length, ascending (gen/kernels.h,
  // AttentionEfficiency); empty: memory_efficiency.
  std::vector<AttentionPoint> attention;
  // The forward dropout of the attention probabilities; 0: memory_efficiency.
  double attention_dropout_efficiency = 0;
  // The layer norm's kernels (their modelled bytes over the measured time, as
  // fractions of HBM bandwidth), for each implementation a framework may call
  // (--layernorm): Megatron's persistent kernel (apex FastLayerNorm, 2021-10
  // on) and apex's fused LayerNorm before it. 0: memory_efficiency.
  NormEfficiency layernorm_persistent, layernorm_apex;
  // SMs an NCCL collective's kernels hold while it runs (one CTA per channel,
  // an SM each); the system JSON's collective-sm-fraction = this / sms.
  // 0: collectives take no compute.
  int collective_sms = 0;
  // A GEMM's cost that does not shrink with its depth K, in units of K (each
  // output tile's prologue and epilogue beside its K-long main loop): the
  // efficiency is scaled by K / (K + this), K held at 512 or more (gen/kernels.h,
  // GemmEfficiency). 0: none.
  double gemm_k_overhead = 0;
};

struct DevicePreset {
  std::string name;
  double peak_tflops = 0;  // dense BF16 tensor-core peak, TFLOP/s
  double hbm_gbps = 0;     // HBM bandwidth, GB/s (10^9 bytes/s)
  double hbm_gb = 0;       // HBM capacity, GB (10^9 bytes)
  std::string source;
  DeviceModel model;
};

const std::vector<DevicePreset>& DevicePresets();
Result<DevicePreset> FindDevice(const std::string& name);

// What `orrery gen --system-out` writes besides the device's figures.
struct SystemJsonOptions {
  double efficiency = 1.0;  // "peak-perf" = efficiency x peak
  std::string device;       // "device": the preset's name or the device YAML file as given ("": d's name)
  int dims = 0;             // the network's dimensions: one "ring" per dimension in each *-implementation (0: none)
  std::string group_collective_model = "astra-sim";  // "group-collective-model"
};

// An ASTRA-sim system JSON that times generated compute nodes on `d` with the
// roofline: "peak-perf" = efficiency x peak, "local-mem-bw" = HBM bandwidth,
// and "device" (the run's MFU takes the device's peak from it). It spells out
// every key ASTRA-sim reads with Orrery's defaults (scheduling, endpoint delay,
// chunks, collective optimization, and with `dims` the algorithm lists), so
// that both simulators run it alike, and Orrery's "group-collective-model".
std::string DeviceSystemJson(const DevicePreset& d, const SystemJsonOptions& o);

}  // namespace orrery::gen
