// The DFS side of bench/master_scale: input files whose blocks the emulated
// fleet "holds" (metadata only: the master places each block, the holders
// report it, no byte is written), and namespace operations timed the way
// HDFS's NNThroughputBenchmark times them (several client threads, each
// with its own connection, issuing one kind of operation over its share of
// the files; ops/s = operations / elapsed wall time of the whole phase).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "bench/master_scale/fleet.h"
#include "common/rpc.h"

namespace mr::bench {

// Writes `path` as a file of `blocks` blocks of `block_bytes`: dfs.Create,
// then per block dfs.AddBlock (the master's placement picks the pipeline)
// and dfs.CompleteBlock naming the pipeline as the replicas, then
// dfs.CompleteFile. Each pipeline node of the fleet holds the block from
// then on.
awaitable<Status> WriteMetadataFile(Connection& conn, Fleet* fleet, std::string path,
                                    int blocks, int64_t block_bytes);

// The coroutines here take their strings by value: they start only when
// awaited, after a caller's temporaries are gone.
//
// One NNThroughputBenchmark-style phase: `clients` connections, operation
// `op(conn, i)` for i in [0, count) split among them. Returns ops/s, or the
// first error.
using NamespaceOp = std::function<awaitable<Status>(Connection&, int64_t)>;
awaitable<Result<double>> TimeOps(const HostPort& master, const RpcOptions& rpc, int clients,
                                  int64_t count, NamespaceOp op);

// The operations NNThroughputBenchmark names "create" (create + complete,
// no block), "open" (the block locations: our dfs.Stat) and "delete".
awaitable<Status> CreateEmpty(Connection& conn, std::string path);
awaitable<Status> Open(Connection& conn, std::string path);
awaitable<Status> Remove(Connection& conn, std::string path);

}  // namespace mr::bench
