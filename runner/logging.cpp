#include "runner/logging.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <boost/json/serialize.hpp>
#include <boost/json/string.hpp>
#include <chrono>
#include <ctime>

#include "services/common/iso_time.h"
#include "services/common/json_text.h"

namespace skillrunner {
namespace {

std::atomic<bool> g_json_format{false};
// Marks a payload that is a JSON object of fields (LogEvent in json format).
constexpr char kFieldsMark = '\x1e';

// One JSON object per line; the message is escaped by Boost.JSON.
class JsonFormatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    std::string line = "{\"ts\":\"";
    line += IsoUtc(msg.time);
    line += "\",\"level\":\"";
    auto level = spdlog::level::to_string_view(msg.level);
    line.append(level.data(), level.size());
    std::string_view payload(msg.payload.data(), msg.payload.size());
    if (payload.size() > 2 && payload[0] == kFieldsMark && payload[1] == '{') {
      line += "\",";
      line += payload.substr(2);  // the fields object without its '{'
      line += "\n";
    } else {
      line += "\",\"msg\":";
      line += boost::json::serialize(boost::json::string(payload));
      line += "}\n";
    }
    dest.append(line.data(), line.data() + line.size());
  }
  std::unique_ptr<spdlog::formatter> clone() const override { return std::make_unique<JsonFormatter>(); }
};

}  // namespace

Result<void> ConfigureLogging(std::string_view level, std::string_view format) {
  auto parsed = spdlog::level::from_str(std::string(level));
  if (parsed == spdlog::level::off && level != "off") {
    return Fail(ErrorCode::kConfigInvalid,
                "unknown log level \"" + std::string(level) + "\" (trace, debug, info, warn, error, critical, off)");
  }
  if (format != "text" && format != "json") {
    return Fail(ErrorCode::kConfigInvalid, "unknown log format \"" + std::string(format) + "\" (text, json)");
  }
  auto logger = std::make_shared<spdlog::logger>("skillrunner", std::make_shared<spdlog::sinks::stderr_sink_mt>());
  if (format == "json") {
    logger->set_formatter(std::make_unique<JsonFormatter>());
  } else {
    logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
  }
  g_json_format = format == "json";
  logger->set_level(parsed);
  logger->flush_on(spdlog::level::trace);
  spdlog::set_default_logger(std::move(logger));
  return {};
}

void LogEvent(spdlog::level::level_enum level, std::string_view event, const boost::json::object& fields) {
  spdlog::logger* logger = spdlog::default_logger_raw();
  if (!logger->should_log(level)) return;
  if (g_json_format) {
    boost::json::object line{{"event", event}};
    for (const auto& [key, value] : fields) line[key] = value;
    logger->log(level, "{}{}", kFieldsMark, CompactJson(line));
    return;
  }
  std::string text(event);
  for (const auto& [key, value] : fields) {
    text += ' ';
    text.append(key.data(), key.size());
    text += '=';
    bool bare = value.is_string() && value.as_string().find_first_of(" =\"") == boost::json::string::npos &&
                !value.as_string().empty();
    text += bare ? std::string(value.as_string()) : CompactJson(value);
  }
  logger->log(level, "{}", text);
}

}  // namespace skillrunner
