#include "tools/mrctl_counters.h"

#include <string>

#include "common/job_counters.h"

namespace mr::tools {
namespace {

using Counters = google::protobuf::RepeatedPtrField<pb::Counter>;

void PrintTaskLine(std::FILE* out, const char* kind, int index, const std::string& status,
                   const Counters& counters) {
  std::fprintf(out, "    %-6s %4d  %s%s%s\n", kind, index,
               status.empty() ? "" : ("status \"" + status + "\"  ").c_str(), master::NonZeroCounters(counters).c_str(),
               counters.empty() && status.empty() ? "-" : "");
}

}  // namespace

nlohmann::json CountersJson(const Counters& counters) {
  nlohmann::json j = nlohmann::json::object();
  for (const pb::Counter& c : counters) j[c.group()][c.name()] = c.value();
  return j;
}

void PrintCounters(const pb::JobRecord& job, std::FILE* out) {
  if (job.counters().empty()) return;
  std::fprintf(out, "  counters (successful attempts):\n");
  const std::string* group = nullptr;
  for (const pb::Counter& c : job.counters()) {  // sorted by (group, name)
    if (group == nullptr || *group != c.group()) {
      group = &c.group();
      std::fprintf(out, "    %s\n", group->c_str());
    }
    std::fprintf(out, "      %-28s %lld\n", c.name().c_str(), static_cast<long long>(c.value()));
  }
}

void PrintTaskCounters(const pb::JobRecord& job, std::FILE* out) {
  if (job.maps().empty() && job.reduces().empty()) return;
  std::fprintf(out, "  counters per task (status, counters not 0):\n");
  for (const pb::MapTaskRecord& m : job.maps()) PrintTaskLine(out, "map", m.index(), m.status(), m.counters());
  for (const pb::ReduceTaskRecord& t : job.reduces()) {
    PrintTaskLine(out, "reduce", t.index(), t.status(), t.counters());
  }
}

}  // namespace mr::tools
