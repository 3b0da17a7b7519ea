// mr-task: runs one task of a user-code job (a plug-in) for mr-worker, in a
// process of its own (worker/task_child.h). Not for people: it reads a
// ChildTask on descriptor 3 and answers on descriptor 4
// (proto/task_child.proto); its stdout and stderr are the attempt's log.
// Exit status 0 once a result was sent, 2 on a protocol error.
//
// `mr-task --describe PLUGIN.so` loads a plug-in and prints what it is
// (tools/plugin_describe.h): mrctl asks it at submission.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <exception>

#include <string>

#include <nlohmann/json.hpp>

#include "jobs/plugin_loader.h"
#include "proto/task_child.pb.h"
#include "worker/child_pipe.h"
#include "worker/segment_merge.h"
#include "worker/task_runner.h"

namespace mr::worker {
namespace {

Status Send(const pb::ChildMessage& m) { return WriteMessage(kChildOutFd, m); }

// The worker rebuilds an InvalidArgument from its message; any other error
// travels with its code's name.
void Fill(const Status& s, pb::ChildResult* r) {
  r->set_error(s.IsInvalidArgument() ? s.message() : s.ToString());
  r->set_invalid_argument(s.IsInvalidArgument());
}

// The job's counters and status into the result.
void FillCounters(const jobs::CounterSet& counters, pb::ChildResult* r) {
  for (const jobs::Counter& c : counters.Values()) {
    pb::Counter* out = r->add_counters();
    out->set_group(c.group);
    out->set_name(c.name);
    out->set_value(c.value);
  }
  r->set_status(counters.status());
}

pb::ChildResult RunMap(const pb::ChildTask& t) {
  jobs::CounterSet counters;
  MapTaskSpec m;
  m.env.counters = &counters;
  m.job = t.job();
  m.params = jobs::Params(t.params().begin(), t.params().end());
  m.env.files_dir = t.files_dir();
  m.reducers = t.reducers();
  m.file = t.file();
  m.file_length = t.file_length();
  m.split_offset = t.split_offset();
  m.split_length = t.split_length();
  m.byte_before = t.byte_before();
  m.sort_buffer_bytes = t.sort_buffer_bytes();
  m.work_dir = t.work_dir();
  m.progress = [](const std::vector<int64_t>& bytes) {
    pb::ChildMessage msg;
    for (int64_t b : bytes) msg.mutable_progress()->add_partition_bytes(b);
    (void)Send(msg);
  };
  auto read = [](int64_t offset, int64_t n, std::string* out) -> Status {
    pb::ChildMessage msg;
    msg.mutable_read()->set_offset(offset);
    msg.mutable_read()->set_length(n);
    MR_RETURN_IF_ERROR(Send(msg));
    pb::ChildData data;
    MR_RETURN_IF_ERROR(ReadMessage(kChildInFd, &data));
    if (!data.error().empty()) return Status::IOError(data.error());
    *out = std::move(*data.mutable_data());
    return Status::OK();
  };
  pb::ChildResult r;
  auto result = RunMapTask(m, read);
  if (!result.ok()) {
    Fill(result.status(), &r);
    return r;
  }
  r.set_output_path(result->output_path);
  for (const SegmentInfo& s : result->index.segments) {
    pb::ChildSegment* c = r.add_segments();
    c->set_offset(s.offset);
    c->set_compressed_bytes(s.compressed_bytes);
    c->set_raw_bytes(s.raw_bytes);
    c->set_records(s.records);
  }
  r.set_raw_bytes_in(result->index.raw_bytes_in);
  r.set_index_records_in(result->index.records_in);
  r.set_spills(result->index.spills);
  r.set_input_bytes(result->input_bytes);
  r.set_records_in(result->records_in);
  r.set_raw_output_bytes(result->raw_output_bytes);
  r.set_records_out(result->records_out);
  r.set_combine_records_in(result->combine_records_in);
  r.set_combine_records_out(result->combine_records_out);
  r.set_spilled_records(result->spilled_records);
  FillCounters(counters, &r);
  return r;
}

pb::ChildResult RunReduce(const pb::ChildTask& t) {
  pb::ChildResult r;
  jobs::CounterSet counters;
  ReduceTaskSpec spec;
  spec.env.counters = &counters;
  spec.job = t.job();
  spec.params = jobs::Params(t.params().begin(), t.params().end());
  spec.env.files_dir = t.files_dir();
  spec.index = t.index();
  spec.reducers = t.reducers();
  auto inputs = OpenSegmentFiles({t.segments().begin(), t.segments().end()});
  if (!inputs.ok()) {
    Fill(inputs.status(), &r);
    return r;
  }
  const int fd = ::open(t.output().c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    Fill(Status::IOError("cannot create '" + t.output() + "'"), &r);
    return r;
  }
  auto result = RunReduceTask(spec, std::move(inputs).value(), [&](std::string_view chunk) -> Status {
    return WriteAll(fd, chunk.data(), chunk.size());
  });
  ::close(fd);
  if (!result.ok()) {
    Fill(result.status(), &r);
    return r;
  }
  r.set_input_records(result->input_records);
  r.set_input_raw_bytes(result->input_raw_bytes);
  r.set_output_records(result->output_records);
  r.set_output_bytes(result->output_bytes);
  r.set_input_groups(result->input_groups);
  FillCounters(counters, &r);
  return r;
}

}  // namespace
}  // namespace mr::worker

namespace mr::worker {
namespace {

// `mr-task --describe PLUGIN.so`: the plug-in's JobInfo as one JSON object
// {name, description, open_params, params: [{name, default, help}]} on
// stdout; exit 0. One line on stderr and exit 1 when it cannot be loaded.
int Describe(const std::string& path) {
  auto info = jobs::LoadPlugin(path, path.substr(path.rfind('/') + 1));
  if (!info.ok()) {
    std::fprintf(stderr, "%s\n", info.status().message().c_str());
    return 1;
  }
  nlohmann::json params = nlohmann::json::array();
  for (const jobs::ParamSpec& p : (*info)->params) {
    params.push_back({{"name", p.name}, {"default", p.default_value}, {"help", p.help}});
  }
  const nlohmann::json out = {{"name", (*info)->name}, {"description", (*info)->description},
                              {"open_params", (*info)->open_params}, {"params", params}};
  std::printf("%s\n", out.dump().c_str());
  return 0;
}

}  // namespace
}  // namespace mr::worker

int main(int argc, char** argv) {
  using namespace mr::worker;
  if (argc == 3 && std::string(argv[1]) == "--describe") return Describe(argv[2]);
  mr::pb::ChildTask task;
  if (mr::Status s = ReadMessage(kChildInFd, &task); !s.ok()) {
    std::fprintf(stderr, "mr-task: %s (mr-task is started by mr-worker)\n", s.ToString().c_str());
    return 2;
  }
  mr::pb::ChildMessage msg;
  *msg.mutable_result() = task.is_map() ? RunMap(task) : RunReduce(task);
  return Send(msg).ok() ? 0 : 2;
}
