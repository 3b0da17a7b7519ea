#include "common/peer_registry.h"

#include <sys/socket.h>

namespace mr {

PeerRegistry& Peers() {
  static PeerRegistry registry;
  return registry;
}

// Under mu_: the owner closes the descriptor only after Unwatch, which takes
// mu_, so `fd` is still this socket's.
bool PeerRegistry::Abandon(Watched& w, const std::string& why) {
  if (!w.abandoned.empty()) return false;
  w.abandoned = why;
  ::shutdown(w.fd, SHUT_RDWR);
  return true;
}

int PeerRegistry::SetDead(std::map<std::string, std::string> dead) {
  std::lock_guard lock(mu_);
  dead_ = std::move(dead);
  int abandoned = 0;
  if (dead_.empty()) return abandoned;
  for (auto& [key, w] : open_) {
    auto it = dead_.find(w.address);
    if (it != dead_.end()) abandoned += Abandon(w, it->second);
  }
  return abandoned;
}

std::string PeerRegistry::DeadReason(const std::string& address) const {
  std::lock_guard lock(mu_);
  auto it = dead_.find(address);
  return it == dead_.end() ? "" : it->second;
}

void PeerRegistry::Watch(const void* key, const std::string& address, int fd) {
  std::lock_guard lock(mu_);
  Watched& w = open_[key];
  w.address = address;
  w.fd = fd;
  w.abandoned.clear();
  if (auto it = dead_.find(address); it != dead_.end()) Abandon(w, it->second);
}

std::string PeerRegistry::Unwatch(const void* key) {
  std::lock_guard lock(mu_);
  auto it = open_.find(key);
  if (it == open_.end()) return "";
  std::string why = std::move(it->second.abandoned);
  open_.erase(it);
  return why;
}

}  // namespace mr
