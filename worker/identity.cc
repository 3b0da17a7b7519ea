#include "worker/identity.h"

#include <netdb.h>
#include <sys/socket.h>

namespace mr::worker {
namespace {

bool IsWildcard(const std::string& host) { return host == "0.0.0.0" || host == "::"; }

// getaddrinfo, as Connect will resolve the advertised name for every peer.
Status Resolves(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* result = nullptr;
  const int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &result);
  if (result) ::freeaddrinfo(result);
  if (rc != 0) return Status::InvalidArgument(std::string("cannot resolve '") + host + "': " + gai_strerror(rc));
  return Status::OK();
}

Result<HostPort> Address(const std::string& flag, const std::string& text) {
  auto hp = ParseHostPort(text);
  if (!hp.ok()) return Status::InvalidArgument(flag + ": " + hp.status().message());
  return hp;
}

}  // namespace

Result<WorkerOptions> ResolveWorkerIdentity(const ClusterConfig& config, const WorkerFlags& flags,
                                            const std::string& config_name) {
  if (!IsValidWorkerId(flags.id)) {
    return Status::InvalidArgument("--id '" + flags.id +
                                   "' may contain only letters, digits, '-', '_' and '.'");
  }
  WorkerOptions self;
  const WorkerOptions* entry = config.FindWorker(flags.id);
  if (entry) {
    self = *entry;
  } else {
    self.id = flags.id;
    self.data_dir = "./mr-data/" + flags.id;
  }
  if (!flags.datacenter.empty()) self.datacenter = flags.datacenter;
  if (flags.rack_given) self.rack = flags.rack;
  if (!flags.data_dir.empty()) self.data_dir = flags.data_dir;
  if (flags.map_slots >= 0) self.map_slots = flags.map_slots;
  if (flags.reduce_slots >= 0) self.reduce_slots = flags.reduce_slots;
  if (flags.capacity_bytes >= 0) self.capacity_bytes = flags.capacity_bytes;
  if (!flags.bind.empty()) {
    MR_ASSIGN_OR_RETURN(self.bind, Address("--bind", flags.bind));
  }
  if (!flags.advertise.empty()) {
    MR_ASSIGN_OR_RETURN(self.address, Address("--advertise", flags.advertise));
  } else if (self.address.port == 0 && self.bind.port != 0 && !IsWildcard(self.bind.host)) {
    self.address = self.bind;  // listening on one concrete address: advertise it
  }
  if (self.datacenter.empty()) {
    return Status::InvalidArgument("worker '" + flags.id + "' has no [[worker]] entry in " +
                                   config_name + ": give its --datacenter (and --advertise)");
  }
  if (self.address.port == 0) {
    return Status::InvalidArgument("worker '" + flags.id + "' has no address: give --advertise HOST:PORT" +
                                   (entry ? "" : " (it has no [[worker]] entry in " + config_name + ")"));
  }
  if (IsWildcard(self.address.host)) {
    return Status::InvalidArgument("--advertise " + self.address.ToString() +
                                   ": advertise an address others can connect to, not a wildcard "
                                   "(listen on it with --bind)");
  }
  if (self.map_slots < 1) return Status::InvalidArgument("--map-slots must be at least 1");
  if (self.data_dir.empty()) return Status::InvalidArgument("--data-dir must not be empty");
  Status resolves = Resolves(self.address.host);
  if (!resolves.ok()) return resolves.WithContext("--advertise " + self.address.ToString());
  return self;
}

}  // namespace mr::worker
