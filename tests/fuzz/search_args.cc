// Fuzz target: `orrery search`'s flags as the command line gives them
// (apps/search_command.cc: CLI11, the checked numbers, the model, network,
// system and memory files) and its pre-filter and symbolic ranking, with
// --time-limit=0 appended so no candidate is simulated. The fuzzed bytes are
// a bundle (fuzz_util.h): the head holds one argument per line ("search" is
// put first), then "@@ NAME" files, written to a fresh folder that "@/" in an
// argument names. The fuzzer's own budget: --npus above 16 is not tried (the
// enumeration grows with the NPU count's divisors), nor --csv (it writes),
// --plugin (it loads code), --time-limit, --jobs, or paths under /dev, /proc
// and /sys.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "apps/cli.h"
#include "apps/commands.h"
#include "core/parse.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using namespace orrery;

// The arguments, one per line of `head`, or false when one is out of the fuzzer's budget.
bool Arguments(const std::string& head, const std::string& dir, std::vector<std::string>* args) {
  args->push_back("search");
  for (size_t pos = 0; pos < head.size();) {
    size_t nl = head.find('\n', pos);
    if (nl == std::string::npos) nl = head.size();
    std::string a = head.substr(pos, nl - pos);
    pos = nl + 1;
    for (size_t at = a.find("@/"); at != std::string::npos; at = a.find("@/", at + dir.size() + 1)) {
      a.replace(at, 2, dir + "/");
    }
    for (const char* banned : {"--csv", "--plugin", "--time-limit", "--jobs", "/dev/", "/proc/", "/sys/"}) {
      if (a.find(banned) != std::string::npos) return false;
    }
    for (const std::string end : {"/dev", "/proc", "/sys"}) {
      if (a.size() >= end.size() && a.compare(a.size() - end.size(), end.size(), end) == 0) return false;
    }
    args->push_back(a);
  }
  for (size_t i = 0; i < args->size(); ++i) {
    const std::string& a = (*args)[i];
    std::string npus;
    if (a.rfind("--npus=", 0) == 0) npus = a.substr(7);
    if (a == "--npus" && i + 1 < args->size()) npus = (*args)[i + 1];
    if (npus.empty()) continue;
    auto n = ParseInt(npus, Where{"", 0, "--npus"}, 1, 16);
    if (!n.ok() && ParseInt(npus, Where{"", 0, "--npus"}, INT64_MIN, INT64_MAX).ok()) return false;
  }
  args->push_back("--time-limit=0");
  args->push_back("--jobs=1");
  return true;
}

// Parses and runs `orrery search` in-process as main.cc does; stdout (the table) is dropped.
void RunSearch(const std::vector<std::string>& args) {
  CLI::App app("orrery (fuzz)", "orrery");
  std::string verbose = "0";
  cli::Commands commands(&app, &verbose);
  cli::AddSearchCommand(&commands, &app);
  commands.Finish();
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them last first
  try {
    app.parse(reversed);
  } catch (const CLI::Error& e) {
    fuzz::Note("parse", Status::Invalid(e.what()));
    return;
  }
  auto action = commands.Resolve();
  fuzz::Note("resolve", action.status());
  if (!action.ok()) return;
  std::fflush(stdout);
  const int saved = dup(STDOUT_FILENO);
  std::FILE* null = std::fopen("/dev/null", "w");
  if (saved < 0 || null == nullptr) std::abort();
  dup2(fileno(null), STDOUT_FILENO);
  const int code = action.value()();
  std::fflush(stdout);
  dup2(saved, STDOUT_FILENO);
  close(saved);
  std::fclose(null);
  fuzz::Note("exit " + std::to_string(code), Status::Ok());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string head;
  const fuzz::Bundle files = fuzz::SplitBundle(data, size, &head);
  const std::string dir = fuzz::FreshDir("search");
  fuzz::WriteBundle(files, dir);
  std::vector<std::string> args;
  if (!Arguments(head, dir, &args)) {
    fuzz::Note("skipped (out of the fuzzer's budget)", Status::Ok());
    return 0;
  }
  RunSearch(args);
  return 0;
}
