// `orrery report compare A.json B.json`: two run reports (orrery run
// --report-format=json) side by side by category: the finished time, the
// slowest rank's and the mean rank's compute / exposed communication / memory
// stall / waiting on peers / idle, the critical path's categories (when both reports have one),
// per-dimension bytes, busy time, utilisation and messages, and the message,
// collective and memory counts; columns a, b, b-a, b/a in a fixed row order,
// and the category that changed most. Every input is untrusted: a file that is
// not a report, a missing field or a wrong type is a Status naming the file,
// the field, the value and what was expected.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "core/status.h"

namespace orrery {

// What `compare` reads of one report (doubles: sums and means of 64-bit fields).
struct ReportSummary {
  std::string file, backend, hash;
  bool has_hash = false;  // config.hash is present
  double npus = 0;
  double finished = 0, slowest_rank = 0;  // the largest finished_ns (the lowest rank among equals)
  // compute, exposed comm, memory stall, peer wait, idle: slowest rank, mean over ranks
  double slow[5] = {}, mean[5] = {};
  bool has_path = false;
  std::map<std::string, double> path;  // critical-path category -> ns
  struct Dim {
    std::string block;
    double bytes = 0, busy = 0, utilisation = 0, messages = 0;
  };
  std::vector<Dim> dims;
  // Collectives over all ranks (a symmetric run's list, which is rank 0's, times the ranks).
  double messages = 0, collectives = 0, collective_ns = 0, mem_accesses = 0, mem_bytes = 0, mem_wait = 0;
};

// Reads and checks one report (report/report_reader.cc).
Result<ReportSummary> SummariseReport(const std::string& path);

struct CompareOptions {
  std::string a, b;             // the two reports
  std::string format = "text";  // text | json | csv
};

// The comparison, formatted; the same inputs give byte-identical output.
Result<std::string> CompareReports(const CompareOptions& options);

}  // namespace orrery
