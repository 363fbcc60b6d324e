#include "network/notation.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "core/limits.h"
#include "core/parse.h"
#include "core/units.h"

namespace orrery {

namespace {

class Parser {
 public:
  explicit Parser(const std::string& t) : t_(t) {}

  Result<std::vector<Dim>> Parse() {
    std::vector<Dim> dims;
    while (true) {
      Skip();
      const size_t start = i_;
      std::string name;
      ORRERY_RETURN_IF_ERROR(ReadBlockName(&name));
      Args args;
      ORRERY_RETURN_IF_ERROR(ReadArguments(name, &args));
      ORRERY_RETURN_IF_ERROR(AddDims(name, start, args, &dims));
      Skip();
      if (i_ == t_.size()) break;
      if (t_[i_] != '_') return Error(i_, "expected '_' between dimensions or the end of the notation");
      ++i_;
    }
    if (one_npu_at_ != std::string::npos && dims.size() > 1) {
      return Error(one_npu_at_,
                   "a dimension needs at least 2 NPUs (drop a dimension of 1; a network of one NPU is "
                   "a single dimension of 1)");
    }
    return dims;
  }

 private:
  // What a building block's parentheses hold: "(a, bw, lat[, links])" or, for a 2D one, "(axb, ...)".
  struct Args {
    int64_t a = 0, b = 0;
    double bw = 0, lat = 0;
    int64_t links = 1;
  };

  static bool TwoD(const std::string& name) { return name == "Torus2D" || name == "Mesh2D"; }

  // A known building block's name; an unknown one is an error naming the closest.
  Status ReadBlockName(std::string* out) {
    const size_t start = i_;
    std::string name;
    while (i_ < t_.size() && std::isalnum(static_cast<unsigned char>(t_[i_]))) name += t_[i_++];
    if (name.empty()) return Error(start, "expected a building block name");
    static const std::vector<std::string> all = {"Ring",   "RingUni", "Mesh",  "FullyConnected",
                                                 "Switch", "Torus2D", "Mesh2D"};
    bool known = false;
    for (const auto& a : all) known |= a == name;
    if (!known) {
      std::string near;
      size_t best = 4;
      for (const auto& a : all) {
        const size_t d = Distance(name, a);
        if (d < best) {
          best = d;
          near = a;
        }
      }
      return Error(start, "unknown building block '" + name + "'" +
                              (near.empty() ? "" : " (did you mean '" + near + "'?)") +
                              "; valid: Ring, RingUni, Mesh, FullyConnected, Switch, Torus2D, Mesh2D");
    }
    *out = name;
    return Status::Ok();
  }

  Status ReadArguments(const std::string& name, Args* args) {
    if (!Expect('(')) return Error(i_, "expected '(' after '" + name + "'");
    ORRERY_RETURN_IF_ERROR(Integer(&args->a, "NPU count", 2, kMaxNpus, true));
    if (TwoD(name)) {
      Skip();
      if (i_ >= t_.size() || (t_[i_] != 'x' && t_[i_] != 'X')) return Error(i_, "expected 'x' in AxB for " + name);
      ++i_;
      ORRERY_RETURN_IF_ERROR(Integer(&args->b, "NPU count", 2, kMaxNpus, true));
    }
    if (!Expect(',')) return Error(i_, "expected ',' after the NPU count");
    ORRERY_RETURN_IF_ERROR(Quantity(&args->bw, true));
    if (!Expect(',')) return Error(i_, "expected ',' after the bandwidth");
    ORRERY_RETURN_IF_ERROR(Quantity(&args->lat, false));
    Skip();
    if (i_ < t_.size() && t_[i_] == ',') {
      ++i_;
      ORRERY_RETURN_IF_ERROR(Integer(&args->links, "links per NPU", 1, kMaxLinksPerNpu));
    }
    if (!Expect(')')) return Error(i_, "expected ')' to close '" + name + "('");
    return Status::Ok();
  }

  // The block's dimension (two for a 2D one), each of at least 2 NPUs (1 in
  // a network of that one dimension: Parse checks), within the NPU limit.
  Status AddDims(const std::string& name, size_t start, const Args& args, std::vector<Dim>* dims) {
    auto add = [&](Block blk, int64_t n) -> Status {
      if (n < 2 && (n < 1 || TwoD(name) || !dims->empty())) {
        return Error(start, "a dimension needs at least 2 NPUs, '" + name + "' has " + std::to_string(n));
      }
      if (n == 1) one_npu_at_ = start;
      if (!MulWithin(total_, n, kMaxNpus, &total_)) {
        return Error(start, "the network would have more than " + std::to_string(kMaxNpus) +
                                " NPUs in total; allowed: a product of all dimensions' NPU counts <= " +
                                std::to_string(kMaxNpus));
      }
      dims->push_back(Dim{blk, static_cast<int>(n), args.bw, args.lat, static_cast<int>(args.links)});
      return Status::Ok();
    };
    Block blk = Block::kRing;
    if (TwoD(name)) {
      blk = name == "Torus2D" ? Block::kRing : Block::kMesh;
      ORRERY_RETURN_IF_ERROR(add(blk, args.a));
      ORRERY_RETURN_IF_ERROR(add(blk, args.b));
    } else {
      BlockFromName(name, &blk);
      ORRERY_RETURN_IF_ERROR(add(blk, args.a));
    }
    return Status::Ok();
  }

  void Skip() {
    while (i_ < t_.size() && std::isspace(static_cast<unsigned char>(t_[i_]))) ++i_;
  }
  bool Expect(char c) {
    Skip();
    if (i_ < t_.size() && t_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  // A whole number in [min, max]; the checked routine's message, with a caret.
  // With `caller_checks_min`, a number below `min` is returned for the caller to explain.
  Status Integer(int64_t* out, const char* what, int64_t min, int64_t max, bool caller_checks_min = false) {
    Skip();
    const size_t start = i_;
    while (i_ < t_.size() && std::isdigit(static_cast<unsigned char>(t_[i_]))) ++i_;
    if (start == i_) return Error(start, std::string("expected a whole number (") + what + ")");
    auto v = ParseInt(std::string_view(t_).substr(start, i_ - start), Where{"", 0, what}, min, max);
    if (!v.ok() && caller_checks_min) {
      auto below = ParseInt(std::string_view(t_).substr(start, i_ - start), Where{"", 0, what}, 0, min - 1);
      if (below.ok()) v = below;
    }
    if (!v.ok()) return Error(start, v.status().message());
    *out = v.value();
    return Status::Ok();
  }
  Status Quantity(double* out, bool bandwidth) {
    Skip();
    const size_t start = i_;
    auto digit = [&](size_t k) { return k < t_.size() && std::isdigit(static_cast<unsigned char>(t_[k])); };
    while (digit(i_) || (i_ < t_.size() && t_[i_] == '.')) ++i_;
    // An exponent ("1e3GB/s"): 'e' followed by a digit, or by a sign and a digit.
    if (i_ > start && i_ < t_.size() && (t_[i_] == 'e' || t_[i_] == 'E') &&
        (digit(i_ + 1) || (i_ + 1 < t_.size() && (t_[i_ + 1] == '+' || t_[i_ + 1] == '-') && digit(i_ + 2)))) {
      i_ += 2;
      while (digit(i_)) ++i_;
    }
    if (start == i_)
      return Error(start, bandwidth ? "expected a bandwidth such as 100GB/s" : "expected a latency such as 500ns");
    const char* what = bandwidth ? "bandwidth" : "latency";
    auto parsed = ParseDouble(std::string_view(t_).substr(start, i_ - start), Where{"", 0, what},
                              DoubleRange{0, std::numeric_limits<double>::max(), false});
    if (!parsed.ok()) return Error(start, parsed.status().message());
    const double v = parsed.value();
    const size_t ustart = i_;
    std::string unit;
    while (i_ < t_.size() && (std::isalpha(static_cast<unsigned char>(t_[i_])) || t_[i_] == '/')) unit += t_[i_++];
    if (bandwidth) {
      if (unit == "GB/s") *out = v;
      else if (unit == "Gb/s") *out = v / kBitsPerByte;
      else if (unit == "MB/s") *out = v / kMiBPerGiB;
      else if (unit == "TB/s") *out = v * kGiBPerTiB;
      else return Error(ustart, "unknown bandwidth unit '" + unit + "'; valid: GB/s, Gb/s, MB/s, TB/s");
      // The range applies after the unit: 1e300TB/s overflows to infinity and is refused here.
      auto ok = CheckDouble(*out, Where{"", 0, "bandwidth in GB/s"}, kBandwidthGBps);
      if (!ok.ok()) return Error(start, ok.message());
    } else {
      if (unit == "ns") *out = v;
      else if (unit == "us") *out = UsToNs(v);
      else if (unit == "ms") *out = MsToNs(v);
      else return Error(ustart, "unknown latency unit '" + unit + "'; valid: ns, us, ms");
      auto ok = CheckDouble(*out, Where{"", 0, "latency in ns"}, kLatencyNs);
      if (!ok.ok()) return Error(start, ok.message());
    }
    return Status::Ok();
  }
  Status Error(size_t at, const std::string& what) const {
    return Status::Invalid("topology notation, column " + std::to_string(at + 1) + ": " + what + "\n  " + t_ + "\n  " +
                           std::string(at, ' ') + "^");
  }
  static size_t Distance(const std::string& a, const std::string& b) {
    std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
      cur[0] = i;
      for (size_t j = 1; j <= b.size(); ++j) {
        cur[j] = std::min<size_t>({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      }
      std::swap(prev, cur);
    }
    return prev[b.size()];
  }
  const std::string& t_;
  size_t i_ = 0;
  int64_t total_ = 1;  // NPUs so far, at most kMaxNpus
  size_t one_npu_at_ = std::string::npos;  // where a dimension of 1 NPU starts (allowed only alone)
};

std::string Num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.10g", v);
  return buf;
}

}  // namespace

Result<std::vector<Dim>> ParseTopologyNotation(const std::string& text) { return Parser(text).Parse(); }

std::string FormatTopologyNotation(const std::vector<Dim>& dims) {
  std::string out;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) out += "_";
    out += BlockName(dims[i].block);
    out += '(';
    out += std::to_string(dims[i].npus);
    out += ',';
    out += Num(dims[i].bandwidth_gbps);
    out += "GB/s,";
    out += Num(dims[i].latency_ns);
    out += "ns";
    if (dims[i].links_per_npu != 1) {
      out += ',';
      out += std::to_string(dims[i].links_per_npu);
    }
    out += ')';
  }
  return out;
}

}  // namespace orrery
