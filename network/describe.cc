#include "network/describe.h"

#include <cstdio>

#include "core/units.h"
#include "network/notation.h"

namespace orrery {

DimFacts FactsOf(const Dim& d, int total_npus) {
  DimFacts f;
  const int p = d.npus;
  const uint64_t L = static_cast<uint64_t>(d.links_per_npu);
  f.groups = total_npus / p;
  uint64_t per_group = 0;
  const double bw = d.bandwidth_gbps * d.links_per_npu;
  switch (d.block) {
    case Block::kRing:
      per_group = (p == 2 ? 1 : p) * L;
      f.ports_per_npu = (p == 2 ? 1 : 2) * d.links_per_npu;
      f.bisection_gbps = (p == 2 ? 1 : 2) * bw;
      break;
    case Block::kRingUni:
      per_group = p * L;
      f.ports_per_npu = 2 * d.links_per_npu;
      f.bisection_gbps = bw;
      break;
    case Block::kMesh:
      per_group = (p - 1) * L;
      f.ports_per_npu = 2 * d.links_per_npu;
      f.bisection_gbps = bw;
      break;
    case Block::kFullyConnected:
      per_group = static_cast<uint64_t>(p) * (p - 1) / 2 * L;
      f.ports_per_npu = (p - 1) * d.links_per_npu;
      f.bisection_gbps = static_cast<double>(p / 2) * (p - p / 2) * bw;
      break;
    case Block::kSwitch:
      per_group = p * L;
      f.switches = static_cast<uint64_t>(f.groups);
      f.ports_per_npu = d.links_per_npu;
      f.bisection_gbps = static_cast<double>(p / 2) * bw;
      break;
  }
  f.links = per_group * static_cast<uint64_t>(f.groups);
  f.injection_gbps = bw;
  return f;
}

double IdealAllReduceSeconds(const std::vector<Dim>& dims, double bytes) {
  double t = 0;
  double s = bytes;
  for (size_t i = 0; i < dims.size(); ++i) {
    const double p = dims[i].npus;
    const double bps = GiBpsToBytesPerSecond(dims[i].bandwidth_gbps * dims[i].links_per_npu);
    if (i + 1 < dims.size()) {
      t += 2 * (p - 1) / p * s / bps;  // reduce-scatter now, all-gather on the way back
      s /= p;
    } else {
      t += 2 * (p - 1) / p * s / bps;
    }
  }
  return t;
}

std::string DescribeTopology(const std::vector<Dim>& dims, uint64_t allreduce_bytes) {
  int n = 1;
  for (const auto& d : dims) n *= d.npus;
  std::string out;
  char line[512];
  out += "topology: " + FormatTopologyNotation(dims) + "\n";
  std::snprintf(line, sizeof(line), "NPUs: %d in %zu dimension(s)\n\n", n, dims.size());
  out += line;
  out +=
      "  dim  block           npus   GB/s/link  links  latency_ns   groups      links  switches  ports/NPU  "
      "bisection_GB/s\n";
  uint64_t links = 0, switches = 0, ports = 0;
  for (size_t i = 0; i < dims.size(); ++i) {
    const Dim& d = dims[i];
    const DimFacts f = FactsOf(d, n);
    std::snprintf(line, sizeof(line), "  %-4zu %-15s %5d %11.6g %6d %11.6g %8d %10llu %9llu %10d %15.6g\n", i,
                  BlockName(d.block), d.npus, d.bandwidth_gbps, d.links_per_npu, d.latency_ns, f.groups,
                  static_cast<unsigned long long>(f.links), static_cast<unsigned long long>(f.switches),
                  f.ports_per_npu, f.bisection_gbps);
    out += line;
    links += f.links;
    switches += f.switches;
    ports += static_cast<uint64_t>(f.ports_per_npu) * n;
  }
  std::snprintf(line, sizeof(line), "\ncost: %llu links, %llu switches, %llu NPU ports\n",
                static_cast<unsigned long long>(links), static_cast<unsigned long long>(switches),
                static_cast<unsigned long long>(ports));
  out += line;
  const double secs = IdealAllReduceSeconds(dims, static_cast<double>(allreduce_bytes));
  const double algbw = BytesPerSecondToGiBps(static_cast<double>(allreduce_bytes) / secs);
  const double busbw = algbw * 2.0 * (n - 1) / n;
  std::snprintf(line, sizeof(line),
                "ideal hierarchical all-reduce of %llu bytes: %.3f us, algorithm bandwidth %.2f GB/s, bus bandwidth "
                "%.2f GB/s (bandwidth terms only)\n",
                static_cast<unsigned long long>(allreduce_bytes), SecondsToUs(secs), algbw, busbw);
  out += line;
  return out;
}

static std::string Num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.10g", v);
  return buf;
}

bool WriteAstraSimYaml(const std::vector<Dim>& dims, std::string* out) {
  std::string topo, npus, bw, lat;
  for (size_t i = 0; i < dims.size(); ++i) {
    const Dim& d = dims[i];
    if (d.links_per_npu != 1) return false;
    if (d.block != Block::kRing && d.block != Block::kSwitch && d.block != Block::kFullyConnected) return false;
    const char* sep = i ? ", " : "";
    for (std::string* list : {&topo, &npus, &bw, &lat}) *list += sep;
    topo += BlockName(d.block);
    npus += std::to_string(d.npus);
    bw += Num(d.bandwidth_gbps);
    lat += Num(d.latency_ns);
  }
  *out = "topology: [ " + topo + " ]\nnpus_count: [ " + npus + " ]\nbandwidth: [ " + bw + " ]  # GB/s\nlatency: [ " +
         lat + " ]  # ns\n";
  return true;
}

std::string WriteOrreryYaml(const std::vector<Dim>& dims) {
  std::string out = "# Orrery network: " + FormatTopologyNotation(dims) + "\ndims:\n";
  for (const Dim& d : dims) {
    out += "  - block: " + std::string(BlockName(d.block)) + "\n    npus: " + std::to_string(d.npus) +
           "\n    bandwidth_gbps: " + Num(d.bandwidth_gbps) + "\n    latency_ns: " + Num(d.latency_ns) +
           "\n    links_per_npu: " + std::to_string(d.links_per_npu) + "\n";
  }
  return out;
}

}  // namespace orrery
