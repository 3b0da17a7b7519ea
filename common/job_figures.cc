#include "common/job_figures.h"

namespace mr::master {
namespace {

double Ratio(int64_t num, int64_t den) {
  return den > 0 ? static_cast<double>(num) / static_cast<double>(den) : 0.0;
}

}  // namespace

JobFigures Figures(const pb::JobRecord& r) {
  JobFigures f;
  const int64_t maps = r.maps_total();
  f.vps_locality_rate = Ratio(r.maps_node_local(), maps);
  f.cen_locality_rate = Ratio(r.maps_rack_local() + r.maps_dc_local(), maps);
  // Eq. 11 is 1 − (VPS + Cen); counting the off-datacenter maps gives the
  // same number without floating-point residue.
  f.off_cen_rate = Ratio(r.maps_off_dc(), maps);
  const auto& sh = r.shuffle();
  f.reduce_data_locality_rate =
      Ratio(sh.local() + sh.same_dc(), sh.local() + sh.same_dc() + sh.other_dc());
  if (r.has_fp_raw()) {
    f.fp_raw = r.fp_raw();
    f.fp_wire = r.fp_wire();
  } else {
    MapFilteringFigures(r, &f.fp_raw, &f.fp_wire);
  }
  f.inter_dc_bytes = r.map_input().other_dc() + sh.other_dc() + r.output().other_dc() +
                     r.prefetch_inter_dc_bytes() + r.spec().client_inter_dc_bytes() +
                     r.retried().other_dc();
  f.jtt_ms = r.end_ms() > 0 ? r.end_ms() - r.submit_ms() : 0;
  return f;
}

// The job's FP is the average of its maps' FPs (JoSS §4: the FP of a map
// task is its output size over its input size).
void MapFilteringFigures(const pb::JobRecord& r, double* fp_raw, double* fp_wire) {
  *fp_raw = *fp_wire = 0;
  int64_t measured = 0;
  for (const auto& m : r.maps()) {
    if (m.input_bytes() <= 0) continue;
    ++measured;
    *fp_raw += Ratio(m.raw_output_bytes(), m.input_bytes());
    *fp_wire += Ratio(m.output_bytes(), m.input_bytes());
  }
  if (measured > 0) {
    *fp_raw /= static_cast<double>(measured);
    *fp_wire /= static_cast<double>(measured);
  }
}

}  // namespace mr::master
