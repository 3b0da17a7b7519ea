// PeerRegistry: the peers this process must let go of at once.
//
// The master declares a worker dead when it misses its heartbeats, and says
// so to every other worker in its next heartbeat reply
// (HeartbeatReply.dead_members, docs/wire-format.md). A shuffle fetch, a
// block read or a pipeline hop already waiting on that worker would
// otherwise wait out rpc_timeout_ms. So every client connection Connect()
// makes is watched here under the address it dialled, and SetDead() — called
// by the worker's master link (Worker::LearnMembers) — shuts down
// (shutdown(2)) every watched socket to a peer that is newly dead. The
// coroutine waiting on such a socket, on whatever thread's io_context, wakes
// at once; its Connection reports Unavailable with the reason given here,
// and its caller takes the usual recovery path (another replica, a fetch
// failure reported to the master, the pipeline without that hop). Connect()
// refuses a dead peer's address at once until SetDead() no longer lists it
// (the master lists a worker dead until it registers again).
//
// Thread-safe. One per process (Peers()); a process that never calls
// SetDead (the master, mrctl) only pays a mutex per connection opened.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <unordered_map>

namespace mr {

class PeerRegistry {
 public:
  // The dead peers: address ("host:port", HostPort::ToString) → why, a
  // line naming the peer ("worker w3 (127.0.0.1:7003) was declared dead by
  // the master"). Replaces the previous set; every watched socket to an
  // address that is in `dead` is shut down (those already shut down are
  // left alone), and its watcher gets the reason. Returns how many sockets
  // it shut down.
  int SetDead(std::map<std::string, std::string> dead);
  // Why `address` is dead, or "" when it is not.
  std::string DeadReason(const std::string& address) const;

  // Watches the socket `fd` of `key` (a Connection) to `address`. When the
  // address is dead already, shuts the socket down at once. REQUIRES: `key`
  // not watched; Unwatch(key) before `fd` is closed.
  void Watch(const void* key, const std::string& address, int fd);
  // Stops watching `key`. Returns why its socket was shut down, or "" when
  // it was not. No effect (returns "") when `key` is not watched.
  std::string Unwatch(const void* key);

 private:
  struct Watched {
    std::string address;
    int fd = -1;
    std::string abandoned;  // why its socket was shut down; "" while it was not
  };
  // True when it shut the socket down (it was not already).
  static bool Abandon(Watched& w, const std::string& why);

  mutable std::mutex mu_;
  std::map<std::string, std::string> dead_;        // guarded by mu_
  std::unordered_map<const void*, Watched> open_;  // guarded by mu_
};

// The process's registry.
PeerRegistry& Peers();

}  // namespace mr
