// The remote backend: identical reports to in-process runs, and a clear error
// (never a hang) when the peer disconnects, talks garbage or goes silent.
#include <gtest/gtest.h>
#include <unistd.h>

#include <utility>  // before Boost.Asio under C++20

#include <boost/asio.hpp>
#include <fstream>
#include <future>
#include <sstream>
#include <thread>

#include "gen/toy_traces.h"
#include "plugins/remote/remote_backend.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

const std::string kConf = std::string(ORRERY_SHARED_DIR) + "/conformance/astra-sim";

BackendRegistry WithRemote() {
  BackendRegistry r = DefaultBackends();
  RegisterRemoteBackend(&r);
  return r;
}

// Starts the reference peer in a thread for `runs` runs; returns its endpoint.
std::string StartPeer(const std::string& listen, int runs, std::thread* t) {
  std::promise<std::string> where;
  auto fut = where.get_future();
  *t = std::thread([listen, runs, w = std::move(where)]() mutable {
    Status st = ServeRemotePeer(listen, runs, [&](const std::string& e) { w.set_value(e); });
    EXPECT_TRUE(st.ok()) << st.message();
  });
  return fut.get();
}

// Every field of the report, text and JSON: only the backend's name and the
// note on the symmetric path (which names the backend) may differ.
void ExpectSameReport(RunReport local, RunReport remote, const std::string& what) {
  EXPECT_EQ(remote.backend, "remote");
  EXPECT_FALSE(remote.symmetric);
  local.backend = remote.backend = "x";
  local.symmetry_note = remote.symmetry_note = "";
  local = orrery::testing::WithoutConfig(local);  // the backend and its parameters differ
  remote = orrery::testing::WithoutConfig(remote);
  EXPECT_EQ(FormatReportText(local), FormatReportText(remote)) << what;
  EXPECT_EQ(FormatReportJson(local), FormatReportJson(remote)) << what;
  EXPECT_EQ(FormatReportCsv(local), FormatReportCsv(remote)) << what;
}

// Every conformance case (memory and custom collectives included), through the reference peer.
TEST(RemoteBackend, SameReportsAsInProcessOnConformanceWorkloads) {
  if (access((kConf + "/expected.tsv").c_str(), R_OK) != 0) GTEST_SKIP() << "no conformance data at " << kConf;
  std::ifstream in(kConf + "/expected.tsv");
  std::string line;
  std::getline(in, line);
  std::vector<std::vector<std::string>> rows;
  while (std::getline(in, line)) {
    std::vector<std::string> c;
    std::stringstream ss(line);
    std::string x;
    while (std::getline(ss, x, '\t')) c.push_back(x);
    rows.push_back(c);
  }
  ASSERT_GT(rows.size(), 40u);
  char cwd[4096];
  ASSERT_NE(getcwd(cwd, sizeof(cwd)), nullptr);
  ASSERT_EQ(chdir(kConf.c_str()), 0);
  std::thread peer;
  const std::string endpoint = StartPeer("127.0.0.1:0", static_cast<int>(rows.size()), &peer);
  for (const auto& r : rows) {
    RunConfig c;
    c.files.workload_prefix = r[2];
    c.files.network = r[3];
    c.files.system = r[4];
    c.files.remote_memory = r[5];
    c.run.backend = r[1];
    c.run.symmetry = SymmetryMode::kOff;  // a remote run simulates every rank; so does this one
    auto local = RunSimulation(c, WithRemote());
    c.run.backend = "remote";
    c.run.backend_params["remote-endpoint"] = endpoint;
    c.run.backend_params["remote-model"] = r[1];
    auto remote = RunSimulation(c, WithRemote());
    ASSERT_TRUE(local.ok() && remote.ok()) << r[0] << ": " << remote.status().message();
    ExpectSameReport(local.value(), remote.value(), r[0]);
    for (const auto& d : remote->dims) {
      if (d.messages > 0) {
        EXPECT_GT(d.busy_ns, 0u) << r[0] << ": busy time travels over the protocol";
      }
    }
  }
  peer.join();
  ASSERT_EQ(chdir(cwd), 0);
}

TEST(RemoteBackend, UnixSocketAndAComputeHeavyWorkload) {
  testing::TempDir d;
  RunConfig c;
  DataParallelSpec spec;
  spec.npus = 16;
  spec.layers = 4;
  spec.allreduce_bytes = 4 << 20;
  ASSERT_TRUE(WriteDataParallelTraces(spec, d.File("trace")).ok());
  d.Write("system.json",
          R"({"preferred-dataset-splits": 4, "local-mem-bw": 1600, "collective-optimization": "localBWAware",
    "all-reduce-implementation": ["ring", "halvingDoubling"]})");
  c.files.workload_prefix = d.File("trace");
  c.files.network = "Ring(4,100GB/s,500ns)_Switch(4,50GB/s,1us)";
  c.files.system = d.File("system.json");
  c.run.backend = "congestion-aware";
  c.observe.link_stats = true;  // the busiest links travel over the protocol too
  auto local = RunSimulation(c, WithRemote());
  ASSERT_TRUE(local.ok()) << local.status().message();
  std::thread peer;
  const std::string endpoint = StartPeer("unix:" + d.File("peer.sock"), 1, &peer);
  c.run.backend = "remote";
  c.run.backend_params["remote-endpoint"] = endpoint;
  c.run.backend_params["remote-model"] = "congestion-aware";
  auto remote = RunSimulation(c, WithRemote());
  peer.join();
  ASSERT_TRUE(remote.ok()) << remote.status().message();
  ExpectSameReport(local.value(), remote.value(), "unix socket");
  EXPECT_GT(remote->dims[0].utilization, 0);
  EXPECT_GT(remote->dims[1].utilization, 0);
  EXPECT_FALSE(remote->links.empty());
}

// A misbehaving peer: accepts one connection and does `behave(socket)`.
std::string BadPeer(std::function<void(boost::asio::ip::tcp::socket&)> behave, std::thread* t) {
  std::promise<std::string> where;
  auto fut = where.get_future();
  *t = std::thread([behave, w = std::move(where)]() mutable {
    boost::asio::io_context io;
    boost::asio::ip::tcp::acceptor acc(io,
                                       boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
    w.set_value("127.0.0.1:" + std::to_string(acc.local_endpoint().port()));
    boost::asio::ip::tcp::socket s(io);
    acc.accept(s);
    behave(s);
  });
  return fut.get();
}

Status RunAgainst(const std::string& endpoint, int timeout_ms) {
  testing::TempDir d;
  d.Write("network.yml", testing::NetworkYaml("Ring", 4, 50, 500));
  d.Write("system.json", R"({"preferred-dataset-splits": 1})");
  EXPECT_TRUE(WriteSingleCollectiveTraces(4, CollectiveKind::kAllReduce, 1 << 20, d.File("trace")).ok());
  RunConfig c;
  c.files.workload_prefix = d.File("trace");
  c.files.network = d.File("network.yml");
  c.files.system = d.File("system.json");
  c.run.backend = "remote";
  c.run.backend_params["remote-endpoint"] = endpoint;
  c.run.backend_params["remote-timeout-ms"] = std::to_string(timeout_ms);
  auto r = RunSimulation(c, WithRemote());
  return r.ok() ? Status::Ok() : r.status();
}

TEST(RemoteBackend, PeerThatDisconnects) {
  std::thread t;
  const std::string ep = BadPeer([](boost::asio::ip::tcp::socket& s) { s.close(); }, &t);
  Status st = RunAgainst(ep, 2000);
  t.join();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("closed the connection instead of answering the hello"), std::string::npos)
      << st.message();
}

TEST(RemoteBackend, PeerThatAnswersGarbage) {
  std::thread t;
  const std::string ep = BadPeer(
      [](boost::asio::ip::tcp::socket& s) {
        char buf[64];
        boost::system::error_code ec;
        s.read_some(boost::asio::buffer(buf), ec);
        const char junk[] = "\x05\x00\x00\x00\xff\xff\xff\xff\xff";
        boost::asio::write(s, boost::asio::buffer(junk, 9), ec);
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
      },
      &t);
  Status st = RunAgainst(ep, 2000);
  t.join();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("answered the hello with bytes that do not parse"), std::string::npos) << st.message();
}

TEST(RemoteBackend, PeerThatGoesSilentTimesOut) {
  std::thread t;
  const std::string ep = BadPeer(
      [](boost::asio::ip::tcp::socket& s) {
        char buf[4096];
        boost::system::error_code ec;
        s.read_some(boost::asio::buffer(buf), ec);
        std::this_thread::sleep_for(std::chrono::milliseconds(800));
      },
      &t);
  const auto start = std::chrono::steady_clock::now();
  Status st = RunAgainst(ep, 300);
  const auto waited = std::chrono::steady_clock::now() - start;
  t.join();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("did not answer the hello within 300 ms"), std::string::npos) << st.message();
  EXPECT_LT(waited, std::chrono::seconds(5));  // bounded, not a hang
}

TEST(RemoteBackend, NoPeerListening) {
  Status st = RunAgainst("127.0.0.1:1", 300);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("cannot connect to 127.0.0.1:1"), std::string::npos) << st.message();
  Status missing = RunAgainst("", 300);
  EXPECT_NE(missing.message().find("needs --remote-endpoint"), std::string::npos) << missing.message();
}

}  // namespace
}  // namespace orrery
