// The generator's options: what `orrery gen`'s flags, `orrery run
// --generate="..."` and a sweep's gen.* axes set. One table of flags
// (gen_args.cc) parses each flag into its typed field; FinishGenOptions
// derives what follows from several flags together.
#pragma once
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "core/parse.h"
#include "core/status.h"
#include "core/units.h"
#include "gen/dlrm.h"
#include "gen/strategy.h"
#include "network/topology.h"

namespace orrery::gen {

// --hbm-gb of `orrery gen` and `orrery search`: up to 10^9 GB, so its bytes
// (GB·2^30, about 1.07e18 at most) fit the 64-bit capacity they are kept in.
inline constexpr DoubleRange kHbmGbRange{0, 1e9, true};

struct GenOptions {
  std::string model;  // preset name or YAML path
  Strategy strategy;
  std::string out;  // PREFIX: writes PREFIX.<rank>.et and PREFIX.comm_groups.json
  bool summary = false;
  bool list_models = false;
  bool help = false;
  uint64_t hbm_bytes = 80 * kBytesPerGB;  // per-NPU capacity (--hbm-gb, default 80 GB)
  bool allow_over_capacity = false;
  std::string device;       // --device=a100|h100: HBM capacity (unless --hbm-gb) and --system-out's figures
  double efficiency = 1.0;  // --efficiency: achieved fraction of the device's peak FLOP/s
  std::string system_out;   // --system-out=F.json: the system JSON for the device
  // --group-collective-model=astra-sim|hierarchical: the model --system-out's file names.
  std::string group_collective_model = "astra-sim";
  bool list_devices = false;
  std::string network;  // --network: YAML or notation; the summary shows where the axes fall
  std::string place;    // --place=tp:0,dp:1,...: the order from a placement on `network`
  EmbeddingSharding embedding_sharding = EmbeddingSharding::kTable;  // DLRM models only
  // --comm-streams=per-group|one: a communication stream per communicator kind
  // (gen/builder.h, CommStreamOf) or one for all (ASTRA-sim's single slot).
  bool comm_streams = true;
  // --pg-metadata: each trace file also carries the process-group table (gen/builder.h, WriteChakra).
  bool pg_metadata = false;
  std::set<std::string> given;  // the flags on the command line, without "--"
  // The flags as given, in order (a flag SetGenFlag replaces moves last): the
  // options' identity in a run's configuration hash (gen/gen_source.cc).
  std::vector<std::string> args;
};

// With --place: reads the network and sets the strategy's rank order from
// the placement (an error if --order is given too, or --network is missing).
// Fills `dims` with the network's dimensions when --network is given.
Status ResolvePlacement(GenOptions* o, std::vector<Dim>* dims);

// Parses "--key=value" / "--flag" arguments (ReadGenArgs, then
// FinishGenOptions). Numbers go through core/parse.h; an unknown flag is an
// error with a did-you-mean.
Result<GenOptions> ParseGenArgs(const std::vector<std::string>& args);
// The flags alone, each into its field, not yet finished.
Result<GenOptions> ReadGenArgs(const std::vector<std::string>& args);
// One flag, "--key=value" or "--switch".
Status ApplyGenFlag(GenOptions* o, const std::string& arg);
// Replaces flag `key` (without "--") by `value`; a switch (--sp) is set by
// "true" and cleared by anything else. Finish the options again afterwards.
Status SetGenFlag(GenOptions* o, const std::string& key, const std::string& value);
// What follows from the flags together: microbatches from --global-batch,
// the device's HBM, and the checks across flags (--efficiency needs
// --device, ...). Idempotent: a sweep finishes a point's options again.
Status FinishGenOptions(GenOptions* o);
// The flags as given, one space between (GenOptions::args).
std::string GenArgsText(const GenOptions& o);
std::string GenUsage();
// Refuses flags that do not apply to the model's kind (--tp for a DLRM,
// --embedding-sharding for a transformer), naming the flag and what applies.
Status CheckFlagsForModel(const GenOptions& o, const ModelDesc& m);

}  // namespace orrery::gen
