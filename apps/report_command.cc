// `orrery report compare A.json B.json`: the command line of report/compare.h.
#include <cstdio>
#include <memory>

#include "apps/commands.h"
#include "report/compare.h"

namespace orrery::cli {

void AddReportCommand(Commands* commands, CLI::App* root) {
  CLI::App* report = commands->AddGroup(root, "report", "read run reports (orrery run --report-format=json)");
  auto o = std::make_shared<CompareOptions>();
  CLI::App* compare = commands->AddLeaf(
      report, "compare", "two run reports side by side by category: a, b, b-a, b/a and the largest change", [o] {
        auto text = CompareReports(*o);
        if (!text.ok()) return Fail(text.status());
        std::fputs(text->c_str(), stdout);
        return 0;
      });
  compare->add_option("A", o->a, "the first report (orrery run --report-format=json)")->required();
  compare->add_option("B", o->b, "the second report")->required();
  compare->add_option("--format", o->format, "text (default), json or csv")->type_name("text|json|csv");
}

}  // namespace orrery::cli
