#include "gen/gen_args.h"

#include <algorithm>
#include <array>
#include <set>
#include <sstream>

#include "core/limits.h"
#include "core/parse.h"
#include "core/units.h"
#include "extern/json_util.h"
#include "extern/network_dims.h"
#include "gen/device.h"
#include "gen/placement.h"

namespace orrery::gen {
namespace {

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
         "         [--grad-reduce=overlap|after-flush] [--grad-accumulation=fused|unfused]\n"
         "         [--comm-streams=per-group|one] [--precision=bf16|fp16] [--pg-metadata]\n"
         "       orrery gen --model=DLRM [--npus=N] [--global-batch=G | --microbatch-size=B (local batch)]\n"
         "         [--embedding-sharding=table|row] [--bucket-mb=25] [--hbm-gb=80] [--out=PREFIX] [--summary]\n"
         "         [--comm-streams=per-group|one] [--precision=bf16|fp16] [--pg-metadata]\n"
         "       orrery gen ... --device=a100|h100|FILE.yml [--flash-attention] [--efficiency=F] "
         "[--system-out=F.json\n"
         "         [--network=NET.yml|NOTATION] [--group-collective-model=astra-sim|hierarchical]]\n"
         "         [--layernorm=persistent|apex] [--tp-overlap]\n"
         "       orrery gen --list-models | --list-devices\n";
}

namespace {

using Setter = Status (*)(GenOptions* o, const std::string& value, const Where& where);

// A flag of `orrery gen`: its name (without "--"), whether it takes a value,
// and how it sets the options. Switches are set by a null setter.
struct GenFlag {
  const char* name;
  Setter set;  // null: a switch (SetSwitch)
};

constexpr int64_t kMaxAxis = 1 << 24;

template <int64_t Min, int64_t Max, typename T>
Status SetInt(T* out, const std::string& value, const Where& where) {
  ORRERY_PARSE_OR_RETURN(const int64_t v, ParseInt(value, where, Min, Max));
  *out = static_cast<T>(v);
  return Status::Ok();
}

// A strategy field's flag: an integer in [Min, Max].
template <auto Field, int64_t Min, int64_t Max>
Status SetStrategyInt(GenOptions* o, const std::string& value, const Where& where) {
  return SetInt<Min, Max>(&(o->strategy.*Field), value, where);
}

Status SetOffload(GenOptions* o, const std::string& value, const Where& where) {
  Strategy& s = o->strategy;
  s.offload_activations = s.offload_optimizer = false;
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
  return Status::Ok();
}

Status SetBucket(GenOptions* o, const std::string& value, const Where& where) {
  double mb;
  ORRERY_PARSE_OR_RETURN(mb, ParseDouble(value, where, DoubleRange{0, 1e6, true}));
  o->strategy.bucket_bytes = static_cast<uint64_t>(MiBToBytes(mb));
  if (o->strategy.bucket_bytes == 0) o->strategy.bucket_bytes = 1;
  return Status::Ok();
}

Status SetHbm(GenOptions* o, const std::string& value, const Where& where) {
  double gb;
  ORRERY_PARSE_OR_RETURN(gb, ParseDouble(value, where, kHbmGbRange));
  o->hbm_bytes = static_cast<uint64_t>(GBToBytes(gb));
  return Status::Ok();
}

Status SetSchedule(GenOptions* o, const std::string& value, const Where& where) {
  Strategy& s = o->strategy;
  if (value == "1f1b") {
    s.schedule = Schedule::k1F1B;
  } else if (value == "gpipe") {
    s.schedule = Schedule::kGpipe;
  } else if (value.rfind("interleaved:", 0) == 0) {
    s.schedule = Schedule::kInterleaved;
    ORRERY_PARSE_OR_RETURN(s.chunks, ParseInt(value.substr(12), where, 2, 1 << 10));
  } else {
    const std::string close = ClosestMatch(value, {"1f1b", "gpipe"});
    return ValueError(where, value,
                      close.empty() ? "unknown schedule" : "unknown schedule (did you mean '" + close + "'?)",
                      "1f1b, gpipe or interleaved:V (V chunks per rank)");
  }
  return Status::Ok();
}

Status SetRecompute(GenOptions* o, const std::string& value, const Where& where) {
  Recompute& r = o->strategy.recompute;
  if (value == "none") {
    r = Recompute::kNone;
  } else if (value == "selective") {
    r = Recompute::kSelective;
  } else if (value == "full") {
    r = Recompute::kFull;
  } else {
    return ValueError(where, value, "unknown recomputation mode", "none, selective or full");
  }
  return Status::Ok();
}

Status SetSharding(GenOptions* o, const std::string& value, const Where& where) {
  if (value == "table") {
    o->embedding_sharding = EmbeddingSharding::kTable;
  } else if (value == "row") {
    o->embedding_sharding = EmbeddingSharding::kRow;
  } else {
    const std::string close = ClosestMatch(value, {"table", "row"});
    return ValueError(where, value,
                      close.empty() ? "unknown sharding" : "unknown sharding (did you mean '" + close + "'?)",
                      "table (whole tables over the ranks) or row (every table's rows split over all ranks)");
  }
  return Status::Ok();
}

Status SetCommStreams(GenOptions* o, const std::string& value, const Where& where) {
  if (value != "per-group" && value != "one") {
    return ValueError(where, value, "unknown communication streams",
                      "per-group (a stream per communicator kind: TP 0, CP 1, EP 2, DP 3, PP 4, memory 5) or one "
                      "(every node on one stream, ASTRA-sim's single communication slot)");
  }
  o->comm_streams = value == "per-group";
  return Status::Ok();
}

Status SetGradReduce(GenOptions* o, const std::string& v, const Where& w) {
  if (v != "overlap" && v != "after-flush") {
    return ValueError(w, v, "unknown gradient reduction", "overlap (buckets during backward) or after-flush");
  }
  o->strategy.grad_reduce_after_flush = v == "after-flush";
  return Status::Ok();
}

Status SetGradAccumulation(GenOptions* o, const std::string& v, const Where& w) {
  if (v != "fused" && v != "unfused") {
    return ValueError(w, v, "unknown gradient accumulation",
                      "fused (into the fp32 buffer by the GEMM) or unfused (a separate add per microbatch)");
  }
  o->strategy.grad_accumulation_fused = v == "fused";
  return Status::Ok();
}

Status SetLayerNorm(GenOptions* o, const std::string& v, const Where& w) {
  if (v != "persistent" && v != "apex") {
    return ValueError(w, v, "unknown layer-norm kernel",
                      "persistent (Megatron's persistent LayerNorm, the default) or apex (apex's fused LayerNorm, "
                      "Megatron until 2021-10)");
  }
  o->strategy.apex_layernorm = v == "apex";
  return Status::Ok();
}

Status SetPrecision(GenOptions* o, const std::string& v, const Where& w) {
  if (v != "bf16" && v != "fp16") return ValueError(w, v, "unknown precision", "bf16 or fp16");
  o->strategy.fp16 = v == "fp16";
  return Status::Ok();
}

// A flag whose value is kept as given (a name, a path).
template <std::string GenOptions::*Field>
Status SetString(GenOptions* o, const std::string& value, const Where&) {
  o->*Field = value;
  return Status::Ok();
}

Status SetGroupModel(GenOptions* o, const std::string& v, const Where& w) {
  if (v != "astra-sim" && v != "hierarchical") {
    return ValueError(w, v, "unknown group-collective model",
                      "astra-sim (ASTRA-sim's rules) or hierarchical (Orrery's per-dimension model)");
  }
  o->group_collective_model = v;
  return Status::Ok();
}

// Every flag, value flags first (the order of the "valid flags" message).
const std::vector<GenFlag>& Flags() {
  static const std::vector<GenFlag> f = {
      {"model", SetString<&GenOptions::model>},
      {"tp", SetStrategyInt<&Strategy::tp, 1, kMaxAxis>},
      {"cp", SetStrategyInt<&Strategy::cp, 1, kMaxAxis>},
      {"ep", SetStrategyInt<&Strategy::ep, 1, kMaxAxis>},
      {"dp", SetStrategyInt<&Strategy::dp, 1, kMaxAxis>},
      {"pp", SetStrategyInt<&Strategy::pp, 1, kMaxAxis>},
      {"npus", SetStrategyInt<&Strategy::npus, 1, kMaxAxis>},
      {"microbatches", SetStrategyInt<&Strategy::microbatches, 1, 1 << 20>},
      {"microbatch-size", SetStrategyInt<&Strategy::microbatch_size, 1, 1 << 20>},
      {"global-batch", SetStrategyInt<&Strategy::global_batch, 1, kMaxGlobalBatch>},
      {"schedule", SetSchedule},
      {"recompute", SetRecompute},
      {"zero", SetStrategyInt<&Strategy::zero, 0, 3>},
      {"order",
       [](GenOptions* o, const std::string& v, const Where&) {
         ORRERY_PARSE_OR_RETURN(o->strategy.order, ParseOrder(v));
         return Status::Ok();
       }},
      {"bucket-mb", SetBucket},
      {"out", SetString<&GenOptions::out>},
      {"hbm-gb", SetHbm},
      {"network", SetString<&GenOptions::network>},
      {"place", SetString<&GenOptions::place>},
      {"offload", SetOffload},
      {"embedding-sharding", SetSharding},
      {"device", SetString<&GenOptions::device>},
      {"efficiency",
       [](GenOptions* o, const std::string& v, const Where& w) {
         ORRERY_PARSE_OR_RETURN(o->efficiency, ParseDouble(v, w, DoubleRange{0.01, 1, false}));
         return Status::Ok();
       }},
      {"system-out", SetString<&GenOptions::system_out>},
      {"group-collective-model", SetGroupModel},
      {"grad-reduce", SetGradReduce},
      {"grad-accumulation", SetGradAccumulation},
      {"layernorm", SetLayerNorm},
      {"comm-streams", SetCommStreams},
      {"precision", SetPrecision},
      {"sp", nullptr},
      {"flash-attention", nullptr},
      {"tp-overlap", nullptr},
      {"summary", nullptr},
      {"list-models", nullptr},
      {"list-devices", nullptr},
      {"help", nullptr},
      {"allow-over-capacity", nullptr},
      {"pg-metadata", nullptr},
  };
  return f;
}

bool* SwitchField(GenOptions* o, const std::string& name) {
  if (name == "sp") return &o->strategy.sp;
  if (name == "flash-attention") return &o->strategy.flash_attention;
  if (name == "tp-overlap") return &o->strategy.tp_overlap;
  if (name == "summary") return &o->summary;
  if (name == "list-models") return &o->list_models;
  if (name == "list-devices") return &o->list_devices;
  if (name == "help") return &o->help;
  if (name == "pg-metadata") return &o->pg_metadata;
  return &o->allow_over_capacity;
}

Result<const GenFlag*> FindFlag(const std::string& key) {
  std::vector<std::string> all;
  for (const GenFlag& f : Flags()) {
    if (key == f.name) return &f;
    all.push_back(f.name);
  }
  const std::string close = ClosestMatch(key, all);
  return Status::Invalid("gen: unknown flag --" + key + (close.empty() ? "" : " (did you mean --" + close + "?)") +
                         "; valid flags: --" + JoinStrings(all, ", --"));
}

// Sets one flag, given as `key` and, unless `has_value` is false, its value.
Status Apply(GenOptions* o, const std::string& key, bool has_value, const std::string& value) {
  const Where where{"", 0, "--" + key};
  o->given.insert(key);
  ORRERY_PARSE_OR_RETURN(const GenFlag* flag, FindFlag(key));
  if (!flag->set) {
    if (has_value) return ValueError(where, value, "this flag takes no value", "--" + key + " alone");
    *SwitchField(o, key) = true;
    return Status::Ok();
  }
  if (!has_value || value.empty()) return ValueError(where, value, "missing value", "--" + key + "=VALUE");
  return flag->set(o, value, where);
}

}  // namespace

Status ApplyGenFlag(GenOptions* o, const std::string& arg) {
  if (arg.rfind("--", 0) != 0) {
    return Status::Invalid("gen: unexpected argument '" + arg + "'; flags have the form --key=value\n" + GenUsage());
  }
  o->args.push_back(arg);
  const size_t eq = arg.find('=');
  const std::string key = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
  return Apply(o, key, eq != std::string::npos, eq == std::string::npos ? "" : arg.substr(eq + 1));
}

Status SetGenFlag(GenOptions* o, const std::string& key, const std::string& value) {
  const std::string flag = "--" + key;
  std::vector<std::string>& a = o->args;
  a.erase(std::remove_if(a.begin(), a.end(),
                         [&](const std::string& x) { return x == flag || x.rfind(flag + "=", 0) == 0; }),
          a.end());
  auto found = FindFlag(key);
  if (found.ok() && !found.value()->set) {  // a switch: "true" sets it, anything else clears it
    *SwitchField(o, key) = value == "true";
    if (value != "true") {
      o->given.erase(key);
      return Status::Ok();
    }
    a.push_back(flag);
    o->given.insert(key);
    return Status::Ok();
  }
  a.push_back(flag + "=" + value);
  return Apply(o, key, true, value);
}

std::string GenArgsText(const GenOptions& o) {
  std::string out;
  for (const std::string& a : o.args) out += (out.empty() ? "" : " ") + a;
  return out;
}

Status FinishGenOptions(GenOptions* o) {
  Strategy& s = o->strategy;
  ORRERY_RETURN_IF_ERROR(StrategyNpus(s).status());
  if (s.global_batch != 0 && !o->given.count("microbatches")) {
    ORRERY_PARSE_OR_RETURN(const int64_t per,
                           CheckedProduct({{"--microbatch-size", s.microbatch_size}, {"--dp", s.dp}, {"--ep", s.ep}},
                                          kMaxGlobalBatch, Where{},
                                          "samples per step up to " + std::to_string(kMaxGlobalBatch) + " (2^30)"));
    if (s.global_batch % per != 0) {
      return ValueError(Where{"", 0, "--global-batch"}, std::to_string(s.global_batch),
                        "not divisible by microbatch-size·dp·ep = " + std::to_string(per),
                        "a multiple of microbatch-size·dp·ep");
    }
    s.microbatches = s.global_batch / per;
  }
  if (!o->device.empty()) {
    auto d = FindDevice(o->device);
    if (!d.ok()) return d.status();
    if (!o->given.count("hbm-gb")) o->hbm_bytes = static_cast<uint64_t>(GBToBytes(d->hbm_gb));
    s.kernel_model = true;
    s.device = d->model;
  } else {
    s.kernel_model = false;
  }
  if (o->given.count("layernorm") && !s.kernel_model) {
    return ValueError(Where{"", 0, "--layernorm"}, s.apex_layernorm ? "apex" : "persistent",
                      "needs the kernel model of a device", "--layernorm together with --device=a100|h100");
  }
  if (s.flash_attention && !s.kernel_model) {
    return ValueError(Where{"", 0, "--flash-attention"}, "true", "needs the kernel model of a device",
                      "--flash-attention together with --device=a100|h100");
  }
  if (s.tp_overlap && !s.kernel_model) {
    return ValueError(Where{"", 0, "--tp-overlap"}, "true", "needs the kernel model of a device",
                      "--tp-overlap together with --device=a100|h100");
  }
  if (o->given.count("efficiency") && o->device.empty()) {
    return ValueError(Where{"", 0, "--efficiency"}, std::to_string(o->efficiency), "needs a device",
                      "--efficiency together with --device=a100|h100");
  }
  if (!o->system_out.empty() && o->device.empty()) {
    return ValueError(Where{"", 0, "--system-out"}, o->system_out, "needs a device",
                      "--system-out together with --device");
  }
  if (o->given.count("group-collective-model") && o->system_out.empty()) {
    return ValueError(Where{"", 0, "--group-collective-model"}, o->group_collective_model,
                      "names the model in the system JSON --system-out writes, and there is none",
                      "--group-collective-model together with --system-out=F.json");
  }
  if (!o->list_models && !o->list_devices && !o->help && o->model.empty() && o->system_out.empty()) {
    return Status::Invalid("gen: --model is required (a preset, see --list-models, or a YAML file)\n" + GenUsage());
  }
  return Status::Ok();
}

Result<GenOptions> ReadGenArgs(const std::vector<std::string>& args) {
  GenOptions o;
  for (const std::string& arg : args) ORRERY_RETURN_IF_ERROR(ApplyGenFlag(&o, arg));
  return o;
}

Result<GenOptions> ParseGenArgs(const std::vector<std::string>& args) {
  ORRERY_PARSE_OR_RETURN(GenOptions o, ReadGenArgs(args));
  ORRERY_RETURN_IF_ERROR(FinishGenOptions(&o));
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
  for (const Dim& d : *dims) npus *= d.npus;  // the network's reader checked it against kMaxNpus
  ORRERY_PARSE_OR_RETURN(const int64_t product, StrategyNpus(s));
  if (npus != product) {
    return ValueError(Where{"", 0, "--place"}, o->place,
                      "the network " + o->network + " has " + std::to_string(npus) +
                          " NPUs but tp·cp·ep·dp·pp = " + std::to_string(product),
                      "a network with as many NPUs as the strategy");
  }
  auto order = OrderFromPlacement(o->place, {s.tp, s.cp, s.ep, s.dp, s.pp}, *dims);
  if (!order.ok()) return order.status();
  o->strategy.order = order.value();
  return Status::Ok();
}

Status CheckFlagsForModel(const GenOptions& o, const ModelDesc& m) {
  if (m.kind == ModelKind::kDlrm) {
    for (const char* flag :
         {"tp", "cp", "ep", "pp", "microbatches", "schedule", "sp", "recompute", "zero", "order", "place", "offload"}) {
      if (o.given.count(flag)) {
        return Status::Invalid("--" + std::string(flag) + " does not apply to " + m.name +
                               " (kind dlrm: data-parallel MLPs, model-parallel embeddings); allowed for a DLRM: "
                               "--npus (or --dp), --global-batch or --microbatch-size (the local batch), "
                               "--embedding-sharding, --bucket-mb, --hbm-gb, --allow-over-capacity, --out, --summary, "
                               "--comm-streams, --pg-metadata");
      }
    }
  } else if (o.given.count("embedding-sharding")) {
    return Status::Invalid("--embedding-sharding applies to DLRM models (kind: dlrm) only; " + m.name +
                           " is a transformer");
  }
  return Status::Ok();
}

}  // namespace orrery::gen
