// TLS on RpcServer and Connection (common/tls.h, docs/tls.md): real sockets
// on 127.0.0.1, certificates made by `mrctl cert init|issue`. Each refusal is
// checked on both sides — the client's Status and the server's log line —
// and after each one a good client is still served.
#include "common/tls.h"

#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <memory>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include "common/rpc.h"
#include "proto/dfs.pb.h"
#include "tests/integration/cluster_fixture.h"

namespace mr {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
using testing::BuildDir;
using testing::Quote;
using testing::Shell;

constexpr const char* kSecret = "tls test secret";

class CaptureSink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  std::string All() {
    std::lock_guard lock(mutex_);
    return all_;
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    all_.append(msg.payload.data(), msg.payload.size()).append("\n");
  }
  void flush_() override {}

 private:
  std::string all_;
};

awaitable<Status> Echo(const pb::PathRequest& request, pb::ListReply* reply, ServerCall&) {
  reply->add_entries()->set_name("echo:" + request.path());
  co_return Status::OK();
}

class TlsTest : public ::testing::Test {
 protected:
  // Certificates, all with `mrctl cert`: the cluster CA in ca/ with w1, w2,
  // master and mrctl; another CA in other/ with its own w2; an expired w2 and
  // w1 in expired/; a w1 for another address in elsewhere/.
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("mr-tls-test-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    auto mrctl = [](const std::string& args) {
      auto r = Shell(Quote(BuildDir() + "/tools/mrctl") + " cert " + args);
      ASSERT_EQ(r.exit_code, 0) << args << ": " << r.err;
    };
    const std::string ca = " --dir " + Quote(dir_ + "/ca");
    mrctl("init" + ca);
    for (const char* name : {"w1", "w2", "master"}) {
      mrctl("issue " + std::string(name) + ca + " --address 127.0.0.1");
    }
    mrctl("issue w1" + ca + " --address 127.0.0.9 --out " + Quote(dir_ + "/elsewhere"));
    mrctl("issue w1" + ca + " --address 127.0.0.1 --days -1 --out " + Quote(dir_ + "/expired"));
    mrctl("issue w2" + ca + " --address 127.0.0.1 --days -1 --out " + Quote(dir_ + "/expired"));
    mrctl("init --dir " + Quote(dir_ + "/other"));
    mrctl("issue w2 --dir " + Quote(dir_ + "/other") + " --address 127.0.0.1");
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  void SetUp() override {
    previous_logger_ = spdlog::default_logger();
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("tls_test", log_));
    thread_ = std::thread([this] { io_.run(); });
  }
  void TearDown() override {
    if (server_) old_.push_back(std::move(server_));
    for (auto& server : old_) server->Stop();
    if (!old_.empty()) {
      auto drained = std::make_shared<std::promise<void>>();
      asio::post(io_, [drained] { drained->set_value(); });
      drained->get_future().wait_for(2s);
    }
    work_.reset();
    io_.stop();
    thread_.join();
    old_.clear();
    spdlog::set_default_logger(previous_logger_);
  }

  // A cluster file: the master and w1 in dc1 on 127.0.0.1 (w1 at the test
  // server's port), w2 in dc2 on 127.0.0.2; certificates from `certs`.
  static ClusterConfig Config(const std::string& mode, const std::string& certs, uint16_t port) {
    std::string text = "[cluster]\nsecret = \"" + std::string(kSecret) + "\"\ntls = \"" + mode +
                       "\"\ntls_ca = \"" + dir_ + "/ca/ca.crt\"\ntls_cert = \"" + dir_ + "/" +
                       certs + "/{name}.crt\"\ntls_key = \"" + dir_ + "/" + certs +
                       "/{name}.key\"\n[master]\naddress = \"127.0.0.1:7000\"\ndatacenter = \"dc1\"\n" +
                       "[[worker]]\nid = \"w1\"\naddress = \"127.0.0.1:" + std::to_string(port ? port : 7001) +
                       "\"\ndatacenter = \"dc1\"\n[[worker]]\nid = \"w2\"\naddress = " +
                       "\"127.0.0.2:7002\"\ndatacenter = \"dc2\"\n";
    auto c = ParseClusterConfig(text, "cluster.toml");
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? *c : ClusterConfig{};
  }

  static RpcOptions Options(std::shared_ptr<const TlsPolicy> tls, std::string peer_name) {
    RpcOptions o;
    o.secret = kSecret;
    o.timeout_ms = 3000;
    o.peer_name = std::move(peer_name);
    o.tls = std::move(tls);
    return o;
  }

  static std::shared_ptr<const TlsPolicy> Policy(const std::string& mode, const std::string& certs,
                                                 const std::string& name, const std::string& dc,
                                                 uint16_t port, bool server) {
    auto p = TlsPolicy::Create(Config(mode, certs, port), name, dc, server);
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    return p.ok() ? *p : nullptr;
  }

  // Starts the echo server, as w1 in dc1, with `tls` (nullptr: tls off).
  void StartServer(std::shared_ptr<const TlsPolicy> tls) {
    if (server_) {
      server_->Stop();
      old_.push_back(std::move(server_));  // Stop() posts work that uses it
    }
    server_ = std::make_unique<RpcServer>(io_.get_executor(), Options(tls, "w1"), "w1");
    server_->HandleUnary<pb::PathRequest, pb::ListReply>("test.Echo", Echo);
    ASSERT_TRUE(server_->Listen({"127.0.0.1", 0}).ok());
    server_->Start();
  }
  uint16_t port() const { return server_->port(); }

  // Connects with `options`, calls echo with `bulk` bytes; `encrypted` and
  // `sent` (payload bytes counted by the connection) report what happened.
  Status EchoWith(RpcOptions options, bool* encrypted = nullptr, int64_t* sent = nullptr,
                  size_t bulk = 0, uint16_t to_port = 0) {
    return RunSync([&]() -> awaitable<Status> {
      HostPort address{"127.0.0.1", to_port ? to_port : port()};
      auto conn = co_await Connect(address, options);
      if (!conn.ok()) co_return conn.status();
      pb::PathRequest request;
      request.set_path("/ping");
      std::string data(bulk, 'x');
      MR_CO_RETURN_IF_ERROR(co_await (*conn)->SendRequest("test.Echo", request, data));
      pb::ListReply reply;
      MR_CO_RETURN_IF_ERROR(co_await (*conn)->ReceiveReply(&reply));
      if (reply.entries_size() != 1) co_return Status::Internal("bad echo");
      if (encrypted) *encrypted = (*conn)->encrypted();
      if (sent) *sent = (*conn)->bytes_sent();
      co_return Status::OK();
    });
  }

  // A client that is w2 of dc2 with good certificates: must always get in.
  Status GoodClient() {
    return EchoWith(Options(Policy("all", "ca", "w2", "dc2", port(), false), "worker w2"));
  }

  // Waits (bounded) until the server logged a line containing `needle`.
  bool Logged(const std::string& needle) {
    return testing::WaitFor([&] { return log_->All().find(needle) != std::string::npos; }, 3s);
  }

  static inline std::string dir_;
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_ = asio::make_work_guard(io_);
  std::thread thread_;
  std::unique_ptr<RpcServer> server_;
  std::vector<std::unique_ptr<RpcServer>> old_;
  std::shared_ptr<CaptureSink> log_ = std::make_shared<CaptureSink>();
  std::shared_ptr<spdlog::logger> previous_logger_;
};

TEST_F(TlsTest, AllModeEncryptsAndCountsPayloadBytes) {
  // Mutual TLS with the cluster CA; the bytes a connection counts (INT
  // accounting) are payload, the same as over plaintext.
  StartServer(Policy("all", "ca", "w1", "dc1", 0, true));
  bool encrypted = false;
  int64_t tls_sent = 0;
  auto client = Options(Policy("all", "ca", "w2", "dc2", port(), false), "worker w2");
  Status s = EchoWith(client, &encrypted, &tls_sent, 1 << 20);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(encrypted);
  // The same exchange in plaintext, against a server with tls off.
  const uint16_t tls_port = port();
  StartServer(nullptr);
  ASSERT_NE(port(), tls_port);
  int64_t plain_sent = 0;
  s = EchoWith(Options(nullptr, "worker w2"), &encrypted, &plain_sent, 1 << 20);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_FALSE(encrypted);
  EXPECT_EQ(tls_sent, plain_sent);
  EXPECT_GT(plain_sent, 1 << 20);
}

TEST_F(TlsTest, WritingToAClosedPeerFailsWithoutSigpipe) {
  // OpenSSL's own socket BIO writes with write(): once the peer has closed,
  // that raises SIGPIPE, which ends the process (this test binary too).
  // Connection's writes must fail with a status instead.
  server_ = std::make_unique<RpcServer>(
      io_.get_executor(), Options(Policy("all", "ca", "w1", "dc1", 0, true), "w1"), "w1");
  server_->Handle("test.Drop", [](ServerCall& call) -> awaitable<Status> {
    call.conn.Close();
    call.replied = true;
    co_return Status::OK();
  });
  ASSERT_TRUE(server_->Listen({"127.0.0.1", 0}).ok());
  server_->Start();
  auto options = Options(Policy("all", "ca", "w2", "dc2", port(), false), "worker w2");
  int sent = 0;
  Status s = RunSync([&]() -> awaitable<Status> {
    HostPort address{"127.0.0.1", port()};
    auto conn = co_await Connect(address, options);
    if (!conn.ok()) co_return conn.status();
    pb::PathRequest request;
    request.set_path("/drop");
    const std::string data(256 << 10, 'x');
    // The first writes may still land in the socket buffers; bounded.
    for (; sent < 200; ++sent) {
      MR_CO_RETURN_IF_ERROR(co_await (*conn)->SendRequest("test.Drop", request, data));
    }
    co_return Status::OK();
  });
  EXPECT_TRUE(s.IsUnavailable()) << s.ToString() << " after " << sent << " frames";
}

TEST_F(TlsTest, PlaintextPeerRefusedWhereTlsIsRequired) {
  StartServer(Policy("all", "ca", "w1", "dc1", 0, true));
  Status s = EchoWith(Options(nullptr, "worker w2"));
  EXPECT_TRUE(s.IsPermissionDenied()) << s.ToString();
  EXPECT_NE(s.message().find("TLS required: plaintext from 127.0.0.1 is refused (tls = \"all\")"),
            std::string::npos)
      << s.message();
  EXPECT_TRUE(Logged("TLS required: plaintext from 127.0.0.1 is refused")) << log_->All();
  EXPECT_TRUE(GoodClient().ok());
  EXPECT_EQ(server_->rejected_connections(), 1);
}

TEST_F(TlsTest, CertificateFromAnotherCaRefused) {
  // The client trusts the cluster CA but presents a w2 signed by another CA.
  StartServer(Policy("all", "ca", "w1", "dc1", 0, true));
  auto config = Config("all", "other", port());
  config.cluster.tls_ca = dir_ + "/ca/ca.crt";
  auto policy = TlsPolicy::Create(config, "w2", "dc2", false);
  ASSERT_TRUE(policy.ok()) << policy.status().ToString();
  Status s = EchoWith(Options(*policy, "worker w2"));
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("the server refused this client's certificate '" + dir_ +
                            "/other/w2.crt' (it is not signed by the CA the server trusts"),
            std::string::npos)
      << s.message();
  EXPECT_TRUE(Logged("the client's certificate is refused: unable to get local issuer certificate"))
      << log_->All();
  EXPECT_TRUE(GoodClient().ok());
}

TEST_F(TlsTest, ExpiredCertificateRefusedOnBothEnds) {
  StartServer(Policy("all", "ca", "w1", "dc1", 0, true));
  Status s = EchoWith(Options(Policy("all", "expired", "w2", "dc2", port(), false), "worker w2"));
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("the server refused this client's certificate '" + dir_ +
                            "/expired/w2.crt' (it has expired"),
            std::string::npos)
      << s.message();
  EXPECT_TRUE(Logged("the client's certificate is refused: certificate has expired")) << log_->All();
  EXPECT_TRUE(GoodClient().ok());
}

TEST_F(TlsTest, ServerCertificateCheckedByClient) {
  // An expired server certificate, then one for another address.
  StartServer(Policy("all", "expired", "w1", "dc1", 0, true));
  Status s = GoodClient();
  EXPECT_TRUE(s.IsPermissionDenied()) << s.ToString();
  EXPECT_NE(s.message().find("the server's certificate is refused: certificate has expired"),
            std::string::npos)
      << s.message();
  EXPECT_TRUE(Logged("the client refused this server's certificate '" + dir_ +
                     "/expired/w1.crt' (it has expired"))
      << log_->All();
  StartServer(Policy("all", "elsewhere", "w1", "dc1", 0, true));
  s = GoodClient();
  EXPECT_NE(s.message().find("the server's certificate is refused: IP address mismatch"),
            std::string::npos)
      << s.message();
  EXPECT_TRUE(Logged("the client refused this server's certificate '" + dir_ +
                     "/elsewhere/w1.crt' (e.g. it does not name the address that was dialled"))
      << log_->All();
}

TEST_F(TlsTest, CertificateForAnotherNameRefused) {
  // w2's certificate, and the peer says it is worker w1.
  StartServer(Policy("all", "ca", "w1", "dc1", 0, true));
  Status s = EchoWith(Options(Policy("all", "ca", "w2", "dc2", port(), false), "worker w1"));
  EXPECT_TRUE(s.IsPermissionDenied()) << s.ToString();
  const std::string want =
      "certificate for 'w2' presented by a peer that claims to be 'worker w1' (needs a "
      "certificate for 'w1')";
  EXPECT_NE(s.message().find(want), std::string::npos) << s.message();
  EXPECT_TRUE(Logged(want)) << log_->All();
  EXPECT_TRUE(GoodClient().ok());
}

TEST_F(TlsTest, InterDcPlainWithinADatacenterTlsAcross) {
  StartServer(Policy("inter-dc", "ca", "w1", "dc1", 0, true));
  // w1's own datacenter (a client of dc1 at 127.0.0.1): plaintext.
  bool encrypted = true;
  Status s = EchoWith(Options(Policy("inter-dc", "ca", "w1", "dc1", port(), false), "worker w1 task"),
                      &encrypted);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_FALSE(encrypted);
  // From dc2 (its connections leave from 127.0.0.2): TLS by the client's rule.
  s = EchoWith(Options(Policy("inter-dc", "ca", "w2", "dc2", port(), false), "worker w2"),
               &encrypted);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(encrypted);
  // The server decides from the source address: 127.0.0.1 is dc1's only;
  // 127.0.0.2 is dc2's; 127.0.0.9 is nobody's.
  auto server_view = Policy("inter-dc", "ca", "w1", "dc1", 0, true);
  std::string why;
  EXPECT_TRUE(server_view->PlaintextAllowedFrom("127.0.0.1", &why));
  EXPECT_FALSE(server_view->PlaintextAllowedFrom("127.0.0.2", &why));
  EXPECT_EQ(why, "tls = \"inter-dc\" and 127.0.0.2 is an address of a node outside datacenter dc1");
  EXPECT_FALSE(server_view->PlaintextAllowedFrom("127.0.0.9", &why));
  EXPECT_EQ(why, "tls = \"inter-dc\" and 127.0.0.9 is no node's address in the cluster file or the master's list");
  auto liar = Config("inter-dc", "ca", port());
  liar.workers[1].datacenter = "dc1";  // w2 believes it is in dc1, so wants plaintext
  auto liar_policy = TlsPolicy::Create(liar, "w2", "dc1", false);
  ASSERT_TRUE(liar_policy.ok());
  s = EchoWith(Options(*liar_policy, "worker w2"), &encrypted);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(encrypted);  // the server's greeting required TLS from 127.0.0.2
  EXPECT_EQ(server_->rejected_connections(), 0);
}

// Workers that joined without a [[worker]] entry: until the master's list
// names their datacenter, every link to and from them is encrypted; after
// it, links inside a datacenter are plain, both by the client's rule and by
// the server's. An address claimed by two datacenters stays encrypted.
TEST_F(TlsTest, JoinedNodesLearnedFromTheMasterArePlainWithinADatacenter) {
  auto policy = Policy("inter-dc", "ca", "w1", "dc1", 0, true);
  const HostPort w3{"127.0.0.9", 7003}, w4{"127.0.0.8", 7004};
  std::string why;
  EXPECT_TRUE(policy->ClientWantsTls(w3));
  EXPECT_FALSE(policy->PlaintextAllowedFrom("127.0.0.9", &why));
  policy->LearnNode("127.0.0.9:7003", "dc1");
  policy->LearnNode("127.0.0.8:7004", "dc2");
  EXPECT_FALSE(policy->ClientWantsTls(w3));
  EXPECT_TRUE(policy->ClientWantsTls(w4));
  EXPECT_TRUE(policy->PlaintextAllowedFrom("127.0.0.9", &why));
  EXPECT_FALSE(policy->PlaintextAllowedFrom("127.0.0.8", &why));
  EXPECT_EQ(why, "tls = \"inter-dc\" and 127.0.0.8 is an address of a node outside datacenter dc1");
  // The cluster file wins over the list: w2's entry says dc2.
  policy->LearnNode("127.0.0.2:7002", "dc1");
  EXPECT_TRUE(policy->ClientWantsTls(HostPort{"127.0.0.2", 7002}));
  // A second node in dc2 at w3's IP: that IP is no longer dc1's alone.
  policy->LearnNode("127.0.0.9:7005", "dc2");
  EXPECT_FALSE(policy->PlaintextAllowedFrom("127.0.0.9", &why));
  // Under "all" nothing learned makes a link plain.
  auto all = Policy("all", "ca", "w1", "dc1", 0, true);
  all->LearnNode("127.0.0.9:7003", "dc1");
  EXPECT_TRUE(all->ClientWantsTls(w3));
}

TEST_F(TlsTest, TlsClientToServerWithTlsOff) {
  StartServer(nullptr);
  Status s = GoodClient();
  EXPECT_TRUE(s.IsPermissionDenied()) << s.ToString();
  EXPECT_NE(s.message().find("does not offer TLS (its cluster.tls is \"off\")"), std::string::npos)
      << s.message();
  EXPECT_TRUE(Logged("the client at 127.0.0.1 requires TLS, and cluster.tls is \"off\" here"))
      << log_->All();
  EXPECT_EQ(server_->rejected_connections(), 1);
  EXPECT_TRUE(EchoWith(Options(nullptr, "worker w2")).ok());
}

TEST_F(TlsTest, KeyFileModeAndMissingFilesRefused) {
  const std::string copy = dir_ + "/modes";
  fs::create_directories(copy);
  for (const char* f : {"w1.crt", "w1.key"}) {
    fs::copy_file(dir_ + "/ca/" + f, copy + "/" + f, fs::copy_options::overwrite_existing);
  }
  ::chmod((copy + "/w1.key").c_str(), 0660);
  auto p = TlsPolicy::Create(Config("all", "modes", 1), "w1", "dc1", true);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message(), "cluster.tls_key '" + copy +
                                      "/w1.key' is writable or executable by its group (mode "
                                      "0660); run: chmod g-wx " + copy + "/w1.key");
  ::chmod((copy + "/w1.key").c_str(), 0600);
  EXPECT_TRUE(TlsPolicy::Create(Config("all", "modes", 1), "w1", "dc1", true).ok());
  p = TlsPolicy::Create(Config("all", "modes", 1), "w2", "dc2", true);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("w2.crt': No such file or directory"), std::string::npos)
      << p.status().message();
  // Without paths, a mode other than off says what it needs.
  auto bare = Config("inter-dc", "ca", 1);
  bare.cluster.tls_key.clear();
  p = TlsPolicy::Create(bare, "w1", "dc1", true);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("needs 'cluster.tls_key'"), std::string::npos);
}

TEST_F(TlsTest, OwnCertificateCheckedAtStart) {
  // What a daemon checks before it serves: its certificate names it, is
  // signed by the CA, and has not expired.
  EXPECT_TRUE(Policy("all", "ca", "w1", "dc1", 1, true)->CheckOwnCertificate().ok());
  auto config = Config("all", "ca", 1);
  config.cluster.tls_cert = dir_ + "/ca/w2.crt";
  config.cluster.tls_key = dir_ + "/ca/w2.key";
  auto p = TlsPolicy::Create(config, "w1", "dc1", true);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ((*p)->CheckOwnCertificate().message(),
            "cluster.tls_cert '" + dir_ + "/ca/w2.crt' is not a certificate for 'w1' (issue one "
            "with: mrctl cert issue w1)");
  Status s = Policy("all", "expired", "w1", "dc1", 1, true)->CheckOwnCertificate();
  EXPECT_NE(s.message().find("is refused by the CA in '" + dir_ + "/ca/ca.crt': certificate has expired"),
            std::string::npos)
      << s.message();
  config = Config("all", "other", 1);
  s = TlsPolicy::Create(config, "w2", "dc2", true).value()->CheckOwnCertificate();
  EXPECT_NE(s.message().find("unable to get local issuer certificate"), std::string::npos)
      << s.message();
}

TEST(TlsNames, ClaimedCertName) {
  EXPECT_EQ(ClaimedCertName("master"), "master");
  EXPECT_EQ(ClaimedCertName("worker w1"), "w1");
  EXPECT_EQ(ClaimedCertName("worker w1 task"), "w1");
  EXPECT_EQ(ClaimedCertName("mrctl"), "mrctl");
  EXPECT_EQ(ClaimedCertName("mrctl alice"), "alice");
}

}  // namespace
}  // namespace mr
