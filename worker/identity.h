// Who a worker is: its id, advertised and bind addresses, datacenter and
// rack labels, slots and data directory (docs/config.md, "Workers joining").
//
// mr-worker takes them from the command line, on top of the worker's
// [[worker]] entry when the cluster file has one for its id; without an
// entry, --datacenter and --advertise (or a --bind with a concrete host)
// are required. So every machine can share one cluster file and differ
// only in flags:
//   mr-worker --config /etc/mr/cluster.toml --id w7 --datacenter dc2 --rack r1
//             --advertise 203.0.113.7:7100 --bind 0.0.0.0:7100 --data-dir /var/lib/mr
//
// Thread-compatible plain data and a pure function (it resolves host names).
#pragma once

#include <cstdint>
#include <string>

#include "common/config.h"
#include "common/status.h"

namespace mr::worker {

// mr-worker's identity flags; empty strings and negative numbers are "not
// given".
struct WorkerFlags {
  std::string id;
  std::string datacenter;
  std::string rack;
  bool rack_given = false;  // --rack "" clears an entry's rack
  std::string advertise;    // host:port others connect to
  std::string bind;         // host:port to listen on; default: the advertised one
  std::string data_dir;
  int map_slots = -1;
  int reduce_slots = -1;
  int64_t capacity_bytes = -1;
};

// The worker's options: its [[worker]] entry (if any) with the flags on
// top. InvalidArgument, one line naming the flag, for: a bad id; no entry
// and no --datacenter or no address; an address that is not host:port or
// [v6]:port; an advertised host that does not resolve, or is a wildcard
// (0.0.0.0, ::). The master checks the rest when the worker registers
// (master/membership.cc): the allow-list, duplicate ids, labels.
Result<WorkerOptions> ResolveWorkerIdentity(const ClusterConfig& config, const WorkerFlags& flags,
                                            const std::string& config_name);

}  // namespace mr::worker
