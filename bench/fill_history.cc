// fill_history: copies the newest finished job record of a stopped master's
// history N times under new ids, so the status page can be measured with a
// long history of real records (bench/http_status.sh).
//
//   fill_history <master.data_dir> <N>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "master/job_history.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: fill_history <master.data_dir> <N>\n");
    return 2;
  }
  const int n = std::atoi(argv[2]);
  auto history = mr::master::JobHistory::Open(std::string(argv[1]) + "/history");
  if (!history.ok()) {
    std::fprintf(stderr, "fill_history: %s\n", history.status().ToString().c_str());
    return 1;
  }
  std::vector<mr::pb::JobRecord> jobs = (*history)->List();
  if (jobs.empty() || jobs.back().state() == "running") {
    std::fprintf(stderr, "fill_history: no finished job in the history to copy\n");
    return 1;
  }
  mr::pb::JobRecord record = (*history)->Get(jobs.back().id()).value();  // with its tasks
  for (int i = 0; i < n; ++i) {
    auto id = (*history)->NextJobId();
    if (!id.ok()) return 1;
    record.set_id(*id);
    if (mr::Status s = (*history)->Put(record); !s.ok()) {
      std::fprintf(stderr, "fill_history: %s\n", s.ToString().c_str());
      return 1;
    }
  }
  std::printf("%d copies of job %lld (%d maps, %d reduces)\n", n,
              static_cast<long long>(jobs.back().id()), record.maps_size(), record.reduces_size());
  return 0;
}
