// The framing between the worker and mr-task (worker/task_child.h): a
// 4-byte little-endian length, then a serialized protobuf message. Blocking
// reads and writes on pipe descriptors.
#pragma once

#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <string>

#include <google/protobuf/message_lite.h>

#include "common/status.h"

namespace mr::worker {

// mr-task's descriptors for the protocol: it reads ChildTask and ChildData
// on kChildInFd and writes ChildMessage on kChildOutFd; its stdout and
// stderr are the attempt's log.
inline constexpr int kChildInFd = 3;
inline constexpr int kChildOutFd = 4;

// Longest message: a map's read reply carries about a MiB.
inline constexpr uint32_t kMaxChildMessageBytes = 256u << 20;

inline Status WriteAll(int fd, const char* p, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return Status::IOError("the other side of the task pipe is gone");
    p += w, n -= static_cast<size_t>(w);
  }
  return Status::OK();
}

inline Status ReadAll(int fd, char* p, size_t n) {
  while (n > 0) {
    const ssize_t r = ::read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return Status::IOError("the task pipe closed");
    p += r, n -= static_cast<size_t>(r);
  }
  return Status::OK();
}

inline Status WriteMessage(int fd, const google::protobuf::MessageLite& m) {
  std::string buf(4, '\0');
  m.AppendToString(&buf);
  const uint32_t n = static_cast<uint32_t>(buf.size() - 4);
  for (int i = 0; i < 4; ++i) buf[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return WriteAll(fd, buf.data(), buf.size());
}

inline Status ReadMessage(int fd, google::protobuf::MessageLite* m) {
  unsigned char h[4];
  MR_RETURN_IF_ERROR(ReadAll(fd, reinterpret_cast<char*>(h), 4));
  const uint32_t n = h[0] | (h[1] << 8) | (h[2] << 16) | (static_cast<uint32_t>(h[3]) << 24);
  if (n > kMaxChildMessageBytes) return Status::ProtocolError("task pipe message too long");
  std::string buf(n, '\0');
  MR_RETURN_IF_ERROR(ReadAll(fd, buf.data(), n));
  if (!m->ParseFromString(buf)) return Status::ProtocolError("malformed task pipe message");
  return Status::OK();
}

}  // namespace mr::worker
