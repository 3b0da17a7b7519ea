#include "bench/master_scale/dfs_load.h"

#include <chrono>
#include <memory>

#include "proto/dfs.pb.h"

namespace mr::bench {

awaitable<Status> WriteMetadataFile(Connection& conn, Fleet* fleet, std::string path,
                                    int blocks, int64_t block_bytes) {
  const std::string client = "master_scale:" + path;
  pb::CreateFileRequest create;
  create.set_path(path);
  create.set_client_id(client);
  create.set_overwrite(true);
  pb::CreateFileReply lease;
  MR_CO_RETURN_IF_ERROR(co_await conn.Call("dfs.Create", create, &lease));
  pb::Empty empty;
  for (int i = 0; i < blocks; ++i) {
    pb::AddBlockRequest add;
    add.set_lease_id(lease.lease_id());
    add.set_path(path);
    add.set_client_id(client);
    pb::AddBlockReply placed;
    MR_CO_RETURN_IF_ERROR(co_await conn.Call("dfs.AddBlock", add, &placed));
    pb::CompleteBlockRequest done;
    done.set_lease_id(lease.lease_id());
    done.set_block_id(placed.block_id());
    done.set_bytes(block_bytes);
    done.set_path(path);
    done.set_client_id(client);
    if (i > 0) done.set_byte_before('\n');
    for (const pb::ReplicaLocation& node : placed.pipeline()) {
      done.add_replicas(node.node_id());
      if (fleet != nullptr) fleet->AddBlock(node.node_id(), placed.block_id(), block_bytes);
    }
    MR_CO_RETURN_IF_ERROR(co_await conn.Call("dfs.CompleteBlock", done, &empty));
  }
  pb::CompleteFileRequest complete;
  complete.set_lease_id(lease.lease_id());
  complete.set_path(path);
  complete.set_client_id(client);
  co_return co_await conn.Call("dfs.CompleteFile", complete, &empty);
}

awaitable<Result<double>> TimeOps(const HostPort& master, const RpcOptions& rpc, int clients,
                                  int64_t count, NamespaceOp op) {
  std::vector<std::unique_ptr<Connection>> conns;
  for (int c = 0; c < clients; ++c) {
    auto conn = co_await Connect(master, rpc);
    if (!conn.ok()) co_return conn.status();
    conns.push_back(std::move(conn).value());
  }
  auto executor = co_await asio::this_coro::executor;
  Status first;
  int running = clients;
  asio::steady_timer all_done(executor, asio::steady_timer::time_point::max());
  const auto start = std::chrono::steady_clock::now();
  for (int c = 0; c < clients; ++c) {
    asio::co_spawn(
        executor,
        [&, c]() -> awaitable<void> {
          for (int64_t i = c; i < count && first.ok(); i += clients) {
            Status s = co_await op(*conns[static_cast<size_t>(c)], i);
            if (!s.ok() && first.ok()) first = s;
          }
          if (--running == 0) all_done.cancel();
        },
        asio::detached);
  }
  co_await all_done.async_wait(asio::as_tuple(asio::use_awaitable));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!first.ok()) co_return first;
  co_return static_cast<double>(count) / seconds;
}

awaitable<Status> CreateEmpty(Connection& conn, std::string path) {
  co_return co_await WriteMetadataFile(conn, nullptr, path, 0, 0);
}

awaitable<Status> Open(Connection& conn, std::string path) {
  pb::LocateRequest req;
  req.set_path(path);
  pb::StatReply reply;
  co_return co_await conn.Call("dfs.Stat", req, &reply);
}

awaitable<Status> Remove(Connection& conn, std::string path) {
  pb::PathRequest req;
  req.set_path(path);
  pb::Empty empty;
  co_return co_await conn.Call("dfs.Delete", req, &empty);
}

}  // namespace mr::bench
