#include "jobs/local_streaming.h"

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>

#include "jobs/streaming.h"

namespace mr::jobs {

Status ApplyStreamingFlags(const std::string& job, const StreamingFlags& flags, Params* params) {
  if (!flags.any()) return Status::OK();
  const bool commands = !flags.mapper.empty() || !flags.reducer.empty() || !flags.combiner.empty() ||
                        !flags.cmdenv.empty();
  if (job != "streaming" && (commands || job != "plugin")) {
    return Status::InvalidArgument(std::string(commands ? "--mapper, --reducer, --combiner and --cmdenv are"
                                                        : "--file is") +
                                   " for the 'streaming' job, not '" + job + "'");
  }
  if (!flags.mapper.empty()) (*params)["mapper"] = flags.mapper;
  if (!flags.reducer.empty()) (*params)["reducer"] = flags.reducer;
  if (!flags.combiner.empty()) (*params)["combiner"] = flags.combiner;
  if (!flags.cmdenv.empty()) {
    std::string lines;
    for (const std::string& kv : flags.cmdenv) {
      if (kv.find('\n') != std::string::npos) return Status::InvalidArgument("--cmdenv: a value has a newline");
      lines += (lines.empty() ? "" : "\n") + kv;
    }
    MR_RETURN_IF_ERROR(ParseCmdEnv(lines).status());
    (*params)["cmdenv"] = lines;
  }
  if (!flags.files.empty()) {
    MR_ASSIGN_OR_RETURN(std::vector<ShippedFile> files, DescribeLocalFiles(flags.files));
    (*params)["files"] = FormatShippedFiles(files);
  }
  return Status::OK();
}

Status RunLocalWithFiles(std::string job, const std::vector<std::string>& inputs,
                         const std::string& out_dir, StreamingFlags flags,
                         LocalRunOptions options) {
  namespace fs = std::filesystem;
  if (job.ends_with(".so")) {  // a plug-in, run in this process
    flags.files.insert(flags.files.begin(), job);
    options.params["so"] = job.substr(job.rfind('/') + 1);
    job = "plugin";
  }
  MR_RETURN_IF_ERROR(ApplyStreamingFlags(job, flags, &options.params));
  if (flags.files.empty()) return RunLocal(job, inputs, out_dir, options);
  const char* tmp = std::getenv("TMPDIR");
  std::string dir = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/mr-local-files-XXXXXX";
  if (::mkdtemp(dir.data()) == nullptr) return Status::IOError("cannot create a directory for --file");
  Status s;
  for (const std::string& f : flags.files) {
    std::error_code ec;
    const fs::path to = fs::path(dir) / fs::path(f).filename();
    fs::copy_file(f, to, ec);
    if (!ec) fs::permissions(to, fs::status(f, ec).permissions(), ec);
    if (ec) {
      s = Status::IOError("cannot copy --file '" + f + "': " + ec.message());
      break;
    }
  }
  options.env.files_dir = dir;
  if (s.ok()) s = RunLocal(job, inputs, out_dir, options);
  std::error_code ec;
  fs::remove_all(dir, ec);
  return s;
}

}  // namespace mr::jobs
