// User-facing errors that the other suites do not reach.
#include <gtest/gtest.h>

#include <utility>  // before Boost.Asio under C++20

#include <boost/asio.hpp>
#include <future>
#include <thread>

#include "extern/et_io.h"
#include "gen/toy_traces.h"
#include "plugins/remote/framing.h"
#include "plugins/remote/remote.pb.h"
#include "plugins/remote/remote_backend.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

using testing::TempDir;

TEST(Messages, InvalidFlagValues) {
  std::string err;
  EXPECT_EQ(testing::RunCli("run --example=default --symmetry=sometimes", &err), 2);
  EXPECT_NE(err.find("--symmetry = \"sometimes\": valid: auto, off"), std::string::npos) << err;
  EXPECT_EQ(testing::RunCli("run --example=default --report-format=xml", &err), 2);
  EXPECT_NE(err.find("--report-format = \"xml\": valid: text, json, csv"), std::string::npos) << err;
  EXPECT_EQ(testing::RunCli("run --example=nonesuch", &err), 2);
  EXPECT_NE(err.find("--example = \"nonesuch\": unknown example; valid: default, data-parallel"), std::string::npos)
      << err;
  EXPECT_EQ(testing::RunCli("topology generate \"Ring(4,1GB/s,1ns)\"", &err), 2);
  EXPECT_NE(err.find("topology generate needs --out=PATH.yml"), std::string::npos) << err;
}

TEST(Messages, PeerThatRefusesTheHello) {
  std::promise<std::string> where;
  auto fut = where.get_future();
  std::thread peer([&where] {
    boost::asio::io_context io;
    boost::asio::ip::tcp::acceptor acc(io,
                                       boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
    where.set_value("127.0.0.1:" + std::to_string(acc.local_endpoint().port()));
    boost::asio::ip::tcp::socket s(io);
    acc.accept(s);
    remote::ToPeer in;
    std::string detail;
    remote::ReadFrame(io, s, &in, std::chrono::milliseconds(2000), &detail);
    remote::FromPeer out;
    out.mutable_hello_ack()->set_protocol_version(1);
    out.mutable_hello_ack()->set_error("this peer models tori only");
    remote::WriteFrame(s, out, &detail);
  });
  const std::string endpoint = fut.get();
  TempDir d;
  d.Write("network.yml", testing::NetworkYaml("Ring", 4, 50, 500));
  d.Write("system.json", R"({"preferred-dataset-splits": 1})");
  ASSERT_TRUE(WriteSingleCollectiveTraces(4, CollectiveKind::kAllReduce, 1024, d.File("trace")).ok());
  RunConfig c;
  c.files.workload_prefix = d.File("trace");
  c.files.network = d.File("network.yml");
  c.files.system = d.File("system.json");
  c.run.backend = "remote";
  c.run.backend_params["remote-endpoint"] = endpoint;
  BackendRegistry reg = DefaultBackends();
  RegisterRemoteBackend(&reg);
  auto r = RunSimulation(c, reg);
  peer.join();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("refused: this peer models tori only"), std::string::npos)
      << r.status().message();
}

TEST(Messages, CustomCollectiveWithAForbiddenNode) {
  TempDir d;
  d.Write("network.yml", testing::NetworkYaml("Ring", 2, 50, 500));
  d.Write("system.json", std::string(R"({"preferred-dataset-splits": 1, "all-reduce-implementation-custom": [")") +
                             d.File("algo") + "\"]}");
  ASSERT_TRUE(WriteSingleCollectiveTraces(2, CollectiveKind::kAllReduce, 1024, d.File("trace")).ok());
  ASSERT_TRUE(WriteSingleCollectiveTraces(2, CollectiveKind::kAllReduce, 1024, d.File("algo"))
                  .ok());  // a collective inside: not allowed
  auto r = testing::RunIn(d);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("a custom collective may contain only COMM_SEND, COMM_RECV, COMP, METADATA and "
                                      "INVALID nodes, not COMM_COLL_NODE"),
            std::string::npos)
      << r.status().message();
}

TEST(Messages, RootOutsideTheGroupAndInvolvedDimNotAList) {
  TempDir d;
  d.Write("network.yml", testing::NetworkYaml("Ring", 4, 50, 500));
  d.Write("system.json", R"({"preferred-dataset-splits": 1})");
  d.Write("groups.json", R"({"pair": [0, 1]})");
  testing::WriteTraces(d, 4, [](int r) {
    std::vector<ChakraProtoMsg::Node> nodes;
    if (r < 2) {
      auto n = testing::CollNode(4, 5, 1024);  // BROADCAST
      testing::SetAttr(&n, "root", uint64_t{3});
      testing::SetAttr(&n, "pg_name", std::string("pair"));
      nodes.push_back(n);
    }
    return nodes;
  });
  RunConfig c;
  c.files.workload_prefix = d.File("trace");
  c.files.network = d.File("network.yml");
  c.files.system = d.File("system.json");
  c.files.comm_groups = d.File("groups.json");
  auto r = RunSimulation(c, DefaultBackends());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("node 4 (rank 0): root rank 3 is not a member of the collective's group"),
            std::string::npos)
      << r.status().message();

  TempDir e;
  e.Write("network.yml", testing::NetworkYaml("Ring", 2, 50, 500));
  e.Write("system.json", R"({"preferred-dataset-splits": 1})");
  testing::WriteTraces(e, 2, [](int) {
    auto n = testing::CollNode(2, 0, 1024);
    testing::SetAttr(&n, "involved_dim", std::string("yes"));
    return std::vector<ChakraProtoMsg::Node>{n};
  });
  auto bad = testing::RunIn(e);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("node 2 (rank 0): attribute 'involved_dim' must be a bool list"),
            std::string::npos)
      << bad.status().message();
}

}  // namespace
}  // namespace orrery
