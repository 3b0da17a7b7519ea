// Placeholder until the report lands.
#include "sim/report.h"

namespace mr::sim {

Status WriteReport(const std::string& dir) { return Status::Internal("report: not yet written (" + dir + ")"); }

}  // namespace mr::sim
