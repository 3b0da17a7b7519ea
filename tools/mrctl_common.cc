#include "tools/mrctl_common.h"

#include <cstdio>
#include <cstdlib>

#include "common/cli_support.h"

namespace mr::tools {

int Fail(const Status& s, int code) {
  std::fprintf(stderr, "mrctl: %s\n", s.message().empty() ? s.ToString().c_str() : s.message().c_str());
  return code;
}

Status Target::Resolve() {
  const bool remote = !master_flag.empty() && config_flag.empty();
  auto path = remote ? Result<std::string>(Status::NotFound("no cluster file"))
                     : FindClusterFile(config_flag);
  if (path.ok()) {
    auto config = LoadClusterConfig(*path);
    if (!config.ok()) return config.status();
    master = config->master.address;
    // The client's certificate is the one of --tls-name; its peer name says
    // so, since the server checks the two against each other.
    const std::string name = tls_name.empty() ? "mrctl" : tls_name;
    MR_RETURN_IF_ERROR(InitProcessTls(*config, name, datacenter, /*server=*/false,
                                      /*check_own=*/false));
    rpc = RpcOptions::FromConfig(*config, tls_name.empty() ? "mrctl" : "mrctl " + tls_name);
    chunk_bytes = config->dfs.transfer_chunk_bytes;
    inter_dc_zstd_level = config->cluster.inter_dc_zstd_level;
  } else if (master_flag.empty()) {
    return path.status();
  } else {
    // Unset is a mistake (every connection would fail the handshake); set
    // but empty is a cluster without a secret (loopback only).
    const char* secret = std::getenv("MR_SECRET");
    if (secret == nullptr) {
      return Status::InvalidArgument(
          "$MR_SECRET is unset: with --master and no --config mrctl takes the cluster's secret "
          "from it (export MR_SECRET=<the cluster file's secret>, MR_SECRET= for a cluster "
          "without one, or pass --config FILE)");
    }
    rpc.secret = secret;
    rpc.peer_name = "mrctl";
  }
  if (!master_flag.empty()) {
    auto hp = ParseHostPort(master_flag);
    if (!hp.ok()) return hp.status();
    master = *hp;
  }
  return Status::OK();
}

int WithClient(Target& target, std::function<awaitable<Status>(dfs::DfsClient&)> body) {
  if (Status s = target.Resolve(); !s.ok()) return Fail(s, 2);
  // The client (and its sockets) lives inside the coroutine, so it is gone
  // before RunSync's io_context is destroyed.
  Status s = RunSync([&]() -> awaitable<Status> {
    dfs::DfsClient client(target.master, target.rpc, target.chunk_bytes);
    client.set_location({target.node, target.datacenter, target.rack});
    client.set_inter_dc_zstd_level(target.inter_dc_zstd_level);
    co_return co_await body(client);
  });
  return s.ok() ? 0 : Fail(s);
}

awaitable<Status> InferLocation(dfs::DfsClient& client) {
  if (!client.location().datacenter.empty()) co_return Status::OK();
  auto status = co_await client.ClusterStatus();
  if (!status.ok()) co_return status.status();
  if (!client.location().node.empty()) {  // --node alone: that worker's labels
    for (const auto& w : status->workers()) {
      if (w.worker().id() != client.location().node) continue;
      client.set_location({w.worker().id(), w.worker().datacenter(), w.worker().rack()});
      co_return Status::OK();
    }
    co_return Status::InvalidArgument("--node " + client.location().node +
                                      ": no such worker in the cluster");
  }
  const std::string self = client.MasterLocalHost();
  if (self.empty()) co_return Status::OK();
  std::vector<const pb::WorkerInfo*> here;
  for (const auto& w : status->workers()) {
    auto hp = ParseHostPort(w.worker().address());
    if (hp.ok() && hp->host == self) here.push_back(&w.worker());
  }
  if (here.empty()) co_return Status::OK();
  for (const auto* w : here) {
    if (w->datacenter() != here.front()->datacenter()) co_return Status::OK();
  }
  dfs::ClientLocation location;
  location.datacenter = here.front()->datacenter();
  if (here.size() == 1) {
    location.node = here.front()->id();
    location.rack = here.front()->rack();
  }
  client.set_location(std::move(location));
  co_return Status::OK();
}

}  // namespace mr::tools
