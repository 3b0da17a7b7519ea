#include "common/log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

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

// Creates `file` with mode 0600 if it is missing, and takes group and other
// permissions off an existing one (left by an older version), before spdlog
// opens it for appending.
Status MakePrivateFile(const std::string& file) {
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return Status::IOError("cannot open log file '" + file + "': " + std::strerror(errno));
  struct stat st {};
  int rc = ::fstat(fd, &st);
  if (rc == 0 && (st.st_mode & 077) != 0) rc = ::fchmod(fd, st.st_mode & 0700);
  const int saved = errno;
  ::close(fd);
  if (rc != 0) {
    return Status::IOError("cannot make log file '" + file + "' private: " + std::strerror(saved));
  }
  return Status::OK();
}

}  // namespace

Status InitLogging(const std::string& process_name, const std::string& file,
                   const std::string& level) {
  auto lvl = spdlog::level::from_str(level);
  if (lvl == spdlog::level::off && level != "off") {
    return Status::InvalidArgument("unknown log level '" + level + "'");
  }
  // One sink: the file when there is one, else stderr. (A second stderr sink
  // for warnings wrote every warning twice where stderr is kept in a file,
  // as local-cluster.sh does; start-up failures reach stderr from main.)
  spdlog::sink_ptr sink;
  if (file.empty()) {
    sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  } else {
    MR_RETURN_IF_ERROR(CreatePrivateDirs(std::filesystem::path(file).parent_path()));
    MR_RETURN_IF_ERROR(MakePrivateFile(file));
    try {
      sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(file);
    } catch (const spdlog::spdlog_ex& e) {
      return Status::IOError("cannot open log file '" + file + "': " + e.what());
    }
  }
  auto logger = std::make_shared<spdlog::logger>(process_name, std::move(sink));
  logger->set_level(lvl);
  logger->set_pattern("%Y-%m-%d %H:%M:%S.%e %^%L%$ [%n] %v");
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
  return Status::OK();
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
