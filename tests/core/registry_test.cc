// One registry mechanism (core/registry.h) behind network backends, memory
// backends and plugin collective algorithms; one table of built-in algorithm
// names (core/algorithm_kind.h) behind the system JSON reader and the
// collective registry. Expected values are written out by hand.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/algorithm_kind.h"
#include "core/registry.h"
#include "extern/astra_config.h"
#include "memory/backend.h"
#include "network/backend.h"
#include "system/collective_plugin.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

struct Widget {
  std::string description;
  int value = 0;
};

TEST(NameRegistry, SortedNamesDuplicatesAndEmptyNames) {
  NameRegistry<Widget> r("widget");
  ASSERT_TRUE(r.Add("beta", Widget{"second", 2}).ok());
  ASSERT_TRUE(r.Add("alpha", Widget{"first", 1}).ok());
  EXPECT_EQ(r.Names(), (std::vector<std::string>{"alpha", "beta"}));  // sorted, not in registration order
  ASSERT_NE(r.Find("beta"), nullptr);
  EXPECT_EQ(r.Find("beta")->value, 2);
  EXPECT_EQ(r.Find("gamma"), nullptr);
  const Status dup = r.Add("alpha", Widget{"again", 3});
  EXPECT_EQ(dup.message(), "widget 'alpha' is already registered");
  EXPECT_EQ(r.Find("alpha")->value, 1);  // the first registration stays
  EXPECT_EQ(r.Add("", Widget{}).message(), "widget name must not be empty");
  // Two spaces, the name in a 20-column field, the description.
  EXPECT_EQ(r.Help(), "  alpha               first\n  beta                second\n");
}

TEST(NameRegistry, UnknownNamesTheKindTheNearestNameAndTheAllowedList) {
  NameRegistry<Widget> r("widget");
  ASSERT_TRUE(r.Add("alpha", Widget{}).ok());
  ASSERT_TRUE(r.Add("beta", Widget{}).ok());
  // "alpah" is 2 edits from "alpha" (a swap), within the 4 allowed for a 5-letter word.
  EXPECT_EQ(r.Unknown("alpah"), "unknown widget (did you mean 'alpha'?); valid: alpha, beta");
  // "zzzzzzzz" is 8 edits from "alpha" and "beta" (at least 4 needed): no suggestion.
  EXPECT_EQ(r.Unknown("zzzzzzzz"), "unknown widget; valid: alpha, beta");
}

TEST(NameRegistry, TheThreeRegistriesShareIt) {
  BackendRegistry net = DefaultBackends();
  EXPECT_EQ(net.Names(), (std::vector<std::string>{"analytical", "congestion-aware"}));
  EXPECT_EQ(net.Unknown("analytic"),
            "unknown network backend (did you mean 'analytical'?); valid: analytical, congestion-aware");
  EXPECT_EQ(net.Register("analytical", "", nullptr).message(), "network backend 'analytical' is already registered");

  MemoryRegistry mem;
  RegisterBuiltinMemoryBackends(&mem);
  EXPECT_EQ(mem.Names(), (std::vector<std::string>{"astra-sim", "pool"}));
  EXPECT_EQ(mem.Unknown("pools"), "unknown memory backend (did you mean 'pool'?); valid: astra-sim, pool");
  EXPECT_EQ(mem.Register("pool", "", nullptr).message(), "memory backend 'pool' is already registered");

  CollectiveRegistry algos;
  std::string err;
  ASSERT_TRUE(algos.Register("zeta", "z", nullptr, &err)) << err;
  ASSERT_TRUE(algos.Register("eta", "e", nullptr, &err)) << err;
  EXPECT_EQ(algos.Names(), (std::vector<std::string>{"eta", "zeta"}));
  EXPECT_FALSE(algos.Register("eta", "again", nullptr, &err));
  EXPECT_EQ(err, "collective algorithm 'eta' is already registered");
}

// Every name the system JSON accepted before the table existed, with the
// algorithm and variant it means (ASTRA-sim's spellings).
struct Expected {
  const char* name;
  AlgoKind kind;
  bool one;
  int window;
};
const Expected kAccepted[] = {
    {"ring", AlgoKind::kRing, false, -1},
    {"oneRing", AlgoKind::kRing, true, -1},
    {"direct", AlgoKind::kDirect, false, -1},
    {"oneDirect", AlgoKind::kDirect, true, -1},
    {"direct4", AlgoKind::kDirect, false, 4},
    {"oneDirect16", AlgoKind::kDirect, true, 16},
    {"halvingDoubling", AlgoKind::kHalvingDoubling, false, -1},
    {"oneHalvingDoubling", AlgoKind::kHalvingDoubling, true, -1},
    {"doubleBinaryTree", AlgoKind::kDoubleBinaryTree, false, -1},
    {"inSwitch", AlgoKind::kInSwitch, false, -1},
};

TEST(AlgorithmNames, TheSystemJsonAcceptsEachBuiltinName) {
  for (const Expected& e : kAccepted) {
    nlohmann::json j = {{"all-reduce-implementation", {e.name}}};
    auto cfg = ParseAstraSystemJson(j, "sys.json");
    ASSERT_TRUE(cfg.ok()) << e.name << ": " << cfg.status().message();
    ASSERT_EQ(cfg->all_reduce.size(), 1u);
    const CollectiveImplSpec& s = cfg->all_reduce[0];
    EXPECT_EQ(s.kind, e.kind) << e.name;
    EXPECT_EQ(s.one, e.one) << e.name;
    EXPECT_EQ(s.window, e.window) << e.name;
    EXPECT_EQ(s.name, e.name);
  }
}

TEST(AlgorithmNames, OneTableListsThemAndGuardsThem) {
  // The order error messages list them in.
  EXPECT_EQ(BuiltinAlgorithmNames(),
            (std::vector<std::string>{"ring", "direct", "halvingDoubling", "doubleBinaryTree", "oneRing", "oneDirect",
                                      "oneHalvingDoubling", "inSwitch"}));
  nlohmann::json j = {{"all-gather-implementation", {"ring", "halvingDubling"}}};
  auto cfg = ParseAstraSystemJson(j, "sys.json");
  ASSERT_FALSE(cfg.ok());
  EXPECT_EQ(cfg.status().message(),
            "sys.json: \"all-gather-implementation\"[1] = \"halvingDubling\": unknown algorithm (did you mean "
            "'halvingDoubling'?); valid: ring, direct, halvingDoubling, doubleBinaryTree, oneRing, oneDirect, "
            "oneHalvingDoubling, inSwitch (direct<N> limits the window)");
  // A plugin cannot take a built-in name: the reader would never reach it.
  CollectiveRegistry algos;
  for (const char* name : {"ring", "direct", "halvingDoubling", "doubleBinaryTree", "oneRing", "oneDirect",
                           "oneHalvingDoubling", "inSwitch"}) {
    std::string err;
    EXPECT_FALSE(algos.Register(name, "", nullptr, &err)) << name;
    EXPECT_EQ(err, std::string("collective algorithm '") + name + "' is built in");
  }
  EXPECT_TRUE(algos.Names().empty());
}

}  // namespace
}  // namespace orrery
