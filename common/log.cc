#include "common/log.h"

#include <filesystem>
#include <memory>
#include <vector>

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace mr {

Status InitLogging(const std::string& process_name, const std::string& file,
                   const std::string& level) {
  auto lvl = spdlog::level::from_str(level);
  if (lvl == spdlog::level::off && level != "off") {
    return Status::InvalidArgument("unknown log level '" + level + "'");
  }
  std::vector<spdlog::sink_ptr> sinks;
  auto console = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  console->set_level(file.empty() ? lvl : spdlog::level::warn);
  sinks.push_back(console);
  if (!file.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(file).parent_path(), ec);
    try {
      auto file_sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(file);
      file_sink->set_level(lvl);
      sinks.push_back(file_sink);
    } catch (const spdlog::spdlog_ex& e) {
      return Status::IOError("cannot open log file '" + file + "': " + e.what());
    }
  }
  auto logger = std::make_shared<spdlog::logger>(process_name, sinks.begin(), sinks.end());
  logger->set_level(lvl);
  logger->set_pattern("%Y-%m-%d %H:%M:%S.%e %^%L%$ [%n] %v");
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
  return Status::OK();
}

}  // namespace mr
