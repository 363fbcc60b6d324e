#include "apps/cli.h"

#include "plugins/remote/endpoint.h"

#include <cstdio>

#include "extern/json_util.h"
#include "plugins/remote/endpoint.h"

namespace orrery::cli {

namespace {

void AddVerbose(CLI::App* app, std::string* verbose) {
  app->add_option("-v,--verbose", *verbose, "log detail on stderr: 0 quiet, 1 collective milestones, 2+ more")
      ->type_name("N")
      ->group("Logging");
}

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

// "--foo=1" -> "foo"; "-x" -> "x".
std::string FlagName(const std::string& arg) {
  size_t start = arg.rfind("--", 0) == 0 ? 2 : 1;
  return arg.substr(start, arg.find('=') == std::string::npos ? std::string::npos : arg.find('=') - start);
}

std::vector<std::string> LongNames(const CLI::App* app) {
  std::vector<std::string> names;
  for (const CLI::Option* o : app->get_options()) {
    for (const auto& n : o->get_lnames()) names.push_back(n);
  }
  return names;
}

}  // namespace

std::string FullName(const CLI::App* app) {
  std::string name;
  for (const CLI::App* a = app; a; a = a->get_parent()) {
    name = a->get_name() + (name.empty() ? "" : " " + name);
  }
  return name;
}

int Fail(const Status& st) {
  std::fprintf(stderr, "orrery: %s\n", st.message().c_str());
  return st.exit_code() == 0 ? 1 : st.exit_code();
}

Commands::Commands(CLI::App* root, std::string* verbose) : root_(root), verbose_(verbose) {
  root_->allow_extras();
  groups_.push_back(root_);
}

CLI::App* Commands::AddGroup(CLI::App* parent, const std::string& name, const std::string& help) {
  CLI::App* g = parent->add_subcommand(name, help);
  g->allow_extras();
  groups_.push_back(g);
  return g;
}

CLI::App* Commands::AddLeaf(CLI::App* parent, const std::string& name, const std::string& help, Action action) {
  CLI::App* leaf = parent->add_subcommand(name, help);
  leaf->allow_extras();
  leaves_.emplace_back(leaf, std::move(action));
  return leaf;
}

CLI::App* Commands::AddPassThrough(CLI::App* parent, const std::string& name, const std::string& help,
                                   std::function<int(const std::vector<std::string>&)> action) {
  CLI::App* leaf = parent->add_subcommand(name, help);
  leaf->prefix_command();
  leaf->set_help_flag();
  pass_through_.push_back(leaf);
  leaves_.emplace_back(leaf, [leaf, action = std::move(action)] { return action(leaf->remaining()); });
  return leaf;
}

void Commands::Finish() {
  for (CLI::App* g : groups_) AddVerbose(g, verbose_);
  for (auto& [leaf, action] : leaves_) {
    if (std::find(pass_through_.begin(), pass_through_.end(), leaf) == pass_through_.end()) AddVerbose(leaf, verbose_);
  }
}

Status Commands::LeftoverError(const CLI::App* app) const {
  const std::vector<std::string> rest = app->remaining();
  const std::string me = FullName(app);
  const bool is_group = std::find(groups_.begin(), groups_.end(), app) != groups_.end();
  if (rest.empty() || std::find(pass_through_.begin(), pass_through_.end(), app) != pass_through_.end()) {
    return Status::Ok();
  }
  const std::string& arg = rest.front();
  if (arg.size() > 1 && arg[0] == '-') {
    const std::string name = FlagName(arg);
    std::string msg = "unknown flag '" + arg + "' for '" + me + "'";
    for (const auto& [leaf, action] : leaves_) {
      if (leaf != app && leaf->get_option_no_throw("--" + name)) {
        msg = "'--" + name + "' is a flag of '" + FullName(leaf) + "', not of '" + me + "'";
        break;
      }
    }
    const std::string close = ClosestMatch(name, LongNames(app));
    if (!close.empty()) msg += " (did you mean '--" + close + "'?)";
    return Status::Invalid(msg + "; '" + me + " --help' lists its flags");
  }
  if (is_group) {
    std::vector<std::string> names;
    for (const CLI::App* s : app->get_subcommands({})) names.push_back(s->get_name());
    const std::string close = ClosestMatch(arg, names);
    return Status::Invalid("unknown command '" + arg + "' for '" + me + "'" +
                           (close.empty() ? "" : " (did you mean '" + close + "'?)") + "; valid: " + Join(names));
  }
  std::string extra;
  for (const auto& a : rest) extra += (extra.empty() ? "" : " ") + a;
  return Status::Invalid("unexpected argument(s) '" + extra + "' for '" + me + "' (flags are --name=value); '" + me +
                         " --help' shows its usage");
}

Result<Action> Commands::Resolve() const {
  const CLI::App* app = root_;
  while (true) {
    ORRERY_RETURN_IF_ERROR(LeftoverError(app));
    const auto parsed = app->get_subcommands();
    if (parsed.empty()) break;
    app = parsed.front();
  }
  for (const auto& [leaf, action] : leaves_) {
    if (leaf == app) return action;
  }
  std::vector<std::string> names;
  for (const CLI::App* s : app->get_subcommands({})) names.push_back(s->get_name());
  return Status::Invalid("'" + FullName(app) + "' needs a command: " + Join(names) + "; '" + FullName(app) +
                         " --help' explains them");
}

Result<int64_t> IntFlag(const std::string& flag, const std::string& text, int64_t min, int64_t max) {
  return ParseInt(text, Where{"", 0, flag}, min, max);
}

Result<uint64_t> UintFlag(const std::string& flag, const std::string& text, uint64_t min, uint64_t max) {
  return ParseUint(text, Where{"", 0, flag}, min, max);
}

Result<double> DoubleFlag(const std::string& flag, const std::string& text, DoubleRange range) {
  return ParseDouble(text, Where{"", 0, flag}, range);
}

Status EnumFlag(const std::string& flag, const std::string& value, const std::vector<std::string>& allowed) {
  if (std::find(allowed.begin(), allowed.end(), value) != allowed.end()) return Status::Ok();
  const std::string close = ClosestMatch(value, allowed);
  return Status::Invalid(flag + " = \"" + value + "\": valid: " + Join(allowed) +
                         (close.empty() ? "" : " (did you mean '" + close + "'?)"));
}

Status AddressFlag(const std::string& flag, const std::string& text, int64_t min_port) {
  auto endpoint = remote::ParseEndpoint(text, flag, min_port == 0);
  return endpoint.ok() ? Status::Ok() : endpoint.status();
}

}  // namespace orrery::cli
