#include "common/log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "common/log_file_sink.h"

namespace mr {
namespace {

// Creates `dir` and its missing parents with mode 0700; directories that
// already exist keep their mode (a log may live in a shared /var/log).
Status CreatePrivateDirs(const std::filesystem::path& dir) {
  if (dir.empty()) return Status::OK();
  std::filesystem::path partial;
  for (const auto& part : dir) {
    partial /= part;
    if (::mkdir(partial.c_str(), 0700) != 0 && errno != EEXIST) {
      return Status::IOError("cannot create '" + partial.string() + "': " + std::strerror(errno));
    }
  }
  return Status::OK();
}

// The sink ReopenLogFile reopens: the file sink of the last InitLogging,
// or none when logging goes to stderr.
std::mutex current_file_mu;
std::shared_ptr<RotatingFileSink> current_file;

// The "%*" flag of the journal pattern: the line's syslog priority as
// sd-daemon(3) wants it in front of a line ("<3>" error ... "<7>" debug).
class SyslogPriorityFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    int priority = 6;  // info
    switch (msg.level) {
      case spdlog::level::trace:
      case spdlog::level::debug: priority = 7; break;
      case spdlog::level::info: priority = 6; break;
      case spdlog::level::warn: priority = 4; break;
      case spdlog::level::err: priority = 3; break;
      case spdlog::level::critical: priority = 2; break;
      default: break;
    }
    const char text[] = {'<', static_cast<char>('0' + priority), '>'};
    dest.append(text, text + sizeof(text));
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<SyslogPriorityFlag>();
  }
};

}  // namespace

bool StderrIsJournal() {
  const char* value = std::getenv("JOURNAL_STREAM");
  if (value == nullptr) return false;
  unsigned long long dev = 0, ino = 0;
  if (std::sscanf(value, "%llu:%llu", &dev, &ino) != 2) return false;
  struct stat st {};
  if (::fstat(2, &st) != 0) return false;
  return static_cast<unsigned long long>(st.st_dev) == dev &&
         static_cast<unsigned long long>(st.st_ino) == ino;
}

Status InitLogging(const std::string& process_name, const std::string& file,
                   const std::string& level) {
  LogOptions options;
  options.level = level;
  return InitLogging(process_name, file, options);
}

Status InitLogging(const std::string& process_name, const std::string& file,
                   const LogOptions& options) {
  auto lvl = spdlog::level::from_str(options.level);
  if (lvl == spdlog::level::off && options.level != "off") {
    return Status::InvalidArgument("unknown log level '" + options.level + "'");
  }
  // One sink: the journal, else the file when there is one, else stderr. (A
  // second stderr sink for warnings wrote every warning twice where stderr
  // is kept in a file, as local-cluster.sh does; start-up failures reach
  // stderr from main.)
  spdlog::sink_ptr sink;
  std::unique_ptr<spdlog::formatter> formatter;
  std::shared_ptr<RotatingFileSink> file_sink;
  if (StderrIsJournal()) {
    // The journal stamps each line itself and reads the level off "<N>".
    sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
    spdlog::pattern_formatter::custom_flags flags;
    flags['*'] = std::make_unique<SyslogPriorityFlag>();
    formatter = std::make_unique<spdlog::pattern_formatter>(
        "%*[%n] %v", spdlog::pattern_time_type::local, spdlog::details::os::default_eol,
        std::move(flags));
  } else if (file.empty()) {
    sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  } else {
    MR_RETURN_IF_ERROR(CreatePrivateDirs(std::filesystem::path(file).parent_path()));
    file_sink = std::make_shared<RotatingFileSink>(file, options.max_file_bytes, options.max_files);
    MR_RETURN_IF_ERROR(file_sink->Open());
    sink = file_sink;
  }
  if (!formatter) {
    formatter = std::make_unique<spdlog::pattern_formatter>("%Y-%m-%d %H:%M:%S.%e %^%L%$ [%n] %v");
  }
  auto logger = std::make_shared<spdlog::logger>(process_name, std::move(sink));
  logger->set_level(lvl);
  logger->set_formatter(std::move(formatter));
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
  std::lock_guard lock(current_file_mu);
  current_file = std::move(file_sink);
  return Status::OK();
}

Status ReopenLogFile() {
  std::shared_ptr<RotatingFileSink> sink;
  {
    std::lock_guard lock(current_file_mu);
    sink = current_file;
  }
  return sink ? sink->Reopen() : Status::OK();
}

void ReportStartupError(const std::string& program, const std::string& message) {
  bool to_file = false;
  {
    std::lock_guard lock(current_file_mu);
    to_file = current_file != nullptr;
  }
  if (to_file) {
    spdlog::error("cannot start: {}", message);
    spdlog::default_logger()->flush();
  }
  std::fprintf(stderr, "%s%s: %s\n", StderrIsJournal() ? "<3>" : "", program.c_str(),
               message.c_str());
}

int64_t LogThrottle::Tick(Clock::time_point now) {
  std::lock_guard lock(mu_);
  ++held_;
  if (logged_once_ && now - last_line_ < interval_) return 0;
  logged_once_ = true;
  last_line_ = now;
  const int64_t n = held_;
  held_ = 0;
  return n;
}

}  // namespace mr
