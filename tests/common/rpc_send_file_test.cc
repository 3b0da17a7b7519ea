// The block server's zero-copy path over real sockets on 127.0.0.1:
// SendFileRange sends a file's bytes as a frame's data, falls back to the
// bytes in memory where sendfile cannot read, and fails (closing the
// connection) past the file's end. The fixture is in rpc_fixture.h.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <future>
#include <string>

#include "common/frame.h"
#include "common/rpc.h"
#include "proto/dfs.pb.h"
#include "tests/common/rpc_fixture.h"

namespace mr {
namespace {

using namespace std::chrono_literals;
using namespace rpc_testing;

// A file of `n` bytes of a pattern with no period that divides a frame,
// removed with the fixture. Returns its path; `bytes` gets its content.
class TempFile {
 public:
  TempFile(size_t n, std::string* bytes) {
    char name[] = "/tmp/rpc_test_file.XXXXXX";
    const int fd = ::mkstemp(name);
    path_ = name;
    bytes->resize(n);
    for (size_t i = 0; i < n; ++i) (*bytes)[i] = static_cast<char>((i * 2654435761u) >> 13);
    if (fd >= 0) {
      EXPECT_EQ(::write(fd, bytes->data(), n), static_cast<ssize_t>(n));
      ::close(fd);
    }
  }
  ~TempFile() { ::unlink(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST_F(RpcTest, SendFileRangeSendsThoseFileBytesAsTheFramesData) {
  // The block server's zero-copy path: a frame whose data the kernel takes
  // from a file. 3 MiB frames fill the socket's buffer, so the sender also
  // waits for room (EAGAIN) before the client reads.
  std::string content;
  TempFile file(8 << 20, &content);
  const int64_t offsets[] = {0, 12345, 5 << 20, 100};
  const size_t lengths[] = {3 << 20, 1, (3 << 20) - 12345, 0};  // the last: no data
  int64_t data_bytes_counted = 0;
  MakeServer().Handle("test.File", [&](ServerCall& call) -> awaitable<Status> {
    call.replied = true;
    const int fd = ::open(file.path().c_str(), O_RDONLY | O_CLOEXEC);
    for (int i = 0; i < 4; ++i) {
      pb::ListReply body;
      body.add_entries()->set_name("piece " + std::to_string(i));
      pb::Frame frame;
      body.SerializeToString(frame.mutable_body());
      const int64_t before = call.conn.bytes_sent();
      Status s = co_await call.conn.SendFileRange(frame, fd, offsets[i], lengths[i]);
      data_bytes_counted += call.conn.bytes_sent() - before - static_cast<int64_t>(kFramePrefixBytes) -
                            static_cast<int64_t>(frame.ByteSizeLong());
      if (!s.ok()) break;
    }
    ::close(fd);
    co_return Status::OK();
  });
  Start();
  Status s = RunSync([&]() -> awaitable<Status> {
    HostPort address = Address();
    RpcOptions options = Options(kSecret);
    options.max_frame_bytes = 4 << 20;
    MR_CO_ASSIGN_OR_RETURN(auto conn, co_await Connect(address, options));
    MR_CO_RETURN_IF_ERROR(co_await conn->SendRequest("test.File", pb::Empty()));
    std::this_thread::sleep_for(100ms);  // let the server fill the socket's buffer
    for (int i = 0; i < 4; ++i) {
      pb::ListReply body;
      std::string data;
      MR_CO_RETURN_IF_ERROR(co_await conn->ReceiveReply(&body, &data));
      if (body.entries_size() != 1 || body.entries(0).name() != "piece " + std::to_string(i)) {
        co_return Status::Internal("frame " + std::to_string(i) + ": " + body.ShortDebugString());
      }
      if (data != content.substr(offsets[i], lengths[i])) {
        co_return Status::Internal("data of frame " + std::to_string(i) + " differs");
      }
    }
    co_return co_await CallEcho(*conn, "/after-file");  // the stream ended cleanly
  });
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(data_bytes_counted, static_cast<int64_t>(lengths[0] + lengths[1] + lengths[2]));
}

TEST_F(RpcTest, SendFileRangeFallsBackToTheBytesInMemoryWhereSendfileCannotRead) {
  // A file system without splice support makes sendfile fail with EINVAL (a
  // directory's descriptor does the same): the frame goes out from the
  // same bytes in memory, when the caller gave them, and fails otherwise.
  const std::string same(200000, 'z');
  std::promise<Status> without;
  MakeServer().Handle("test.File", [&](ServerCall& call) -> awaitable<Status> {
    call.replied = true;
    const int dir = ::open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    pb::Frame frame;
    Status s = co_await call.conn.SendFileRange(frame, dir, 0, same.size(), same);
    if (s.ok()) without.set_value(co_await call.conn.SendFileRange(frame, dir, 0, same.size()));
    ::close(dir);
    co_return s;
  });
  Start();
  std::string data;
  Status s = RunSync([&]() -> awaitable<Status> {
    HostPort address = Address();
    RpcOptions options = Options(kSecret);
    MR_CO_ASSIGN_OR_RETURN(auto conn, co_await Connect(address, options));
    MR_CO_RETURN_IF_ERROR(co_await conn->SendRequest("test.File", pb::Empty()));
    pb::Empty body;
    co_return co_await conn->ReceiveReply(&body, &data);
  });
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(data == same);
  auto result = without.get_future();
  ASSERT_EQ(result.wait_for(2s), std::future_status::ready);
  const Status second = result.get();
  EXPECT_TRUE(second.IsUnavailable()) << second.ToString();
}

TEST_F(RpcTest, SendFileRangePastTheFilesEndFailsAndClosesTheConnection) {
  // The frame's prefix announced bytes the file no longer has (truncated
  // behind the server's back): the sender cannot finish the frame, so it
  // fails and hangs up, and the client sees a closed connection rather
  // than a short frame taken for a whole one.
  std::string content;
  TempFile file(1 << 20, &content);
  std::promise<Status> sent;
  MakeServer().Handle("test.File", [&](ServerCall& call) -> awaitable<Status> {
    call.replied = true;
    const int fd = ::open(file.path().c_str(), O_RDONLY | O_CLOEXEC);
    pb::Frame frame;
    Status s = co_await call.conn.SendFileRange(frame, fd, 1000, 1 << 20);
    ::close(fd);
    sent.set_value(s);
    co_return s;
  });
  Start();
  Status received;
  Status s = RunSync([&]() -> awaitable<Status> {
    HostPort address = Address();
    RpcOptions options = Options(kSecret);
    options.max_frame_bytes = 4 << 20;
    MR_CO_ASSIGN_OR_RETURN(auto conn, co_await Connect(address, options));
    MR_CO_RETURN_IF_ERROR(co_await conn->SendRequest("test.File", pb::Empty()));
    pb::Empty body;
    std::string data;
    received = co_await conn->ReceiveReply(&body, &data);
    co_return Status::OK();
  });
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(received.IsUnavailable()) << received.ToString();
  auto result = sent.get_future();
  ASSERT_EQ(result.wait_for(2s), std::future_status::ready) << "the server's send did not end";
  const Status server_side = result.get();
  EXPECT_NE(server_side.message().find("ended early"), std::string::npos)
      << server_side.ToString();
}

}  // namespace
}  // namespace mr
