// Link rates: how fast this process's block reads from each other
// datacenter have been, and the order that makes among a block's replicas
// in other datacenters (docs/dfs.md, "Where reads come from").
//
// The master lists a block's replicas nearest first: the reader's node, its
// rack, its datacenter, then the other datacenters, which it cannot rank
// (it rotates them by block id). DfsClient::ReadBlock then calls
// OrderByLinkRate, which leaves every replica in the reader's datacenter in
// its place and orders only those in other datacenters: a datacenter never
// measured first (optimistic, so each gets measured once), then the
// measured ones fastest first. After each attempt on a replica in another
// datacenter the client calls LinkRates::RecordRead with the payload bytes
// it got and the transfer's wall time.
//
// The estimate per source datacenter is the median of the last kRateWindow
// samples (not an EWMA): one read slowed by something other than the link
// (concurrent maps sharing it, a busy disk at the source, a connection set
// up on the first read) moves an EWMA by its weight but a median not at
// all, and a real change of the link wins after three reads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "proto/dfs.pb.h"

namespace mr::dfs {

// A read of fewer payload bytes is not a rate sample: at 256 KiB a 1 Gbit/s
// link takes 2 ms, still well above a round trip and the request's own
// cost on this runtime's links, while the usual block (64 MiB) or chunk
// range of a map is far above it. Smaller reads (a map's look at the end of
// the previous block) say more about latency than rate.
inline constexpr int64_t kMinRateSampleBytes = 256 * 1024;
// The estimate is the median of this many latest samples.
inline constexpr size_t kRateWindow = 5;

// Source datacenter -> estimated read throughput from it, bytes per second.
// A datacenter absent from the map was never measured.
using LinkRateEstimates = std::map<std::string, double, std::less<>>;

// Reorders `replicas` (the master's order) for a reader in `reader_dc`.
// Replicas in `reader_dc` keep their places and order. The others are
// ordered among the places they hold: datacenters without an estimate
// first, then by estimate, fastest first; ties (several replicas in one
// datacenter, several unmeasured datacenters, equal estimates) keep the
// master's order. An empty `reader_dc` (the reader does not know where it
// runs) leaves the order as it is. Pure; called by DfsClient::ReadBlock
// for every block it reads.
void OrderByLinkRate(std::string_view reader_dc, const LinkRateEstimates& estimates,
                     std::vector<const pb::ReplicaLocation*>* replicas);

// What a LinkRates knows of one source datacenter (mrctl dfs cat --stats).
struct LinkRateStats {
  std::string datacenter;
  int64_t reads = 0;    // attempts on its replicas, of any size
  int64_t bytes = 0;    // payload bytes they delivered
  int64_t samples = 0;  // reads of at least kMinRateSampleBytes
  double estimate = 0;  // bytes per second; 0 while samples == 0
};

// The per-source-datacenter estimates of one process: an mrctl command's
// client, or a worker, whose map tasks (each with its own DfsClient, on its
// own thread) share one.
//
// Thread-safe: one mutex guards the table; every method takes it for a
// short copy or update and never calls out while holding it.
class LinkRates {
 public:
  // Records one read attempt by a reader in `reader_dc` from a replica in
  // `from`: `bytes` of verified payload in `seconds` of wall time (connect,
  // request, transfer and handing the bytes on). Not recorded at all when
  // `reader_dc` is empty or is `from`'s datacenter (same-datacenter reads
  // are never reordered). A rate sample only when bytes >=
  // kMinRateSampleBytes and seconds > 0. Called by DfsClient::ReadBlock
  // after each attempt on a replica.
  void RecordRead(std::string_view reader_dc, const pb::ReplicaLocation& from, int64_t bytes,
                  double seconds);

  // A copy of the current estimates, for OrderByLinkRate.
  LinkRateEstimates Estimates() const;
  // Every datacenter read from, in name order.
  std::vector<LinkRateStats> Stats() const;

 private:
  struct Link {
    int64_t reads = 0;
    int64_t bytes = 0;
    int64_t samples = 0;
    std::deque<double> window;  // the last kRateWindow samples, bytes per second
  };
  static double Median(const std::deque<double>& window);

  mutable std::mutex mu_;
  std::map<std::string, Link, std::less<>> links_;
};

}  // namespace mr::dfs
