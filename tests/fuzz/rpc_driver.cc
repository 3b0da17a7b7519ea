#include "tests/fuzz/rpc_driver.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "common/auth.h"

namespace mr::fuzz {
namespace {

constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);

uint16_t GetU16(std::string_view& in) {
  if (in.size() < 2) {
    in = {};
    return 0;
  }
  const auto* p = reinterpret_cast<const unsigned char*>(in.data());
  const uint16_t v = static_cast<uint16_t>((p[0] << 8) | p[1]);
  in.remove_prefix(2);
  return v;
}

std::string_view Take(std::string_view& in, size_t n) {
  n = std::min(n, in.size());
  std::string_view out = in.substr(0, n);
  in.remove_prefix(n);
  return out;
}

// Reads frames until the server closes the connection. A deadline means the
// server neither answered nor closed after the client's half-close: a hang.
awaitable<void> ReadUntilClosed(Connection& conn, std::vector<pb::Frame>* frames) {
  for (;;) {
    pb::Frame frame;
    std::string data;
    Status s = co_await conn.Receive(&frame, &data);
    if (s.ok()) {
      frames->push_back(std::move(frame));
      continue;
    }
    if (s.IsTimedOut()) Fail("server neither replied nor closed: " + s.ToString());
    if (s.IsProtocolError()) Fail("server sent a malformed frame: " + s.ToString());
    co_return;  // closed (EOF or reset)
  }
}

void HalfClose(Connection& conn) {
  boost::system::error_code ec;
  conn.socket().shutdown(tcp::socket::shutdown_send, ec);
}

}  // namespace

namespace {
std::vector<std::string>* g_temp_dirs = nullptr;
void RemoveTempDirs() {
  for (const auto& dir : *g_temp_dirs) {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
}
}  // namespace

std::string MakeTempDir(const std::string& prefix) {
  std::error_code ec;
  const std::filesystem::path base = std::filesystem::is_directory("/dev/shm", ec)
                                         ? std::filesystem::path("/dev/shm")
                                         : std::filesystem::temp_directory_path();
  std::string dir = (base / (prefix + "-XXXXXX")).string();
  if (!mkdtemp(dir.data())) Fail("mkdtemp " + dir + " failed");
  if (!g_temp_dirs) {
    g_temp_dirs = new std::vector<std::string>;
    std::atexit(RemoveTempDirs);
  }
  g_temp_dirs->push_back(dir);
  return dir;
}

void Fail(const std::string& why) {
  std::fprintf(stderr, "FUZZ FAILURE: %s\n", why.c_str());
  std::abort();
}

std::vector<FuzzFrame> ParseRecords(std::string_view in, const std::vector<std::string>& methods) {
  std::vector<FuzzFrame> frames;
  while (in.size() >= 2) {
    const auto index = static_cast<uint8_t>(in[0]);
    const auto flags = static_cast<uint8_t>(in[1]);
    in.remove_prefix(2);
    FuzzFrame f;
    if (index < methods.size()) {
      f.method = methods[index];
    } else if (index % 2 == 1) {
      f.method = "no.Such";
    }
    f.flags = flags;
    if (flags & 0x80) f.status_code = flags & 0x7f;
    f.body = std::string(Take(in, GetU16(in)));
    f.data = std::string(Take(in, GetU16(in)));
    frames.push_back(std::move(f));
  }
  return frames;
}

std::string EncodeRecord(uint8_t method_index, uint8_t flags, std::string_view body,
                         std::string_view data) {
  std::string out;
  out.push_back(static_cast<char>(method_index));
  out.push_back(static_cast<char>(flags));
  for (std::string_view part : {body, data}) {
    out.push_back(static_cast<char>(part.size() >> 8));
    out.push_back(static_cast<char>(part.size() & 0xff));
    out.append(part.substr(0, 0xffff));
  }
  return out;
}

Driver::Driver(asio::io_context& io, uint16_t port, int timeout_ms) : io_(io), port_(port) {
  options_.secret = kSecret;
  options_.timeout_ms = timeout_ms;
  options_.peer_name = "fuzzer";
}

void Driver::Run(awaitable<void> task) {
  bool done = false;
  asio::co_spawn(io_, std::move(task), [&](std::exception_ptr e) {
    done = true;
    if (e) Fail("driver coroutine threw");
  });
  while (!done) {
    if (io_.run_one() == 0) io_.restart();
  }
}

std::vector<pb::Frame> Driver::PreAuth(std::string_view bytes) {
  std::vector<pb::Frame> frames;
  std::string input(bytes);
  Run([](Driver* self, std::string input, std::vector<pb::Frame>* frames) -> awaitable<void> {
    tcp::socket socket(co_await asio::this_coro::executor);
    auto [ec] = co_await socket.async_connect(
        {asio::ip::address_v4::loopback(), self->port_}, kTuple);
    if (ec) Fail("cannot connect to the server: " + ec.message());
    Connection conn(std::move(socket), self->options_);
    // The server may close before reading everything: a failed write is fine.
    co_await asio::async_write(conn.socket(), asio::buffer(input), kTuple);
    HalfClose(conn);
    co_await ReadUntilClosed(conn, frames);
  }(this, std::move(input), &frames));
  return frames;
}

std::vector<pb::Frame> Driver::PostAuth(const std::vector<FuzzFrame>& to_send) {
  std::vector<pb::Frame> frames;
  Run([](Driver* self, const std::vector<FuzzFrame>* to_send,
         std::vector<pb::Frame>* frames) -> awaitable<void> {
    const HostPort server{"127.0.0.1", self->port_};
    auto conn = co_await Connect(server, self->options_);
    if (!conn.ok()) Fail("cannot connect and authenticate: " + conn.status().ToString());
    for (const FuzzFrame& f : *to_send) {
      pb::Frame header;
      header.set_method(f.method);
      header.set_status_code(f.status_code);
      header.set_body(f.body);
      // Fails once the server has closed; the rest is not sent.
      Status sent = co_await (*conn)->Send(header, f.data);
      if (!sent.ok()) break;
    }
    if ((*conn)->is_open()) HalfClose(**conn);
    co_await ReadUntilClosed(**conn, frames);
  }(this, &to_send, &frames));
  return frames;
}

std::vector<pb::Frame> Driver::PostAuthLockstep(std::vector<FuzzFrame> to_send,
                                                const Repair& repair) {
  std::vector<pb::Frame> replies;
  Run([](Driver* self, std::vector<FuzzFrame>* to_send, const Repair* repair,
         std::vector<pb::Frame>* replies) -> awaitable<void> {
    const HostPort server{"127.0.0.1", self->port_};
    auto conn = co_await Connect(server, self->options_);
    if (!conn.ok()) Fail("cannot connect and authenticate: " + conn.status().ToString());
    for (FuzzFrame& f : *to_send) {
      (*repair)(f, *replies);
      pb::Frame header;
      header.set_method(f.method);
      header.set_status_code(f.status_code);
      header.set_body(f.body);
      Status sent = co_await (*conn)->Send(header, f.data);
      if (!sent.ok()) break;
      pb::Frame frame;
      std::string data;
      Status got = co_await (*conn)->Receive(&frame, &data);
      if (got.IsTimedOut()) Fail("no reply to " + f.method + ": " + got.ToString());
      if (got.IsProtocolError()) Fail("malformed reply to " + f.method + ": " + got.ToString());
      if (!got.ok()) co_return;  // the server closed the connection
      replies->push_back(std::move(frame));
    }
    if ((*conn)->is_open()) HalfClose(**conn);
    std::vector<pb::Frame> extra;
    co_await ReadUntilClosed(**conn, &extra);
    if (!extra.empty()) Fail(std::to_string(extra.size()) + " frame(s) after the last reply");
  }(this, &to_send, &repair, &replies));
  return replies;
}

void CheckPreAuth(const std::vector<pb::Frame>& frames) {
  if (frames.empty()) Fail("no Hello before authentication");
  pb::Hello hello;
  if (frames[0].status_code() != 0 || !hello.ParseFromString(frames[0].body()) ||
      hello.protocol_version() != kProtocolVersion || hello.server_nonce().size() != kNonceBytes) {
    Fail("the first frame is not a Hello");
  }
  if (frames.size() > 2) Fail("the server sent " + std::to_string(frames.size()) +
                              " frames to an unauthenticated client");
  if (frames.size() == 2 && frames[1].status_code() == 0) {
    Fail("the server sent an OK frame to an unauthenticated client");
  }
}

}  // namespace mr::fuzz
