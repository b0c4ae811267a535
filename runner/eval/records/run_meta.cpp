#include "runner/eval/records/run_meta.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <random>
#include <sstream>

#include "runner/eval/records/results_log.h"
#include "services/common/json_text.h"

namespace skillrunner::eval {
namespace json = boost::json;

json::object RunMeta::ToJson() const {
  json::object out{{"run_id", run_id}, {"suite", suite}, {"suite_file", suite_file}, {"started_at", started_at}};
  if (shard) out["shard"] = *shard;
  if (plan_hash) out["plan_hash"] = *plan_hash;
  return out;
}

Result<RunMeta> ReadRunMeta(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return Fail(ErrorCode::kInternal, "cannot read " + file.string());
  std::ostringstream text;
  text << in.rdbuf();
  boost::system::error_code ec;
  json::value value = json::parse(text.str(), ec);
  auto field = [&](std::string_view key) -> std::optional<std::string> {
    const json::value* v = value.is_object() ? value.as_object().if_contains(key) : nullptr;
    if (!v || !v->is_string()) return std::nullopt;
    return std::string(v->as_string());
  };
  RunMeta meta;
  auto run_id = field("run_id");
  auto suite = field("suite");
  auto started = field("started_at");
  if (ec || !run_id || !suite || !started) {
    return Fail(ErrorCode::kInternal, file.string() + " is not a run.json (needs run_id, suite and started_at)");
  }
  meta.run_id = *run_id;
  meta.suite = *suite;
  meta.started_at = *started;
  meta.suite_file = field("suite_file").value_or("");
  meta.shard = field("shard");
  meta.plan_hash = field("plan_hash");
  return meta;
}

Result<void> WriteRunMeta(const std::filesystem::path& file, const RunMeta& meta) {
  return WriteFileAtomically(file, PrettyJson(meta.ToJson()) + "\n");
}

std::string IsoUtc(std::chrono::system_clock::time_point time) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(time.time_since_epoch()).count();
  std::time_t seconds = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buffer[96];
  std::snprintf(buffer, sizeof buffer, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms % 1000));
  return buffer;
}

std::optional<std::chrono::system_clock::time_point> ParseIsoUtc(std::string_view text) {
  std::tm tm{};
  int millis = 0;
  std::string copy(text);
  if (std::sscanf(copy.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                  &tm.tm_min, &tm.tm_sec, &millis) != 7) {
    return std::nullopt;
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return std::chrono::system_clock::from_time_t(timegm(&tm)) + std::chrono::milliseconds(millis);
}

std::string NewRunId(std::chrono::system_clock::time_point now) {
  std::string iso = IsoUtc(now);  // 2024-05-01T02:03:04.567Z
  std::string compact;
  for (char c : iso.substr(0, 19)) {
    if (c != '-' && c != ':') compact.push_back(c);
  }
  std::random_device random;
  char suffix[16];
  std::snprintf(suffix, sizeof suffix, "%06x", random() & 0xffffff);
  return compact + "Z-" + suffix;
}

}  // namespace skillrunner::eval
