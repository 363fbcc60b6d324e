// Files read whole are read within a limit: an endless input (/dev/zero, a
// pipe) or a huge file is refused naming the file and the limit, and a FIFO
// nobody writes to is not waited on forever.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <istream>
#include <iterator>
#include <thread>

#include "explore/csv.h"
#include "extern/config_values.h"
#include "extern/json_util.h"
#include "report/compare.h"
#include "tests/test_util.h"
#include "workload/trace_tools.h"

namespace orrery {
namespace {

using orrery::testing::TempDir;

std::string Message(const Status& st) { return st.ok() ? std::string("(ok)") : st.message(); }

// A sparse file of `bytes` (nothing is written): larger than a limit without using the disk.
std::string SparseFile(const TempDir& d, const std::string& name, off_t bytes) {
  const std::string path = d.File(name);
  std::ofstream(path).close();
  EXPECT_EQ(::truncate(path.c_str(), bytes), 0);
  return path;
}

TEST(BoundedRead, EndlessInputStopsAtTheLimit) {
  auto zero = ReadTextFile("/dev/zero", 1 << 20);
  EXPECT_EQ(Message(zero.status()),
            "/dev/zero: more than 1048576 bytes (an endless input?); allowed: at most 1048576 bytes (1 MiB)");
  // The configuration readers' default.
  EXPECT_EQ(Message(ReadJsonFile("/dev/zero").status()),
            "/dev/zero: more than 268435456 bytes (an endless input?); allowed: at most 268435456 bytes (256 MiB)");
}

// A streamed reader stops at the limit too, and its stream says why it ended.
TEST(BoundedRead, StreamedReadStopsAtTheLimit) {
  auto reader = BoundedFileReader::Open("/dev/zero", 1 << 20);
  ASSERT_TRUE(reader.ok());
  BoundedStreamBuf buf(&reader.value());
  std::istream in(&buf);
  std::vector<char> chunk(4096);
  size_t total = 0;
  while (in.read(chunk.data(), static_cast<std::streamsize>(chunk.size())) || in.gcount() > 0) {
    total += static_cast<size_t>(in.gcount());
  }
  EXPECT_LE(total, size_t{1} << 20);
  EXPECT_EQ(Message(buf.status()),
            "/dev/zero: more than 1048576 bytes (an endless input?); allowed: at most 1048576 bytes (1 MiB)");
  // A file within the limit streams whole, with no error.
  TempDir d;
  const std::string path = d.File("small.txt");
  std::ofstream(path) << "hello, world";
  auto small = BoundedFileReader::Open(path, 64);
  ASSERT_TRUE(small.ok());
  BoundedStreamBuf small_buf(&small.value());
  std::istream small_in(&small_buf);
  std::string text((std::istreambuf_iterator<char>(small_in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "hello, world");
  EXPECT_TRUE(small_buf.status().ok());
}

TEST(BoundedRead, JsonLinesReaderBoundsItsLines) {
  TempDir d;
  EXPECT_EQ(Message(TraceFromJson("/dev/zero", d.File("out.et"))),
            "/dev/zero:1: a line longer than 67108864 bytes (an endless input?); allowed: one JSON object per line, as "
            "'orrery trace to-json' writes");
}

TEST(BoundedRead, LargeFileIsRefusedBeforeItIsRead) {
  TempDir d;
  const std::string csv = SparseFile(d, "big.csv", (off_t{256} << 20) + 1);
  EXPECT_EQ(Message(ReadCsv(csv).status()),
            csv + ": 268435457 bytes, too large to read; allowed: at most 268435456 bytes (256 MiB)");
  const std::string report = SparseFile(d, "big.json", (off_t{1} << 30) + 1);
  EXPECT_EQ(
      Message(SummariseReport(report).status()),
      report +
          ": 1073741825 bytes, too large to read; allowed: at most 1073741824 bytes (1024 MiB); expected a report "
          "of 'orrery run --report-format=json'");
}

TEST(BoundedRead, FifoWithoutAWriterIsNotWaitedOnForever) {
  TempDir d;
  const std::string fifo = d.File("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(Message(ReadTextFile(fifo, 1 << 20, 100).status()),
            fifo +
                ": no data for 0.1 s (a pipe or FIFO nobody writes to?); allowed: a file, or a pipe that delivers "
                "its data");
  // A writer that comes later is read to its end.
  std::thread writer([&] { std::ofstream(fifo) << "{\"a\": 1}"; });
  auto text = ReadTextFile(fifo, 1 << 20, 60000);
  writer.join();
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_EQ(text.value(), "{\"a\": 1}");
}

TEST(BoundedRead, JsonUintTakesANonNegativeSignedInteger) {
  // A document built in code (a sweep's system.* values) holds signed integers.
  auto ten = JsonUint("sys.json", nlohmann::json(int64_t{10}), "endpoint-delay", 0, 100);
  ASSERT_TRUE(ten.ok()) << ten.status().message();
  EXPECT_EQ(ten.value(), 10u);
  EXPECT_EQ(Message(JsonUint("sys.json", nlohmann::json(int64_t{-5}), "endpoint-delay", 0, 100).status()),
            "sys.json: endpoint-delay = -5: negative; allowed: an integer >= 0 and <= 100");
  EXPECT_EQ(Message(JsonUint("sys.json", nlohmann::json(int64_t{101}), "endpoint-delay", 0, 100).status()),
            "sys.json: endpoint-delay = 101: out of range; allowed: an integer >= 0 and <= 100");
}

}  // namespace
}  // namespace orrery
