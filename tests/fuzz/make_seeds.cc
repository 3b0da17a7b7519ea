// Writes the generated part of the seed corpora (tests/fuzz/corpus): real
// frames, handshake transcripts and requests, built with the same protobuf
// messages and encoders the product uses. Run by hand when a message
// changes:
//   build-fuzz/tests/fuzz/fuzz_make_seeds tests/fuzz/corpus
// The cluster-file and scenario seeds are copies of the repository's own
// files (docs/reliability.md, "Fuzzing", lists them).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/auth.h"
#include "common/config.h"
#include "common/frame.h"
#include "proto/cluster.pb.h"
#include "proto/dfs.pb.h"
#include "proto/job.pb.h"
#include "tests/fuzz/rpc_driver.h"

namespace mr::fuzz {
namespace {

namespace fs = std::filesystem;
std::string g_root;

void Write(const std::string& harness, const std::string& name, const std::string& bytes) {
  fs::create_directories(g_root + "/" + harness);
  std::ofstream(g_root + "/" + harness + "/" + name, std::ios::binary) << bytes;
}

std::string Frame(const std::string& method, const google::protobuf::MessageLite& body,
                  const std::string& data = "", int32_t status = 0) {
  pb::Frame f;
  f.set_method(method);
  f.set_status_code(status);
  if (status != 0) f.set_status_message("not found");
  body.SerializeToString(f.mutable_body());
  return EncodeFrame(f, data);
}

std::string S(const google::protobuf::MessageLite& m) { return m.SerializeAsString(); }

void FrameSeeds() {
  pb::LocateRequest stat;
  stat.set_path("/data/t.txt");
  stat.set_reader_node("w1");
  Write("fuzz_frame", "request", Frame("dfs.Stat", stat));
  pb::DataChunk chunk;
  chunk.set_offset(65536);
  chunk.add_checksums(0x0123456789abcdefULL);
  chunk.set_last(true);
  Write("fuzz_frame", "chunk-with-data", Frame("", chunk, std::string(300, 'x')));
  Write("fuzz_frame", "error-reply", Frame("", pb::Empty(), "", 1));
  Write("fuzz_frame", "two-frames", Frame("dfs.Stat", stat) + Frame("", chunk, "abc"));
  Write("fuzz_frame", "partial", Frame("dfs.Stat", stat).substr(0, 11));
}

void HandshakeSeeds() {
  pb::Hello hello;
  hello.set_protocol_version(kProtocolVersion);
  hello.set_server_nonce(std::string(kNonceBytes, 'n'));
  pb::AuthProof proof;
  proof.set_client_nonce(std::string(kNonceBytes, 'c'));
  proof.set_client_mac(std::string(32, 'm'));
  proof.set_peer_name("mrctl");
  pb::AuthOk ok;
  ok.set_server_mac(std::string(32, 's'));
  // Mode byte: bit 0 = client side under test, bit 1 = repair.
  Write("fuzz_handshake", "server-proof", std::string(1, '\0') + Frame("", proof));
  Write("fuzz_handshake", "server-proof-repaired", "\x02" + Frame("", proof));
  Write("fuzz_handshake", "client-hello-ok", "\x01" + Frame("", hello) + Frame("", ok));
  Write("fuzz_handshake", "client-hello-repaired", "\x03" + Frame("", hello));
  Write("fuzz_handshake", "client-error", "\x01" + Frame("", pb::Empty(), "", 8));
}

// Record byte 0 indexes master_rpc_fuzzer.cc's table.
enum MasterMethod : uint8_t {
  kRegister, kHeartbeat, kStatus, kMkdir, kList, kStat, kDelete, kRename, kCreate, kAddBlock,
  kCompleteBlock, kCompleteFile, kAbandonFile, kBadReplica, kSubmit, kShow, kJobList, kKill,
  kHistory, kMapOutputs, kFetchFailed, kBlockReport,
};
constexpr uint8_t kRepair = 0x40;

std::string Register(const std::string& id, const std::string& dc, int port, bool continues = false) {
  pb::RegisterRequest r;
  r.mutable_worker()->set_id(id);
  r.mutable_worker()->set_address("127.0.0.1:" + std::to_string(port));
  r.mutable_worker()->set_datacenter(dc);
  r.mutable_worker()->set_map_slots(2);
  r.mutable_worker()->set_reduce_slots(1);
  // master_rpc_fuzzer.cc's MakeConfig: the settings a worker must share.
  const ClusterConfig defaults;
  pb::SharedSettings* s = r.mutable_settings();
  s->set_cluster_name("fuzz");
  s->set_block_size(defaults.dfs.block_size);
  s->set_transfer_chunk_bytes(defaults.dfs.transfer_chunk_bytes);
  s->set_max_frame_bytes(defaults.cluster.max_frame_bytes);
  s->set_heartbeat_interval_ms(defaults.cluster.heartbeat_interval_ms);
  s->set_rpc_timeout_ms(5000);
  pb::BlockRef* b = r.add_blocks();
  b->set_id(7);
  b->set_bytes(100);
  r.set_report_continues(continues);
  return EncodeRecord(kRegister, 0, S(r));
}

void MasterSeeds() {
  const std::string pre(1, '\0'), post = "\x01";
  pb::AuthProof proof;
  proof.set_client_nonce(std::string(kNonceBytes, 'c'));
  proof.set_client_mac(std::string(32, 'm'));
  Write("fuzz_master_rpc", "preauth-proof", pre + Frame("", proof));
  pb::PathRequest mkdir_root;
  mkdir_root.set_path("/in");
  Write("fuzz_master_rpc", "preauth-request", pre + Frame("dfs.Mkdir", mkdir_root));

  const std::string registered = Register("w1", "dc1", 7001) + Register("w2", "dc1", 7002) +
                                 Register("w3", "dc2", 7003);
  pb::HeartbeatRequest beat;
  beat.set_worker_id("w1");
  beat.set_free_map_slots(2);
  beat.set_free_reduce_slots(1);
  beat.add_received()->set_id(7);
  beat.add_removed(8);
  pb::TaskReport* task = beat.add_tasks();
  task->set_job_id(1);
  task->set_is_map(true);
  task->set_state(pb::TaskReport::SUCCEEDED);
  Write("fuzz_master_rpc", "register-heartbeat",
        post + registered + EncodeRecord(kHeartbeat, 0, S(beat)) + EncodeRecord(kStatus, 0, ""));

  // A report in parts (dfs/block_report.h): a middle part, the last, and
  // one too many.
  pb::BlockReportRequest part;
  part.set_worker_id("w3");
  part.add_blocks()->set_id(9);
  part.add_quarantined_blocks()->set_id(10);
  const std::string middle = EncodeRecord(kBlockReport, 0, S(part));
  part.set_last(true);
  const std::string last = EncodeRecord(kBlockReport, 0, S(part));
  Write("fuzz_master_rpc", "register-report-parts",
        post + Register("w3", "dc2", 7003, /*continues=*/true) + middle + last + last +
            EncodeRecord(kStatus, 0, ""));

  pb::PathRequest mkdir;
  mkdir.set_path("/in/sub");
  mkdir.set_recursive(true);
  pb::CreateFileRequest create;
  create.set_path("/in/sub/f.txt");
  create.set_replication(2);
  create.set_writer_node("w1");
  create.set_overwrite(true);
  create.set_first_bytes("the quick brown fox\n");
  pb::AddBlockRequest add;
  add.add_exclude_nodes("w3");
  pb::CompleteBlockRequest complete_block;
  complete_block.set_bytes(20);
  complete_block.add_replicas("w1");
  complete_block.add_replicas("w2");
  pb::CompleteFileRequest complete_file;
  pb::LocateRequest stat;
  stat.set_path("/in/sub/f.txt");
  stat.set_reader_node("w2");
  pb::PathRequest list;
  list.set_path("/in");
  pb::RenameRequest rename;
  rename.set_from("/in/sub");
  rename.set_to("/moved/sub");
  pb::PathRequest del;
  del.set_path("/moved");
  del.set_recursive(true);
  pb::BadReplicaRequest bad;
  bad.set_node_id("w1");
  bad.set_reason("checksum");
  Write("fuzz_master_rpc", "dfs-write-file",
        post + registered + EncodeRecord(kMkdir, 0, S(mkdir)) + EncodeRecord(kCreate, 0, S(create)) +
            EncodeRecord(kAddBlock, kRepair, S(add)) +
            EncodeRecord(kCompleteBlock, kRepair, S(complete_block)) +
            EncodeRecord(kCompleteFile, kRepair, S(complete_file)) +
            EncodeRecord(kStat, 0, S(stat)) + EncodeRecord(kList, 0, S(list)) +
            EncodeRecord(kBadReplica, kRepair, S(bad)));
  Write("fuzz_master_rpc", "dfs-rename-delete",
        post + EncodeRecord(kMkdir, 0, S(mkdir)) + EncodeRecord(kRename, 0, S(rename)) +
            EncodeRecord(kList, 0, S(list)) + EncodeRecord(kDelete, 0, S(del)));
  pb::AbandonFileRequest abandon;
  Write("fuzz_master_rpc", "dfs-abandon",
        post + EncodeRecord(kCreate, 0, S(create)) + EncodeRecord(kAddBlock, kRepair, S(add)) +
            EncodeRecord(kAbandonFile, kRepair, S(abandon)));

  pb::JobSpec spec;
  spec.set_job("wordcount");
  spec.add_inputs("/in/sub/f.txt");
  spec.set_output("/out/wc");
  spec.set_reducers(2);
  spec.set_user("fuzz");
  pb::JobIdRequest id;
  pb::MapOutputsRequest outputs;
  outputs.set_reduce_index(1);
  pb::FetchFailedRequest failed;
  failed.set_map_index(0);
  failed.set_reduce_index(1);
  failed.set_reason("connection refused");
  Write("fuzz_master_rpc", "job-life",
        post + registered + EncodeRecord(kMkdir, 0, S(mkdir)) + EncodeRecord(kCreate, 0, S(create)) +
            EncodeRecord(kAddBlock, kRepair, S(add)) +
            EncodeRecord(kCompleteBlock, kRepair, S(complete_block)) +
            EncodeRecord(kCompleteFile, kRepair, S(complete_file)) +
            EncodeRecord(kSubmit, 0, S(spec)) + EncodeRecord(kHeartbeat, 0, S(beat)) +
            EncodeRecord(kShow, kRepair, S(id)) + EncodeRecord(kMapOutputs, kRepair, S(outputs)) +
            EncodeRecord(kFetchFailed, kRepair, S(failed)) + EncodeRecord(kJobList, 0, "") +
            EncodeRecord(kKill, kRepair, S(id)) + EncodeRecord(kHistory, 0, ""));
  Write("fuzz_master_rpc", "unknown-and-reply-shaped",
        post + EncodeRecord(200, 0, "") + EncodeRecord(201, 0x83, "x") + EncodeRecord(kStatus, 0, ""));
}

enum WorkerMethod : uint8_t { kReadBlock, kWriteBlock, kFetch };
constexpr uint8_t kStream = 254;  // past the table and even: a frame without a method

void WorkerSeeds() {
  const std::string pre(1, '\0'), post = "\x01";
  pb::AuthProof proof;
  proof.set_client_nonce(std::string(kNonceBytes, 'c'));
  proof.set_client_mac(std::string(32, 'm'));
  Write("fuzz_worker_rpc", "preauth-proof", pre + Frame("", proof));
  pb::ReadBlockRequest read;
  read.set_block_id(2);
  read.set_length(-1);
  Write("fuzz_worker_rpc", "preauth-request", pre + Frame("dn.ReadBlock", read));
  pb::ReadBlockRequest tail;
  tail.set_block_id(2);
  tail.set_offset(65536);
  tail.set_length(100);
  pb::ReadBlockRequest empty;
  empty.set_block_id(3);
  Write("fuzz_worker_rpc", "read-blocks",
        post + EncodeRecord(kReadBlock, 0, S(read)) + EncodeRecord(kReadBlock, 0, S(tail)) +
            EncodeRecord(kReadBlock, 0, S(empty)));

  pb::WriteBlockRequest write;
  write.set_block_id(100);
  write.set_client("fuzz");
  pb::DataChunk first;
  first.set_offset(0);
  pb::DataChunk last;
  last.set_offset(0);
  last.set_last(true);
  Write("fuzz_worker_rpc", "write-block",
        post + EncodeRecord(kWriteBlock, 0, S(write)) +
            EncodeRecord(kStream, kRepair, S(last), std::string(1000, 'w')));
  pb::WriteBlockRequest piped = write;
  piped.set_block_id(101);
  pb::ReplicaLocation* next = piped.add_downstream();
  next->set_node_id("w1");
  next->set_address("127.0.0.1:7002");  // even port: the harness points it at the worker itself
  next->set_datacenter("dc1");
  pb::ReplicaLocation* dead = piped.add_downstream();
  dead->set_node_id("w9");
  dead->set_address("127.0.0.1:7003");  // odd: the closed 127.0.0.1:1
  Write("fuzz_worker_rpc", "write-pipeline",
        post + EncodeRecord(kWriteBlock, 0, S(piped)) +
            EncodeRecord(kStream, kRepair, S(last), std::string(700, 'p')));
  Write("fuzz_worker_rpc", "write-bad-chunk",
        post + EncodeRecord(kWriteBlock, 0, S(write)) +
            EncodeRecord(kStream, 0, S(first), std::string(10, 'b')));
  pb::FetchRequest fetch;
  fetch.set_job_id(1);
  fetch.set_partition(0);
  Write("fuzz_worker_rpc", "shuffle-fetch",
        post + EncodeRecord(kFetch, 0, S(fetch)) + EncodeRecord(9, 0, ""));
}

}  // namespace
}  // namespace mr::fuzz

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_make_seeds CORPUS_DIR\n");
    return 2;
  }
  mr::fuzz::g_root = argv[1];
  mr::fuzz::FrameSeeds();
  mr::fuzz::HandshakeSeeds();
  mr::fuzz::MasterSeeds();
  mr::fuzz::WorkerSeeds();
  return 0;
}
