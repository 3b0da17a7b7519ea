// Streaming: the mapper, reducer and combiner are commands (Hadoop
// Streaming's contract; docs/user-jobs.md has the user's view).
//
// A map task starts the mapper (`sh -c MAPPER`, working directory: the job's
// shipped files, JobEnv::files_dir) at its first line, writes each line of
// the split, '\n'-terminated, to its stdin, and reads `key\tvalue` lines
// from its stdout as they come: the key is everything before the first tab,
// the value everything after it; a line without a tab is a key with an
// empty value (Hadoop's rule). At FinishMap it closes stdin, reads the rest
// and fails the attempt unless the mapper exits 0.
//
// With a combiner, mapper output is collected (up to 32 MiB), sorted by
// key and piped through one run of the combiner (as Hadoop runs it per
// spill); the combiner's lines are the map output.
//
// A reduce task starts the reducer at its first key (or at FinishReduce
// when the partition is empty) and writes `key\tvalue` for every value, keys
// in bytewise order; the reducer's lines are parsed as the mapper's and
// written out by WriteOutput as `key\tvalue\n`. No reducer (an empty
// `reducer` parameter) is the identity.
//
// Errors (a command that exits non-zero, is not found or not executable,
// dies of a signal, writes a line over kMaxStreamingLineBytes, runs past the
// time limit) are thrown as std::runtime_error carrying ChildProcess's one
// line; the task runner turns them into the attempt's error.
#include "jobs/streaming.h"

#include <sys/stat.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <utility>

#include "jobs/all_jobs.h"
#include "jobs/child_process.h"
#include "jobs/code_hashes.h"
#include "jobs/digest.h"
#include "jobs/job_util.h"

namespace mr::jobs {
namespace {

using Pair = std::pair<std::string, std::string>;
constexpr size_t kCombineBufferBytes = 32 << 20;

void SplitLine(std::string_view line, std::string_view* key, std::string_view* value) {
  const size_t tab = line.find('\t');
  *key = tab == std::string_view::npos ? line : line.substr(0, tab);
  *value = tab == std::string_view::npos ? std::string_view() : line.substr(tab + 1);
}

void ThrowIfError(const Status& s) {
  if (!s.ok()) throw std::runtime_error(s.message());
}

class Streaming : public Job {
 public:
  Status Configure(const Params& params) override {
    mapper_ = GetParam(params, "mapper");
    reducer_ = GetParam(params, "reducer");
    combiner_ = GetParam(params, "combiner");
    if (mapper_.empty()) return Status::InvalidArgument("parameter 'mapper' is required");
    MR_RETURN_IF_ERROR(ParseShippedFiles(GetParam(params, "files")).status());
    MR_ASSIGN_OR_RETURN(cmdenv_, ParseCmdEnv(GetParam(params, "cmdenv")));
    const std::string timeout = GetParam(params, "timeout_ms");
    timeout_ms_ = env().task_timeout_ms;
    if (!timeout.empty() && timeout != "0") {
      size_t used = 0;
      try {
        timeout_ms_ = std::stoll(timeout, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != timeout.size() || timeout_ms_ < 0) {
        return Status::InvalidArgument("parameter 'timeout_ms' must be a number of ms, not '" +
                                       timeout + "'");
      }
    }
    return Status::OK();
  }

  void Map(std::string_view line, const LineInfo&, Emitter& out) override {
    out_ = &out;
    if (!mapper_proc_) mapper_proc_ = Start(mapper_, "mapper", [this](std::string_view l) { MapperLine(l); });
    ThrowIfError(mapper_proc_->Write(line));
    ThrowIfError(mapper_proc_->Write("\n"));
  }

  void FinishMap(Emitter& out) override {
    out_ = &out;
    if (!mapper_proc_) return;  // an empty split: no mapper run (no input, no output)
    ThrowIfError(mapper_proc_->Finish());
    mapper_proc_.reset();
    if (!combiner_.empty()) RunCombiner();
  }

  void Reduce(std::string_view key, ValueStream& values, Emitter& out) override {
    out_ = &out;
    if (!reducer_proc_ && !reducer_.empty()) reducer_proc_ = Start(reducer_, "reducer", Emit());
    std::string_view v;
    while (values.Next(&v)) {
      if (reducer_.empty()) {
        out.Emit(key, v);
        continue;
      }
      record_.assign(key).append("\t").append(v).append("\n");
      ThrowIfError(reducer_proc_->Write(record_));
    }
  }

  void FinishReduce(Emitter& out) override {
    out_ = &out;
    if (reducer_.empty()) return;
    if (!reducer_proc_) reducer_proc_ = Start(reducer_, "reducer", Emit());
    ThrowIfError(reducer_proc_->Finish());
    reducer_proc_.reset();
  }

 private:
  std::function<void(std::string_view)> Emit() {
    return [this](std::string_view line) {
      std::string_view k, v;
      SplitLine(line, &k, &v);
      out_->Emit(k, v);
    };
  }

  std::unique_ptr<ChildProcess> Start(const std::string& command, const char* role,
                                      std::function<void(std::string_view)> on_line) {
    ChildProcess::Options o;
    o.command = command;
    o.role = role;
    o.cwd = env().files_dir;
    o.env = env().child_env;
    o.env.insert(o.env.end(), cmdenv_.begin(), cmdenv_.end());
    o.on_stderr = env().log;
    o.timeout_ms = timeout_ms_;
    o.cancel = env().cancel;
    o.max_line_bytes = kMaxStreamingLineBytes;
    o.on_line = std::move(on_line);
    o.reporter = &counters();
    auto child = ChildProcess::Start(std::move(o));
    ThrowIfError(child.status());
    return std::move(child).value();
  }

  // A mapper line: to the output, or to the combiner's buffer.
  void MapperLine(std::string_view line) {
    std::string_view k, v;
    SplitLine(line, &k, &v);
    if (combiner_.empty()) {
      out_->Emit(k, v);
      return;
    }
    buffered_.emplace_back(k, v);
    buffered_bytes_ += k.size() + v.size() + 64;
    if (buffered_bytes_ >= kCombineBufferBytes) RunCombiner();
  }

  // One run of the combiner over the buffered pairs, sorted by key.
  void RunCombiner() {
    if (buffered_.empty()) return;
    std::stable_sort(buffered_.begin(), buffered_.end(),
                     [](const Pair& a, const Pair& b) { return a.first < b.first; });
    std::unique_ptr<ChildProcess> c = Start(combiner_, "combiner", Emit());
    for (const Pair& p : buffered_) {
      record_.assign(p.first).append("\t").append(p.second).append("\n");
      ThrowIfError(c->Write(record_));
    }
    std::vector<Pair>().swap(buffered_);
    buffered_bytes_ = 0;
    ThrowIfError(c->Finish());
  }

  std::string mapper_, reducer_, combiner_;
  std::vector<std::string> cmdenv_;  // NAME=VALUE, after the task's variables
  int64_t timeout_ms_ = 0;
  Emitter* out_ = nullptr;
  std::unique_ptr<ChildProcess> mapper_proc_, reducer_proc_;
  std::vector<Pair> buffered_;
  size_t buffered_bytes_ = 0;
  std::string record_;
};

// The first 16 hex digits of the SHA-256 of the commands and the shipped
// files' names and digests: the same commands over the same files are the
// same code (JoSS Fig. 4 line 1).
std::string StreamingCodeHash(const Params& params) {
  std::string code = "streaming";
  for (const char* name : {"mapper", "reducer", "combiner", "files"}) {
    code += '\0';
    code += GetParam(params, name);
  }
  // The commands' variables may change what they compute (added only when
  // set, so hashes of jobs without them are as before).
  if (const std::string env = GetParam(params, "cmdenv"); !env.empty()) code += '\0' + env;
  return Sha256Hex(code).substr(0, 16);
}

bool IsHex64(std::string_view s) {
  return s.size() == 64 && s.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

}  // namespace

Result<std::vector<std::string>> ParseCmdEnv(std::string_view cmdenv) {
  std::vector<std::string> out;
  while (!cmdenv.empty()) {
    const size_t nl = cmdenv.find('\n');
    const std::string_view kv = cmdenv.substr(0, nl);
    cmdenv = nl == std::string_view::npos ? std::string_view() : cmdenv.substr(nl + 1);
    const size_t eq = kv.find('=');
    const std::string_view name = kv.substr(0, eq);
    const bool name_ok = eq != std::string_view::npos && !name.empty() &&
                         name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                "0123456789_") == std::string_view::npos &&
                         !(name[0] >= '0' && name[0] <= '9');
    if (!name_ok) {
      return Status::InvalidArgument("--cmdenv wants NAME=VALUE with NAME of letters, digits and _, not '" +
                                     std::string(kv) + "'");
    }
    out.emplace_back(kv);
  }
  return out;
}

Result<std::vector<ShippedFile>> ParseShippedFiles(std::string_view files) {
  std::vector<ShippedFile> out;
  while (!files.empty()) {
    const size_t semi = files.find(';');
    const std::string_view entry = files.substr(0, semi);
    files = semi == std::string_view::npos ? std::string_view() : files.substr(semi + 1);
    const size_t a = entry.find(':');
    const size_t b = a == std::string_view::npos ? a : entry.find(':', a + 1);
    ShippedFile f;
    if (b != std::string_view::npos) {
      f.name = entry.substr(0, a);
      f.sha256 = entry.substr(a + 1, b - a - 1);
      f.executable = entry.substr(b + 1) == "x";
    }
    const bool name_ok = !f.name.empty() && f.name != "." && f.name != ".." &&
                         f.name.find('/') == std::string::npos;
    if (b == std::string_view::npos || !name_ok || !IsHex64(f.sha256) ||
        (entry.substr(b + 1) != "x" && entry.substr(b + 1) != "-")) {
      return Status::InvalidArgument("parameter 'files': bad entry '" + std::string(entry) +
                                     "' (want NAME:SHA256:x or NAME:SHA256:-)");
    }
    for (const ShippedFile& g : out) {
      if (g.name == f.name) return Status::InvalidArgument("two shipped files are named '" + f.name + "'");
    }
    out.push_back(std::move(f));
  }
  return out;
}

std::string FormatShippedFiles(const std::vector<ShippedFile>& files) {
  std::string s;
  for (const ShippedFile& f : files) {
    if (!s.empty()) s += ';';
    s += f.name + ":" + f.sha256 + ":" + (f.executable ? "x" : "-");
  }
  return s;
}

Result<std::vector<ShippedFile>> DescribeLocalFiles(const std::vector<std::string>& paths) {
  std::vector<ShippedFile> out;
  for (const std::string& path : paths) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
      return Status::InvalidArgument("--file '" + path + "' is not a regular file");
    }
    ShippedFile f;
    f.name = path.substr(path.rfind('/') + 1);
    auto digest = Sha256FileHex(path);
    if (!digest.ok()) return Status::InvalidArgument("--file " + digest.status().message());
    f.sha256 = *digest;
    f.executable = (st.st_mode & S_IXUSR) != 0;
    for (const ShippedFile& g : out) {
      if (g.name == f.name) {
        return Status::InvalidArgument("two --file paths have the base name '" + f.name +
                                       "' (files land in one directory)");
      }
    }
    out.push_back(std::move(f));
  }
  return out;
}

const JobInfo kStreamingJob = {
    .name = "streaming",
    .description = "any commands as mapper/reducer (Hadoop Streaming; docs/user-jobs.md)",
    .params = {{"mapper", "", "required: shell command reading lines, writing key\\tvalue lines"},
               {"reducer", "", "shell command reading sorted key\\tvalue lines (empty: identity)"},
               {"combiner", "", "shell command run over sorted map output (empty: none)"},
               {"files", "", "shipped files NAME:SHA256:x|-;... (mrctl --file fills it in)"},
               {"files_dir", "", "DFS directory of the shipped files (mrctl fills it in)"},
               {"timeout_ms", "0", "kill a command after this long (0: [jobs] task_timeout_ms)"},
               {"cmdenv", "", "NAME=VALUE lines set in the commands' environment (mrctl --cmdenv)"}},
    .code_hash = kCodeHashStreaming,
    .make = []() -> std::unique_ptr<Job> { return std::make_unique<Streaming>(); },
    .code_hash_of = &StreamingCodeHash,
};

}  // namespace mr::jobs
