// Units, and every conversion between them, in one place. A raw number names
// its unit (`latency_ns`, `bandwidth_gbps`); where it changes unit, it goes
// through a constant or a function here.
//
// Each function is exactly the floating-point operations of the inline
// arithmetic it replaced, in the same order, so results are bit-identical:
// `x / 1e9` and `x * 1e-9` round differently, so NsToSeconds divides and
// kSecondsPerNs is there for the places that multiply. Every constant is exact
// in a double (powers of two, and powers of ten up to 1e22).
//
// C++17: the ns-3 plugin, built as C++17, includes it.
#pragma once
#include <cstdint>

namespace orrery {

// Sizes. Model sizes and HBM capacities are decimal (GB); ASTRA-sim's network
// bandwidths, trace sizes and buckets are binary (GiB, MiB).
inline constexpr uint64_t kBytesPerMiB = uint64_t{1} << 20;
inline constexpr uint64_t kBytesPerGiB = uint64_t{1} << 30;
inline constexpr uint64_t kBytesPerGB = 1000000000;
inline constexpr uint64_t kMiBPerGiB = 1024;
inline constexpr uint64_t kGiBPerTiB = 1024;
inline constexpr uint64_t kBitsPerByte = 8;

// Time. One tick is one nanosecond (core/tick.h).
inline constexpr uint64_t kNsPerUs = 1000;
inline constexpr uint64_t kNsPerMs = 1000000;
inline constexpr uint64_t kNsPerSecond = 1000000000;
inline constexpr uint64_t kUsPerSecond = 1000000;
inline constexpr uint64_t kMsPerSecond = 1000;
inline constexpr double kSecondsPerNs = 1e-9;  // `x * kSecondsPerNs` rounds unlike NsToSeconds(x)

// Compute.
inline constexpr double kFlopsPerTflop = 1e12;

// Bandwidth. 1 GB/s in ASTRA-sim's network YAML means 2^30 bytes per second;
// a rate in bytes per ns is one in (decimal) GB/s.
constexpr double GiBpsToBytesPerNs(double gbps) {
  return gbps * static_cast<double>(kBytesPerGiB) / static_cast<double>(kNsPerSecond);
}
constexpr double GiBpsToBytesPerSecond(double gbps) { return gbps * static_cast<double>(kBytesPerGiB); }
constexpr double BytesPerSecondToGiBps(double bytes_per_s) { return bytes_per_s / static_cast<double>(kBytesPerGiB); }
constexpr double BytesPerNsToBytesPerSecond(double bytes_per_ns) {
  return bytes_per_ns * static_cast<double>(kNsPerSecond);
}
constexpr double TflopsToFlopsPerSecond(double tflops) { return tflops * kFlopsPerTflop; }

// Sizes as doubles.
constexpr double BytesToGiB(double bytes) { return bytes / static_cast<double>(kBytesPerGiB); }
constexpr double BytesToGB(double bytes) { return bytes / static_cast<double>(kBytesPerGB); }
constexpr double GBToBytes(double gb) { return gb * static_cast<double>(kBytesPerGB); }
constexpr double MiBToBytes(double mib) { return mib * static_cast<double>(kBytesPerMiB); }

// Times as doubles.
constexpr double NsToUs(double ns) { return ns / static_cast<double>(kNsPerUs); }
constexpr double NsToMs(double ns) { return ns / static_cast<double>(kNsPerMs); }
constexpr double NsToSeconds(double ns) { return ns / static_cast<double>(kNsPerSecond); }
constexpr double UsToNs(double us) { return us * static_cast<double>(kNsPerUs); }
constexpr double MsToNs(double ms) { return ms * static_cast<double>(kNsPerMs); }
constexpr double SecondsToNs(double s) { return s * static_cast<double>(kNsPerSecond); }
constexpr double SecondsToUs(double s) { return s * static_cast<double>(kUsPerSecond); }
constexpr double SecondsToMs(double s) { return s * static_cast<double>(kMsPerSecond); }

// Counts for people: "175.0 B parameters", "12.5 M events/s".
constexpr double Millions(double x) { return x / 1e6; }
constexpr double Billions(double x) { return x / 1e9; }

}  // namespace orrery
