#include "gen/gen_args.h"

#include <algorithm>
#include <array>
#include <set>
#include <sstream>

#include "core/parse.h"
#include "core/units.h"
#include "extern/json_util.h"
#include "gen/device.h"
#include "gen/placement.h"
#include "extern/network_dims.h"

namespace orrery::gen {
namespace {

const std::vector<std::string>& ValueFlags() {
  static const std::vector<std::string> f = {"model", "tp", "cp", "ep", "dp", "pp", "npus", "microbatches",
                                             "microbatch-size", "global-batch", "schedule", "recompute", "zero",
                                             "order", "bucket-mb", "out", "hbm-gb", "network", "place", "offload",
                                             "embedding-sharding", "device", "efficiency", "system-out"};
  return f;
}
const std::vector<std::string>& BoolFlags() {
  static const std::vector<std::string> f = {"sp", "summary", "list-models", "list-devices", "help",
                                                             "allow-over-capacity"};
  return f;
}

Result<std::array<Axis, kNumAxes>> ParseOrder(const std::string& text) {
  std::array<Axis, kNumAxes> order{};
  std::set<std::string> seen;
  size_t pos = 0;
  int n = 0;
  const std::vector<std::string> names = {"tp", "cp", "ep", "dp", "pp"};
  auto bad = [&](const std::string& why) {
    return ValueError(Where{"", 0, "--order"}, text, why, "a permutation of tp-cp-ep-dp-pp, innermost first");
  };
  while (pos <= text.size()) {
    size_t dash = text.find('-', pos);
    if (dash == std::string::npos) dash = text.size();
    const std::string a = text.substr(pos, dash - pos);
    int idx = -1;
    for (int i = 0; i < kNumAxes; ++i) {
      if (names[i] == a) idx = i;
    }
    if (idx < 0) return bad("unknown axis '" + a + "'");
    if (!seen.insert(a).second) return bad("axis '" + a + "' twice");
    if (n >= kNumAxes) return bad("too many axes");
    order[n++] = static_cast<Axis>(idx);
    pos = dash + 1;
  }
  if (n != kNumAxes) return bad("every axis must appear once");
  return order;
}

}  // namespace

std::string GenUsage() {
  return "usage: orrery gen --model=NAME|FILE.yml [--tp=N --cp=N --ep=N --dp=N --pp=N --npus=N]\n"
         "         [--microbatches=M --microbatch-size=B | --global-batch=G] [--schedule=1f1b|gpipe|interleaved:V]\n"
         "         [--sp] [--recompute=none|selective|full] [--zero=0..3] [--order=tp-cp-ep-dp-pp]\n"
         "         [--bucket-mb=25] [--hbm-gb=80] [--allow-over-capacity] [--out=PREFIX] [--summary]\n"
         "         [--network=NET.yml|NOTATION [--place=tp:0,dp:1,pp:2]] [--offload=activations,optimizer]\n"
         "       orrery gen --model=DLRM [--npus=N] [--global-batch=G | --microbatch-size=B (local batch)]\n"
         "         [--embedding-sharding=table|row] [--bucket-mb=25] [--hbm-gb=80] [--out=PREFIX] [--summary]\n"
         "       orrery gen ... --device=a100|h100 [--efficiency=F] [--system-out=F.json]\n"
         "       orrery gen --list-models | --list-devices\n";
}

Result<GenOptions> ParseGenArgs(const std::vector<std::string>& args) {
  GenOptions o;
  bool have_mb = false;
  std::vector<std::string> all = ValueFlags();
  all.insert(all.end(), BoolFlags().begin(), BoolFlags().end());
  for (const std::string& arg : args) {
    if (arg.rfind("--", 0) != 0) {
      return Status::Invalid("gen: unexpected argument '" + arg + "'; flags have the form --key=value\n" + GenUsage());
    }
    const size_t eq = arg.find('=');
    const std::string key = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    const bool has_value = eq != std::string::npos;
    const std::string value = has_value ? arg.substr(eq + 1) : "";
    const Where where{"", 0, "--" + key};
    o.given.insert(key);
    const bool is_value = std::find(ValueFlags().begin(), ValueFlags().end(), key) != ValueFlags().end();
    const bool is_bool = std::find(BoolFlags().begin(), BoolFlags().end(), key) != BoolFlags().end();
    if (!is_value && !is_bool) {
      const std::string close = ClosestMatch(key, all);
      return Status::Invalid("gen: unknown flag --" + key + (close.empty() ? "" : " (did you mean --" + close + "?)") +
                             "; valid flags: --" + JoinStrings(all, ", --"));
    }
    if (is_bool) {
      if (has_value) return ValueError(where, value, "this flag takes no value", "--" + key + " alone");
      if (key == "sp") o.strategy.sp = true;
      if (key == "summary") o.summary = true;
      if (key == "list-models") o.list_models = true;
      if (key == "list-devices") o.list_devices = true;
      if (key == "help") o.help = true;
      if (key == "allow-over-capacity") o.allow_over_capacity = true;
      continue;
    }
    if (!has_value || value.empty()) return ValueError(where, value, "missing value", "--" + key + "=VALUE");
    Strategy& s = o.strategy;
    const int64_t kMaxAxis = 1 << 24;
    if (key == "model") {
      o.model = value;
    } else if (key == "out") {
      o.out = value;
    } else if (key == "offload") {
      std::stringstream in(value);
      for (std::string what; std::getline(in, what, ',');) {
        if (what == "activations") {
          s.offload_activations = true;
        } else if (what == "optimizer") {
          s.offload_optimizer = true;
        } else {
          const std::string close = ClosestMatch(what, {"activations", "optimizer"});
          return ValueError(where, value,
                            "unknown '" + what + "'" + (close.empty() ? "" : " (did you mean '" + close + "'?)"),
                            "activations, optimizer, or both comma-separated");
        }
      }
    } else if (key == "device") {
      o.device = value;
    } else if (key == "efficiency") {
      ORRERY_PARSE_OR_RETURN(o.efficiency, ParseDouble(value, where, DoubleRange{0.01, 1, false}));
    } else if (key == "system-out") {
      o.system_out = value;
    } else if (key == "network") {
      o.network = value;
    } else if (key == "place") {
      o.place = value;
    } else if (key == "tp") {
      ORRERY_PARSE_OR_RETURN(s.tp, ParseInt(value, where, 1, kMaxAxis));
    } else if (key == "cp") {
      ORRERY_PARSE_OR_RETURN(s.cp, ParseInt(value, where, 1, kMaxAxis));
    } else if (key == "ep") {
      ORRERY_PARSE_OR_RETURN(s.ep, ParseInt(value, where, 1, kMaxAxis));
    } else if (key == "dp") {
      ORRERY_PARSE_OR_RETURN(s.dp, ParseInt(value, where, 1, kMaxAxis));
    } else if (key == "pp") {
      ORRERY_PARSE_OR_RETURN(s.pp, ParseInt(value, where, 1, kMaxAxis));
    } else if (key == "npus") {
      ORRERY_PARSE_OR_RETURN(s.npus, ParseInt(value, where, 1, kMaxAxis));
    } else if (key == "microbatches") {
      ORRERY_PARSE_OR_RETURN(s.microbatches, ParseInt(value, where, 1, 1 << 20));
      have_mb = true;
    } else if (key == "microbatch-size") {
      ORRERY_PARSE_OR_RETURN(s.microbatch_size, ParseInt(value, where, 1, 1 << 20));
    } else if (key == "global-batch") {
      ORRERY_PARSE_OR_RETURN(s.global_batch, ParseInt(value, where, 1, int64_t{1} << 30));
    } else if (key == "zero") {
      int64_t z;
      ORRERY_PARSE_OR_RETURN(z, ParseInt(value, where, 0, 3));
      s.zero = static_cast<int>(z);
    } else if (key == "bucket-mb") {
      double mb;
      ORRERY_PARSE_OR_RETURN(mb, ParseDouble(value, where, DoubleRange{0, 1e6, true}));
      s.bucket_bytes = static_cast<uint64_t>(MiBToBytes(mb));
      if (s.bucket_bytes == 0) s.bucket_bytes = 1;
    } else if (key == "hbm-gb") {
      double gb;
      ORRERY_PARSE_OR_RETURN(gb, ParseDouble(value, where, DoubleRange{0, 1e9, true}));
      o.hbm_bytes = static_cast<uint64_t>(GBToBytes(gb));
    } else if (key == "schedule") {
      if (value == "1f1b") {
        s.schedule = Schedule::k1F1B;
      } else if (value == "gpipe") {
        s.schedule = Schedule::kGpipe;
      } else if (value.rfind("interleaved:", 0) == 0) {
        s.schedule = Schedule::kInterleaved;
        ORRERY_PARSE_OR_RETURN(s.chunks, ParseInt(value.substr(12), where, 2, 1 << 10));
      } else {
        const std::string close = ClosestMatch(value, {"1f1b", "gpipe"});
        return ValueError(where, value, close.empty() ? "unknown schedule" : "unknown schedule (did you mean '" + close + "'?)",
                          "1f1b, gpipe or interleaved:V (V chunks per rank)");
      }
    } else if (key == "recompute") {
      if (value == "none") {
        s.recompute = Recompute::kNone;
      } else if (value == "selective") {
        s.recompute = Recompute::kSelective;
      } else if (value == "full") {
        s.recompute = Recompute::kFull;
      } else {
        return ValueError(where, value, "unknown recomputation mode", "none, selective or full");
      }
    } else if (key == "order") {
      ORRERY_PARSE_OR_RETURN(s.order, ParseOrder(value));
    } else if (key == "embedding-sharding") {
      if (value == "table") {
        o.embedding_sharding = EmbeddingSharding::kTable;
      } else if (value == "row") {
        o.embedding_sharding = EmbeddingSharding::kRow;
      } else {
        const std::string close = ClosestMatch(value, {"table", "row"});
        return ValueError(where, value, close.empty() ? "unknown sharding" : "unknown sharding (did you mean '" + close + "'?)",
                          "table (whole tables over the ranks) or row (every table's rows split over all ranks)");
      }
    }
  }
  if (o.strategy.global_batch != 0 && !have_mb) {
    const int64_t per = o.strategy.microbatch_size * o.strategy.dp * o.strategy.ep;
    if (o.strategy.global_batch % per != 0) {
      return ValueError(Where{"", 0, "--global-batch"}, std::to_string(o.strategy.global_batch),
                        "not divisible by microbatch-size·dp·ep = " + std::to_string(per),
                        "a multiple of microbatch-size·dp·ep");
    }
    o.strategy.microbatches = o.strategy.global_batch / per;
  }
  if (!o.device.empty()) {
    auto d = FindDevice(o.device);
    if (!d.ok()) return d.status();
    if (!o.given.count("hbm-gb")) o.hbm_bytes = static_cast<uint64_t>(GBToBytes(d->hbm_gb));
  }
  if (o.given.count("efficiency") && o.device.empty()) {
    return ValueError(Where{"", 0, "--efficiency"}, std::to_string(o.efficiency), "needs a device",
                      "--efficiency together with --device=a100|h100");
  }
  if (!o.system_out.empty() && o.device.empty()) {
    return ValueError(Where{"", 0, "--system-out"}, o.system_out, "needs a device", "--system-out together with --device");
  }
  if (!o.list_models && !o.list_devices && !o.help && o.model.empty() && o.system_out.empty()) {
    return Status::Invalid("gen: --model is required (a preset, see --list-models, or a YAML file)\n" + GenUsage());
  }
  return o;
}

Status ResolvePlacement(GenOptions* o, std::vector<Dim>* dims) {
  dims->clear();
  if (o->network.empty()) {
    if (!o->place.empty()) {
      return ValueError(Where{"", 0, "--place"}, o->place, "needs the network", "--place together with --network=NET");
    }
    return Status::Ok();
  }
  auto net = ReadNetworkDims(o->network);
  if (!net.ok()) return net.status().Prefixed("--network: ");
  *dims = net.value();
  if (o->place.empty()) return Status::Ok();
  if (o->given.count("order")) {
    return ValueError(Where{"", 0, "--place"}, o->place, "--order is given too; the placement decides the order",
                      "either --order or --place");
  }
  const Strategy& s = o->strategy;
  int64_t npus = 1;
  for (const Dim& d : *dims) npus *= d.npus;
  const int64_t product = s.tp * s.cp * s.ep * s.dp * s.pp;
  if (npus != product) {
    return ValueError(Where{"", 0, "--place"}, o->place,
                      "the network " + o->network + " has " + std::to_string(npus) + " NPUs but tp·cp·ep·dp·pp = " +
                          std::to_string(product),
                      "a network with as many NPUs as the strategy");
  }
  auto order = OrderFromPlacement(o->place, {s.tp, s.cp, s.ep, s.dp, s.pp}, *dims);
  if (!order.ok()) return order.status();
  o->strategy.order = order.value();
  return Status::Ok();
}

Status CheckFlagsForModel(const GenOptions& o, const ModelDesc& m) {
  if (m.kind == ModelKind::kDlrm) {
    for (const char* flag : {"tp", "cp", "ep", "pp", "microbatches", "schedule", "sp", "recompute", "zero", "order", "place",
                             "offload"}) {
      if (o.given.count(flag)) {
        return Status::Invalid("--" + std::string(flag) + " does not apply to " + m.name +
                               " (kind dlrm: data-parallel MLPs, model-parallel embeddings); allowed for a DLRM: "
                               "--npus (or --dp), --global-batch or --microbatch-size (the local batch), "
                               "--embedding-sharding, --bucket-mb, --hbm-gb, --allow-over-capacity, --out, --summary");
      }
    }
  } else if (o.given.count("embedding-sharding")) {
    return Status::Invalid("--embedding-sharding applies to DLRM models (kind: dlrm) only; " + m.name +
                           " is a transformer");
  }
  return Status::Ok();
}

}  // namespace orrery::gen
