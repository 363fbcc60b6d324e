// Plugin fixtures for the loader tests; one source, built several ways.
#include <cstdio>
#include <memory>
#include <stdexcept>

#include "memory/backend.h"
#include "network/backend.h"
#include "plugins/sdk/orrery_plugin.h"
#include "system/collective_plugin.h"

namespace {

class Fixed : public orrery::NetworkBackend {
 public:
  explicit Fixed(const orrery::BackendContext& ctx) : ctx_(ctx), stats_(ctx.topology->num_dims()) {}
  void Send(int, int, uint64_t bytes, uint64_t token) override {
    ctx_.queue->ScheduleAfter(1000 + bytes / 1000, ctx_.sink, ctx_.delivered_kind, token);
  }
  const std::vector<orrery::DimStats>& dim_stats() const override { return stats_; }

 private:
  orrery::BackendContext ctx_;
  std::vector<orrery::DimStats> stats_;
};

bool Register(orrery::PluginRegistries* r, char* error, size_t n) {
#if defined(FIXTURE_THROWS)
  throw std::runtime_error("boom while registering");
#elif defined(FIXTURE_FAILS)
  std::snprintf(error, n, "needs FIXTURE_HOME to be set");
  return false;
#else
#if defined(FIXTURE_COLLIDES)
  const char* name = "analytical";
#else
  const char* name = "fixture-fixed";
#endif
  auto st = r->network->Register(name, "1 us + 1 ns per 1000 bytes",
                                 [](const orrery::BackendContext& ctx)
                                     -> orrery::Result<std::unique_ptr<orrery::NetworkBackend> > {
                                   return std::unique_ptr<orrery::NetworkBackend>(new Fixed(ctx));
                                 });
  if (!st.ok()) {
    std::snprintf(error, n, "%s", st.message().c_str());
    return false;
  }
#if defined(FIXTURE_GOOD)
  // A memory backend: every access takes 777 ns, no contention.
  struct Fixed777 : orrery::MemoryBackend {
    explicit Fixed777(const orrery::MemoryContext& c) : ctx(c) {}
    bool enabled() const override { return true; }
    void Access(int, orrery::MemOp, uint64_t, uint64_t token) override {
      ctx.queue->ScheduleAfter(777, ctx.sink, ctx.done_kind, token);
    }
    orrery::MemoryContext ctx;
  };
  if (r->memory) {
    auto ms = r->memory->Register("fixture-mem", "777 ns per access",
                                  [](const orrery::MemoryContext& c)
                                      -> orrery::Result<std::unique_ptr<orrery::MemoryBackend> > {
                                    return std::unique_ptr<orrery::MemoryBackend>(new Fixed777(c));
                                  });
    if (!ms.ok()) {
      std::snprintf(error, n, "%s", ms.message().c_str());
      return false;
    }
  }
  // A collective algorithm: every member sends its whole buffer to every other
  // member at once and waits for all of theirs (a one-shot exchange).
  std::string err;
  if (r->collectives && !r->collectives->Register(
                            "fixture-exchange", "one-shot exchange with every member",
                            [](const orrery::CollectiveRequest& q) {
                              orrery::CustomGraph g;
                              for (int m : q.members) {
                                if (m == q.self) continue;
                                orrery::CustomOp s;
                                s.kind = orrery::CustomOp::kSend;
                                s.peer = m;
                                s.bytes = q.bytes;
                                g.push_back(s);
                                orrery::CustomOp rcv;
                                rcv.kind = orrery::CustomOp::kRecv;
                                rcv.peer = m;
                                rcv.bytes = q.bytes;
                                g.push_back(rcv);
                              }
                              return g;
                            },
                            &err)) {
    std::snprintf(error, n, "%s", err.c_str());
    return false;
  }
#endif
  return true;
#endif
}

#if defined(FIXTURE_BAD_ABI)
const OrreryPluginInfo kInfo = {ORRERY_PLUGIN_ABI_VERSION + 41, "fixture", "0.1", &Register};
#else
const OrreryPluginInfo kInfo = {ORRERY_PLUGIN_ABI_VERSION, "fixture", "0.1", &Register};
#endif

}  // namespace

#if !defined(FIXTURE_NO_SYMBOL)
extern "C" ORRERY_EXPORT const OrreryPluginInfo* orrery_plugin_info(void) { return &kInfo; }
#else
extern "C" ORRERY_EXPORT int not_an_orrery_plugin(void) { return 1; }
#endif
