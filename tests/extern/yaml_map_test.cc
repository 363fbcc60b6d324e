// Every YAML reader of Orrery's own files (model, DLRM model, device, sweep
// spec) refuses a key given twice and a key that is not a plain name, with
// the file and line; yaml-cpp alone keeps the first and throws on the second.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "explore/sweep.h"
#include "extern/yaml_map.h"
#include "gen/device.h"
#include "gen/model.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

using testing::TempDir;

TEST(YamlMap, EntriesInOrderEachKeyOnceAndPlain) {
  auto ok = MappingEntries(YAML::Load("a: 1\nb: [2]\n"), "f.yml", "");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  ASSERT_EQ(ok->size(), 2u);
  EXPECT_EQ((*ok)[0].key, "a");
  EXPECT_EQ((*ok)[1].key, "b");
  EXPECT_EQ((*ok)[1].line, 2);
  auto twice = MappingEntries(YAML::Load("a: 1\nb: 2\na: 3\n"), "f.yml", "base");
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.status().message(),
            "f.yml:3: base: key 'a' is given twice (first on line 1); allowed: each key once");
  auto complex = MappingEntries(YAML::Load("? [x, y]\n: 1\n"), "f.yml", "");
  ASSERT_FALSE(complex.ok());
  EXPECT_EQ(complex.status().message(), "f.yml:1: a key must be a plain name, not a list or mapping");
}

TEST(YamlMap, EveryReaderRefusesBothShapes) {
  TempDir d;
  const std::string model = "layers: 2\nhidden: 64\nheads: 4\nvocab: 128\nseq_len: 32\n";
  const std::string dlrm =
      "kind: dlrm\nembedding_dim: 8\ndense_features: 4\ntables: [100]\n"
      "bottom_mlp: [16, 8]\ntop_mlp: [4, 1]\n";
  const std::string sweep_base = "base:\n  network: \"Ring(4,100GB/s,500ns)\"\n  system: sys.json\n  workload: t\n";
  struct Case {
    std::string file, text, message;
  };
  const std::vector<Case> cases = {
      {"m.yml", model + "hidden: 32\n", "m.yml:6: key 'hidden' is given twice (first on line 2)"},
      {"m.yml", model + "? [a]\n: 1\n", "m.yml:6: a key must be a plain name"},
      {"d.yml", dlrm + "embedding_dim: 4\n", "d.yml:7: key 'embedding_dim' is given twice (first on line 2)"},
      {"d.yml", "kind: dlrm\ntables: {count: 2, count: 3}\n", "d.yml:2: tables: key 'count' is given twice"},
      {"s.yml", sweep_base + "axes:\n  network.dim0.npus: [4]\n  network.dim0.npus: [8]\n",
       "s.yml:7: axes: key 'network.dim0.npus' is given twice (first on line 6)"},
      {"s.yml", sweep_base + "  system: other.json\naxes:\n  network.dim0.npus: [4]\n",
       "s.yml:5: base: key 'system' is given twice (first on line 3)"},
      {"s.yml", sweep_base + "points:\n  - {network.dim0.npus: 4, network.dim0.npus: 8}\n",
       "s.yml:6: points: key 'network.dim0.npus' is given twice"},
      {"s.yml", sweep_base + "? [x]\n: 1\n", "s.yml:5: a key must be a plain name"},
  };
  for (const Case& c : cases) {
    d.Write(c.file, c.text);
    const std::string path = d.File(c.file);
    const Status st = c.file == "s.yml" ? sweep::ReadSweepSpec(path).status() : gen::LoadModel(path).status();
    ASSERT_FALSE(st.ok()) << c.text;
    EXPECT_NE(st.message().find(c.message), std::string::npos) << c.text << "\n" << st.message();
  }
  d.Write("dev.yml", "base: a100\n[sms]: 3\n");
  auto dev = gen::FindDevice(d.File("dev.yml"));
  ASSERT_FALSE(dev.ok());
  EXPECT_NE(dev.status().message().find("dev.yml:2: a key must be a plain name"), std::string::npos)
      << dev.status().message();
}

}  // namespace
}  // namespace orrery
