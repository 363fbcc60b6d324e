#include "network/notation.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <algorithm>
#include <cstdlib>

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
      while (i_ < t_.size() && std::isalnum(static_cast<unsigned char>(t_[i_]))) name += t_[i_++];
      if (name.empty()) return Error(start, "expected a building block name");
      static const std::vector<std::string> all = {"Ring", "RingUni", "Mesh", "FullyConnected", "Switch", "Torus2D",
                                                   "Mesh2D"};
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
      const bool two_d = name == "Torus2D" || name == "Mesh2D";
      if (!Expect('(')) return Error(i_, "expected '(' after '" + name + "'");
      long a = 0, b = 0;
      auto n1 = Integer(&a);
      if (!n1.ok()) return n1;
      if (two_d) {
        Skip();
        if (i_ >= t_.size() || (t_[i_] != 'x' && t_[i_] != 'X')) return Error(i_, "expected 'x' in AxB for " + name);
        ++i_;
        auto n2 = Integer(&b);
        if (!n2.ok()) return n2;
      }
      if (!Expect(',')) return Error(i_, "expected ',' after the NPU count");
      double bw = 0, lat = 0;
      auto s1 = Quantity(&bw, true);
      if (!s1.ok()) return s1;
      if (!Expect(',')) return Error(i_, "expected ',' after the bandwidth");
      auto s2 = Quantity(&lat, false);
      if (!s2.ok()) return s2;
      long links = 1;
      Skip();
      if (i_ < t_.size() && t_[i_] == ',') {
        ++i_;
        auto s3 = Integer(&links);
        if (!s3.ok()) return s3;
        if (links < 1) return Error(i_ - 1, "links per NPU must be at least 1");
      }
      if (!Expect(')')) return Error(i_, "expected ')' to close '" + name + "('");
      auto add = [&](Block blk, long n) -> Status {
        if (n < 2) return Error(start, "a dimension needs at least 2 NPUs, '" + name + "' has " + std::to_string(n));
        dims.push_back(Dim{blk, static_cast<int>(n), bw, lat, static_cast<int>(links)});
        return Status::Ok();
      };
      Block blk = Block::kRing;
      if (two_d) {
        blk = name == "Torus2D" ? Block::kRing : Block::kMesh;
        ORRERY_RETURN_IF_ERROR(add(blk, a));
        ORRERY_RETURN_IF_ERROR(add(blk, b));
      } else {
        BlockFromName(name, &blk);
        ORRERY_RETURN_IF_ERROR(add(blk, a));
      }
      Skip();
      if (i_ == t_.size()) break;
      if (t_[i_] != '_') return Error(i_, "expected '_' between dimensions or the end of the notation");
      ++i_;
    }
    return dims;
  }

 private:
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
  Status Integer(long* out) {
    Skip();
    const size_t start = i_;
    while (i_ < t_.size() && std::isdigit(static_cast<unsigned char>(t_[i_]))) ++i_;
    if (start == i_) return Error(start, "expected a whole number");
    if (i_ - start > 9) return Error(start, "number too large");
    *out = std::stol(t_.substr(start, i_ - start));
    return Status::Ok();
  }
  Status Quantity(double* out, bool bandwidth) {
    Skip();
    const size_t start = i_;
    while (i_ < t_.size() && (std::isdigit(static_cast<unsigned char>(t_[i_])) || t_[i_] == '.')) ++i_;
    if (start == i_) return Error(start, bandwidth ? "expected a bandwidth such as 100GB/s" : "expected a latency such as 500ns");
    const double v = std::strtod(t_.substr(start, i_ - start).c_str(), nullptr);
    const size_t ustart = i_;
    std::string unit;
    while (i_ < t_.size() && (std::isalpha(static_cast<unsigned char>(t_[i_])) || t_[i_] == '/')) unit += t_[i_++];
    if (bandwidth) {
      if (unit == "GB/s") *out = v;
      else if (unit == "Gb/s") *out = v / 8;
      else if (unit == "MB/s") *out = v / 1024;
      else if (unit == "TB/s") *out = v * 1024;
      else return Error(ustart, "unknown bandwidth unit '" + unit + "'; valid: GB/s, Gb/s, MB/s, TB/s");
      if (!(*out > 0)) return Error(start, "bandwidth must be positive");
    } else {
      if (unit == "ns") *out = v;
      else if (unit == "us") *out = v * 1e3;
      else if (unit == "ms") *out = v * 1e6;
      else return Error(ustart, "unknown latency unit '" + unit + "'; valid: ns, us, ms");
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
