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

// A string field that is not UTF-8 (protobuf writes it, and refuses to read it back): the
// message says that this is one of the two reasons.
TEST(EtIo, ANodeProtobufRefusesSaysWhy) {
  testing::TempDir d;
  ChakraProtoMsg::GlobalMetadata md;
  md.set_version("0.0.4");
  EtWriter w;
  ASSERT_TRUE(w.Open(d.File("t.et"), md).ok());
  ChakraProtoMsg::Node n;
  n.set_id(0);
  n.set_type(ChakraProtoMsg::COMP_NODE);
  n.set_name(std::string("bad \xff\xfe name"));
  ASSERT_TRUE(w.Write(n).ok());
  ASSERT_TRUE(w.Close().ok());
  EtReader r;
  ASSERT_TRUE(r.Open(d.File("t.et")).ok());
  auto more = r.Next(&n);
  ASSERT_FALSE(more.ok());
  EXPECT_NE(more.status().message().find("is not a valid Chakra Node (bytes that are not protobuf wire data, or a "
                                         "string field that is not valid UTF-8)"),
            std::string::npos)
      << more.status().message();
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

namespace orrery {
namespace {

// Where each record starts, by hand: a record is its length as a varint, then its bytes.
uint64_t VarintBytes(uint64_t v) {
  uint64_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

// A cut file is reported at the byte its cut record starts, not where the
// reader's 8 KiB buffer happened to end (the file's end, before).
TEST(EtIo, TruncationNamesTheRecordsExactByte) {
  testing::TempDir d;
  ChakraProtoMsg::GlobalMetadata md;
  md.set_version("0.0.4");
  EtWriter w;
  ASSERT_TRUE(w.Open(d.File("t.et"), md).ok());
  std::vector<uint64_t> starts;
  uint64_t at = VarintBytes(md.ByteSizeLong()) + md.ByteSizeLong();
  for (uint64_t i = 0; i < 3000; ++i) {
    ChakraProtoMsg::Node n;
    n.set_id(i);
    n.set_name("node" + std::to_string(i));
    n.set_type(ChakraProtoMsg::COMP_NODE);
    n.set_duration_micros(i);
    starts.push_back(at);
    at += VarintBytes(n.ByteSizeLong()) + n.ByteSizeLong();
    ASSERT_TRUE(w.Write(n).ok());
  }
  ASSERT_TRUE(w.Close().ok());
  const std::string bytes = testing::ReadFileText(d.File("t.et"));
  ASSERT_EQ(bytes.size(), at);
  for (const size_t k : {size_t{5}, size_t{1500}, size_t{2999}}) {
    const uint64_t cut = starts[k] + 3;  // inside record k
    std::ofstream(d.File("cut.et"), std::ios::binary) << bytes.substr(0, cut);
    EtReader r;
    ASSERT_TRUE(r.Open(d.File("cut.et")).ok());
    ChakraProtoMsg::Node n;
    Result<bool> more = true;
    while (more.ok() && more.value()) more = r.Next(&n);
    ASSERT_FALSE(more.ok());
    EXPECT_NE(more.status().message().find("truncated trace: Node record " + std::to_string(k + 1) + " at byte " +
                                           std::to_string(starts[k]) + " needs "),
              std::string::npos)
        << more.status().message();
    // Skipping to a node type reads the same framing.
    EtReader skip;
    ASSERT_TRUE(skip.Open(d.File("cut.et")).ok());
    const Result<bool> meta = skip.NextOfType(ChakraProtoMsg::METADATA_NODE, &n);
    ASSERT_FALSE(meta.ok());
    EXPECT_NE(meta.status().message().find("at byte " + std::to_string(starts[k]) + " needs "), std::string::npos)
        << meta.status().message();
  }
}

}  // namespace
}  // namespace orrery
