#include "master/job_summary.h"

#include "common/job_counters.h"
#include "common/job_figures.h"
#include "master/job_tracker_internal.h"

namespace mr::master {

void SummarizeFp(const pb::JobRecord& tasks, pb::JobRecord* r) {
  double raw = 0, wire = 0;
  MapFilteringFigures(tasks, &raw, &wire);
  r->set_fp_raw(raw);
  r->set_fp_wire(wire);
}

void SummarizeFp(pb::JobRecord* r) { SummarizeFp(*r, r); }

void Summarize(const pb::JobRecord& tasks, pb::JobRecord* r) {
  r->set_maps_node_local(0);
  r->set_maps_rack_local(0);
  r->set_maps_dc_local(0);
  r->set_maps_off_dc(0);
  r->clear_map_input();
  r->clear_shuffle();
  r->clear_output();
  r->set_raw_output_bytes(0);
  r->set_map_output_bytes(0);
  r->set_output_bytes(0);
  r->clear_tasks_per_worker();
  auto& per_worker = *r->mutable_tasks_per_worker();
  for (const pb::MapTaskRecord& m : tasks.maps()) {
    const std::string& l = m.locality();
    if (l == "node") r->set_maps_node_local(r->maps_node_local() + 1);
    if (l == "rack") r->set_maps_rack_local(r->maps_rack_local() + 1);
    if (l == "datacenter") r->set_maps_dc_local(r->maps_dc_local() + 1);
    if (l == "off_datacenter") r->set_maps_off_dc(r->maps_off_dc() + 1);
    AddTraffic(r->mutable_map_input(), m.input());
    r->set_raw_output_bytes(r->raw_output_bytes() + m.raw_output_bytes());
    r->set_map_output_bytes(r->map_output_bytes() + m.output_bytes());
    ++per_worker[m.node()];
  }
  for (const pb::ReduceTaskRecord& t : tasks.reduces()) {
    AddTraffic(r->mutable_shuffle(), t.shuffle());
    AddTraffic(r->mutable_output(), t.output());
    r->set_output_bytes(r->output_bytes() + t.output_bytes());
    ++per_worker[t.node()];
  }
  if (r->spec().reducers() == 0) {  // map-only: the maps' output is the job's
    for (const pb::MapTaskRecord& m : tasks.maps()) r->set_output_bytes(r->output_bytes() + m.output_bytes());
  }
  SumCounters(tasks, r);
  SummarizeFp(tasks, r);
}

void Summarize(pb::JobRecord* r) { Summarize(*r, r); }

void ClearTaskRecords(pb::JobRecord* r) {
  r->clear_maps();
  r->clear_reduces();
  r->clear_attempt_places();
}

pb::JobRecord ListEntry(const pb::JobRecord& record) {
  pb::JobRecord r = record;
  if (!r.has_fp_raw()) SummarizeFp(&r);  // a record older than the field
  ClearTaskRecords(&r);
  r.clear_running_attempts();
  r.clear_ended_attempts();
  r.clear_counters();
  return r;
}

}  // namespace mr::master
