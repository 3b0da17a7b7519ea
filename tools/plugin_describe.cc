#include "tools/plugin_describe.h"

#include <unistd.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "jobs/child_process.h"

namespace mr::tools {
namespace {

std::string MrTaskPath() {
  std::error_code ec;
  const auto dir = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path();
  for (const auto& candidate : {dir / "mr-task", dir.parent_path() / "worker" / "mr-task"}) {
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return "mr-task";  // from PATH
}

std::string Quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

Result<PluginDescription> DescribePlugin(const std::string& so_path) {
  std::string out, err;
  jobs::ChildProcess::Options o;
  o.command = Quote(MrTaskPath()) + " --describe " + Quote(std::filesystem::absolute(so_path).string());
  o.role = "mr-task --describe";
  o.timeout_ms = 30000;
  o.on_line = [&out](std::string_view line) { out.append(line); };
  o.on_stderr = [&err](std::string_view bytes) { err.append(bytes); };
  MR_ASSIGN_OR_RETURN(auto child, jobs::ChildProcess::Start(std::move(o)));
  if (Status s = child->Finish(); !s.ok()) {
    const std::string why = jobs::OneLineTail(err);
    return Status::InvalidArgument(why.empty() ? s.message() : why);
  }
  auto j = nlohmann::json::parse(out, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j["name"].is_string() || !j["params"].is_array()) {
    return Status::Internal("mr-task --describe gave no description of " + so_path);
  }
  PluginDescription d;
  d.name = j["name"];
  d.description = j.value("description", "");
  d.open_params = j.value("open_params", false);
  for (const auto& p : j["params"]) {
    d.params.push_back({p.value("name", ""), p.value("default", ""), p.value("help", "")});
  }
  return d;
}

Status CheckPluginParams(const PluginDescription& plugin, jobs::Params* params) {
  const jobs::JobInfo* host = jobs::FindJob("plugin");
  jobs::JobInfo info;
  info.name = plugin.name;
  info.params = plugin.params;
  info.open_params = plugin.open_params;
  jobs::Params own;
  for (const auto& [k, v] : *params) {
    bool reserved = false;
    for (const jobs::ParamSpec& p : host->params) reserved = reserved || p.name == k;
    if (!reserved) own[k] = v;
  }
  MR_RETURN_IF_ERROR(jobs::ResolveParams(info, own).status());  // "job 'NAME': unknown parameter ..."
  (*params)["plugin_name"] = plugin.name;
  return Status::OK();
}

}  // namespace mr::tools
