#include <gtest/gtest.h>

#include <fstream>

#include "extern/et_io.h"
#include "gen/toy_traces.h"
#include "tests/test_util.h"
#include "workload/trace_tools.h"

namespace orrery {
namespace {

TEST(EtIo, WriteThenReadGivesTheSameNodes) {
  testing::TempDir d;
  ChakraProtoMsg::GlobalMetadata md;
  md.set_version("0.0.4");
  EtWriter w;
  ASSERT_TRUE(w.Open(d.File("t.et"), md).ok());
  for (uint64_t i = 0; i < 1000; ++i) {
    ChakraProtoMsg::Node n;
    n.set_id(i);
    n.set_type(ChakraProtoMsg::COMP_NODE);
    n.set_duration_micros(i * 3);
    if (i) n.add_data_deps(i - 1);
    ASSERT_TRUE(w.Write(n).ok());
  }
  ASSERT_TRUE(w.Close().ok());
  EtReader r;
  ASSERT_TRUE(r.Open(d.File("t.et")).ok());
  EXPECT_EQ(r.metadata().version(), "0.0.4");
  ChakraProtoMsg::Node n;
  uint64_t count = 0;
  while (true) {
    auto more = r.Next(&n);
    ASSERT_TRUE(more.ok()) << more.status().message();
    if (!more.value()) break;
    EXPECT_EQ(n.id(), count);
    EXPECT_EQ(n.duration_micros(), count * 3);
    ++count;
  }
  EXPECT_EQ(count, 1000u);
}

TEST(EtIo, IntegerAttributesReadFromAnyField) {
  ChakraProtoMsg::AttributeProto a;
  a.set_int32_val(7);
  EXPECT_EQ(AttrUint(a), 7u);
  a.set_uint64_val(1ull << 40);
  EXPECT_EQ(AttrUint(a), 1ull << 40);
  a.set_sfixed64_val(9);
  EXPECT_EQ(AttrUint(a), 9u);
  a.set_string_val("x");
  EXPECT_FALSE(AttrUint(a).has_value());
}

TEST(EtIo, JsonRoundTripIsByteExact) {
  testing::TempDir d;
  DataParallelSpec spec;
  spec.npus = 1;
  spec.layers = 3;
  ASSERT_TRUE(WriteDataParallelTraces(spec, d.File("dp")).ok());
  ASSERT_TRUE(TraceToJson(d.File("dp.0.et"), d.File("dp.jsonl")).ok());
  ASSERT_TRUE(TraceFromJson(d.File("dp.jsonl"), d.File("back.et")).ok());
  auto slurp = [](const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), {});
  };
  EXPECT_EQ(slurp(d.File("dp.0.et")), slurp(d.File("back.et")));
  auto inspect = InspectTrace(d.File("dp.0.et"));
  ASSERT_TRUE(inspect.ok());
  EXPECT_NE(inspect.value().find("COMP_NODE: 6"), std::string::npos) << inspect.value();
  EXPECT_NE(inspect.value().find("ALL_REDUCE: 3"), std::string::npos) << inspect.value();
  EXPECT_NE(inspect.value().find("dependency depth 7"), std::string::npos) << inspect.value();
}

}  // namespace
}  // namespace orrery
