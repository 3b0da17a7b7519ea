// Task lines and CSV output of mrctl (mrctl_tasks.h).
#include "tools/mrctl_tasks.h"

#include <map>
#include <string>
#include <vector>

#include "common/job_figures.h"
#include "common/job_name.h"

namespace mr::tools {
namespace {

// The phases every task kind can have, in the order they happen.
const std::vector<std::string>& PhaseNames() {
  static const std::vector<std::string> names = {"setup", "read",   "map",    "sort",
                                                 "fetch", "reduce", "write"};
  return names;
}

// Quotes a CSV field when it needs it (RFC 4180).
std::string Csv(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

int64_t Total(const pb::Traffic& t) { return t.local() + t.same_dc() + t.other_dc(); }

// One task, kind-independent.
struct Row {
  const char* kind;
  int index;
  std::string node, locality;
  int64_t in_bytes, out_bytes, start_ms, end_ms, run_ms;
  int attempts;
  const google::protobuf::Map<std::string, int64_t>* phases;
};

std::vector<Row> Rows(const pb::JobRecord& j) {
  std::vector<Row> rows;
  for (const auto& t : j.maps()) {
    rows.push_back({"map", t.index(), t.node(), t.locality(), t.input_bytes(), t.output_bytes(),
                    t.start_ms(), t.end_ms(), t.run_ms(), t.attempts(), &t.phase_ms()});
  }
  for (const auto& t : j.reduces()) {
    rows.push_back({"reduce", t.index(), t.node(), "", Total(t.shuffle()), t.output_bytes(),
                    t.start_ms(), t.end_ms(), t.run_ms(), t.attempts(), &t.phase_ms()});
  }
  return rows;
}

// ms since submission for the CSV, or "" when the task has no timestamp (an
// older record).
std::string Rel(int64_t ms, int64_t submit_ms) { return ms > 0 ? std::to_string(ms - submit_ms) : ""; }

// Seconds from submission to `ms` ("1.25"; negative when the worker's clock
// is behind the master's), or "-" for a task without timestamps.
std::string Seconds(int64_t ms, int64_t submit_ms) {
  if (ms <= 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", static_cast<double>(ms - submit_ms) / 1000.0);
  return buf;
}

}  // namespace

void PrintTasks(const pb::JobRecord& j, std::FILE* out) {
  std::fprintf(out, "  %-6s %4s  %-10s %-14s %12s %12s %9s %9s %3s  %s\n", "task", "#", "node",
               "locality", "in bytes", "out bytes", "start s", "end s", "att", "phases ms");
  for (const Row& r : Rows(j)) {
    std::string phases;
    for (const std::string& p : PhaseNames()) {
      auto it = r.phases->find(p);
      if (it != r.phases->end()) phases += p + "=" + std::to_string(it->second) + " ";
    }
    std::fprintf(out, "  %-6s %4d  %-10s %-14s %12lld %12lld %9s %9s %3d  %s\n", r.kind, r.index,
                 r.node.c_str(), r.locality.empty() ? "-" : r.locality.c_str(),
                 static_cast<long long>(r.in_bytes), static_cast<long long>(r.out_bytes),
                 Seconds(r.start_ms, j.submit_ms()).c_str(), Seconds(r.end_ms, j.submit_ms()).c_str(),
                 r.attempts, phases.c_str());
  }
}

void PrintTasksCsv(const pb::JobRecord& j, std::FILE* out) {
  std::string header = "job_id,kind,index,node,locality,in_bytes,out_bytes,start_ms,end_ms,run_ms,attempts";
  for (const std::string& p : PhaseNames()) header += "," + p + "_ms";
  std::fprintf(out, "%s\n", header.c_str());
  for (const Row& r : Rows(j)) {
    std::string line = std::to_string(j.id()) + "," + r.kind + "," + std::to_string(r.index) + "," +
                       Csv(r.node) + "," + Csv(r.locality) + "," + std::to_string(r.in_bytes) + "," +
                       std::to_string(r.out_bytes) + "," + Rel(r.start_ms, j.submit_ms()) + "," +
                       Rel(r.end_ms, j.submit_ms()) + "," +
                       std::to_string(r.run_ms) + "," + std::to_string(r.attempts);
    for (const std::string& p : PhaseNames()) {
      auto it = r.phases->find(p);
      line += "," + (it == r.phases->end() ? std::string() : std::to_string(it->second));
    }
    std::fprintf(out, "%s\n", line.c_str());
  }
}

void PrintJobsCsv(const pb::JobListReply& jobs, std::FILE* out) {
  std::fprintf(out,
               "id,job,state,policy,maps,reduces,input_bytes,submit_ms,start_ms,end_ms,jtt_ms,"
               "vps_locality_rate,cen_locality_rate,off_cen_rate,reduce_data_locality_rate,"
               "inter_dc_bytes,fp_raw,fp_wire,output\n");
  for (const pb::JobRecord& r : jobs.jobs()) {
    const master::JobFigures f = master::Figures(r);
    std::fprintf(out, "%lld,%s,%s,%s,%d,%d,%lld,%lld,%lld,%lld,%lld,%.4f,%.4f,%.4f,%.4f,%lld,%.4f,%.4f,%s\n",
                 static_cast<long long>(r.id()), Csv(master::ShownJobName(r.spec())).c_str(), Csv(r.state()).c_str(),
                 Csv(r.scheduler()).c_str(), r.maps_total(), r.reduces_total(),
                 static_cast<long long>(r.input_bytes()), static_cast<long long>(r.submit_ms()),
                 static_cast<long long>(r.start_ms()), static_cast<long long>(r.end_ms()),
                 static_cast<long long>(f.jtt_ms), f.vps_locality_rate, f.cen_locality_rate,
                 f.off_cen_rate, f.reduce_data_locality_rate, static_cast<long long>(f.inter_dc_bytes),
                 f.fp_raw, f.fp_wire, Csv(r.spec().output()).c_str());
  }
}

void PrintFpCsv(const pb::HistoryReply& history, std::FILE* out) {
  std::fprintf(out, "job,code_hash,input_type,fp_raw,fp_wire,jobs\n");
  for (const pb::FpRow& row : history.rows()) {
    std::fprintf(out, "%s,%s,%s,%.6f,%.6f,%lld\n", Csv(row.job()).c_str(), Csv(row.code_hash()).c_str(),
                 Csv(row.input_type()).c_str(), row.fp_raw(), row.fp_wire(),
                 static_cast<long long>(row.jobs()));
  }
}

}  // namespace mr::tools
