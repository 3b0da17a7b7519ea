#include "common/job_counters.h"

#include <map>
#include <string>
#include <utility>

#include "common/counter_names.h"

namespace mr::master {
namespace {

using Sums = std::map<std::pair<std::string, std::string>, int64_t>;

int64_t Total(const pb::Traffic& t) { return t.local() + t.same_dc() + t.other_dc(); }

void AddAll(const CounterList& counters, Sums* sums) {
  for (const pb::Counter& c : counters) (*sums)[{c.group(), c.name()}] += c.value();
}

CounterList ToList(const Sums& sums) {
  CounterList out;
  for (const auto& [key, value] : sums) {
    pb::Counter* c = out.Add();
    c->set_group(key.first);
    c->set_name(key.second);
    c->set_value(value);
  }
  return out;
}

}  // namespace

CounterList TaskCounters(const pb::TaskReport& r, bool map_only) {
  Sums sums;
  auto set = [&sums](const char* name, int64_t value) { sums[{jobs::kFrameworkGroup, name}] = value; };
  if (r.is_map()) {
    set(jobs::kMapInputRecords, r.records_in());
    set(jobs::kMapInputBytes, r.bytes_read());
    set(jobs::kMapOutputRecords, r.records_out());
    set(jobs::kMapOutputBytes, r.raw_output_bytes());
    set(jobs::kDfsBytesRead, Total(r.input()));
    if (map_only) set(jobs::kDfsBytesWritten, r.output_bytes());
  } else {
    set(jobs::kShuffleBytesLocal, r.shuffle().local());
    set(jobs::kShuffleBytesDatacenter, r.shuffle().same_dc());
    set(jobs::kShuffleBytesCrossDc, r.shuffle().other_dc());
    set(jobs::kReduceInputRecords, r.records_in());
    set(jobs::kReduceOutputRecords, r.output_records());
    set(jobs::kDfsBytesWritten, r.output_bytes());
  }
  AddAll(r.counters(), &sums);
  return ToList(sums);
}

void SumCounters(pb::JobRecord* record) { SumCounters(*record, record); }

void SumCounters(const pb::JobRecord& tasks, pb::JobRecord* record) {
  Sums sums;
  for (const pb::MapTaskRecord& m : tasks.maps()) AddAll(m.counters(), &sums);
  for (const pb::ReduceTaskRecord& t : tasks.reduces()) AddAll(t.counters(), &sums);
  // Tasks that each name other counters could make a job's list long.
  size_t user = 0;
  int64_t dropped = 0;
  for (auto it = sums.begin(); it != sums.end();) {
    if (it->first.first == jobs::kFrameworkGroup || ++user <= kMaxJobUserCounters) {
      ++it;
    } else {
      ++dropped;
      it = sums.erase(it);
    }
  }
  if (dropped > 0) sums[{jobs::kFrameworkGroup, jobs::kUserCountersDropped}] += dropped;
  *record->mutable_counters() = ToList(sums);
}

std::string NonZeroCounters(const CounterList& counters) {
  std::string line;
  for (const pb::Counter& c : counters) {
    if (c.value() == 0) continue;
    if (!line.empty()) line += ' ';
    if (c.group() != jobs::kFrameworkGroup) line += c.group() + ".";
    line += c.name() + "=" + std::to_string(c.value());
  }
  return line;
}

int64_t CounterValue(const CounterList& counters, std::string_view group, std::string_view name) {
  for (const pb::Counter& c : counters) {
    if (c.group() == group && c.name() == name) return c.value();
  }
  return 0;
}

}  // namespace mr::master
