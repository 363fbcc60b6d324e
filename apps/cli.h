// Command-line plumbing shared by the `orrery` subcommands (CLI11): each leaf
// command owns its flags; after parsing, Resolve() turns whatever CLI11 left
// over (unknown flags, another command's flags, stray arguments) into one
// `orrery: ...` error with a did-you-mean, and returns the named command's action.
#pragma once
#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/parse.h"
#include "core/status.h"

namespace orrery::cli {

// Runs after the whole command line parsed; returns the process exit code.
using Action = std::function<int()>;

class Commands {
 public:
  // `verbose` receives -v/--verbose, which every command accepts.
  Commands(CLI::App* root, std::string* verbose);
  // A command that only groups others (`trace`, `topology`, `plugins`).
  CLI::App* AddGroup(CLI::App* parent, const std::string& name, const std::string& help);
  // A command that runs: its flags are added to the returned app by the caller.
  CLI::App* AddLeaf(CLI::App* parent, const std::string& name, const std::string& help, Action action);
  // A command that parses its own arguments (`gen`): everything after its name
  // reaches `action` unparsed, --help included.
  CLI::App* AddPassThrough(CLI::App* parent, const std::string& name, const std::string& help,
                           std::function<int(const std::vector<std::string>&)> action);
  // After every command was added: gives each the common flags (-v), listed last in --help.
  void Finish();
  // After root->parse(): the named command's action, or the usage error.
  Result<Action> Resolve() const;

 private:
  Status LeftoverError(const CLI::App* app) const;
  CLI::App* root_;
  std::string* verbose_;
  std::vector<std::pair<CLI::App*, Action>> leaves_;
  std::vector<CLI::App*> groups_;
  std::vector<CLI::App*> pass_through_;
};

// "orrery trace gen-dp"
std::string FullName(const CLI::App* app);
// Prints "orrery: <message>" on stderr; returns the exit code for it.
int Fail(const Status& st);

// Flag values go through core/parse.h; errors name the flag: `--iterations = "0": ...`.
Result<int64_t> IntFlag(const std::string& flag, const std::string& text, int64_t min, int64_t max);
Result<uint64_t> UintFlag(const std::string& flag, const std::string& text, uint64_t min, uint64_t max);
Result<double> DoubleFlag(const std::string& flag, const std::string& text, DoubleRange range);
// One of `allowed`, else `--flag = "x": valid: a, b (did you mean 'b'?)`.
Status EnumFlag(const std::string& flag, const std::string& value, const std::vector<std::string>& allowed);

// HOST:PORT (port in [min_port, 65535]) or unix:/path; does not resolve the host.
Status AddressFlag(const std::string& flag, const std::string& text, int64_t min_port);

}  // namespace orrery::cli
