// The generator as a run's graph source (`orrery run --generate="..."`): the
// workload's rank classes are built once, and a rank's graph only when the
// run asks for it. Nothing is written to disk.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "gen/gen_args.h"
#include "gen/strategy.h"
#include "workload/graph_source.h"

namespace orrery::gen {

// `arguments`: `orrery gen`'s flags in one string, split at whitespace, e.g.
// "--model=llama3-70b --tp=8 --pp=4 --dp=32". Output flags (--out, --summary,
// --list-models, --help) are refused: the run is the output. `network`: the
// run's network, for --place (a --network inside `arguments` is refused).
Result<std::shared_ptr<const GraphSource>> GeneratedSource(const std::string& arguments,
                                                           const std::string& network = "");
// `arguments` read into options, not yet finished: the checks above, then
// ReadGenArgs; messages start with --generate="ARGUMENTS".
Result<GenOptions> ReadGenerateArguments(const std::string& arguments);
// The same from options already read (ReadGenArgs, SetGenFlag: a sweep
// point's), finished here; `what` names them in messages.
Result<std::shared_ptr<const GraphSource>> GeneratedSource(GenOptions options, const std::string& network,
                                                           const std::string& what);

// A source over an already generated workload (`description` names it in messages).
std::shared_ptr<const GraphSource> WorkloadSource(Workload workload, std::string description);

}  // namespace orrery::gen
