#include "runner/view/view_api.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>

#include "runner/eval/records/case_outcome.h"
#include "runner/eval/records/record_fields.h"
#include "runner/stats/statistics.h"
#include "runner/view/view_json.h"

namespace skillrunner::view {
namespace json = boost::json;

std::unexpected<Error> NotFound(std::string message) {
  Error error{ErrorCode::kInputInvalid, std::move(message), {}, {}};
  error.details["http_status"] = 404;
  return std::unexpected(std::move(error));
}

std::unexpected<Error> BadParams(std::string message) {
  Error error{ErrorCode::kInputInvalid, std::move(message), {}, {}};
  error.details["http_status"] = 400;
  return std::unexpected(std::move(error));
}

namespace {

constexpr std::size_t kDefaultRuns = 100;
constexpr std::size_t kMaxRuns = 1000;
constexpr std::size_t kDefaultCaseRuns = 20;

ApiAnswer Answer(Result<json::object> result) {
  if (result) return {200, std::move(*result)};
  int status = 500;
  if (const json::value* http = result.error().details.if_contains("http_status"); http && http->is_int64()) {
    status = static_cast<int>(http->as_int64());
  }
  const char* code = status == 404 ? "NOT_FOUND" : status == 400 ? "INVALID_PARAMS" : "INTERNAL";
  return {status, json::object{{"error", json::object{{"code", code}, {"message", result.error().message}}}}};
}

std::optional<std::string> Param(const Query& query, std::string_view key) {
  auto it = query.find(key);
  if (it == query.end() || it->second.empty()) return std::nullopt;
  return it->second;
}

// A whole number parameter in [low, high], or `fallback` when absent.
Result<std::int64_t> IntParam(const Query& query, std::string_view key, std::int64_t fallback, std::int64_t low,
                              std::int64_t high) {
  auto text = Param(query, key);
  if (!text) return fallback;
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (ec != std::errc() || end != text->data() + text->size() || value < low || value > high) {
    return BadParams(std::string(key) + ": expected a whole number from " + std::to_string(low) + " to " +
                     std::to_string(high) + ", found \"" + *text + "\"");
  }
  return value;
}

Result<std::string> Required(const Query& query, std::string_view key) {
  auto value = Param(query, key);
  if (!value) return BadParams("the parameter \"" + std::string(key) + "\" is required");
  return *value;
}

}  // namespace

Result<eval::RunRow> ViewApi::FindRun(std::string_view run_id) {
  auto run = history_.Run(run_id);
  if (!run) return std::unexpected(std::move(run.error()));
  if (!*run) return NotFound("run " + std::string(run_id) + " is not in the history " + history_.name());
  return std::move(**run);
}

Result<std::optional<eval::RunRow>> ViewApi::BaselineOf(const eval::RunRow& run) {
  const std::optional<eval::BaselineComparison>& baseline = run.summary.baseline;
  if (std::string_view id = baseline ? std::string_view(baseline->run_id) : std::string_view(); !id.empty()) {
    auto found = history_.Run(id);
    if (!found) return std::unexpected(std::move(found.error()));
    if (*found) return found;
  }
  return history_.Previous(run);
}

ApiAnswer ViewApi::Get(const std::vector<std::string>& segments, const Query& query) {
  const std::size_t n = segments.size();
  const std::string_view first = n > 0 ? std::string_view(segments[0]) : std::string_view();
  if (n == 1 && first == "suites") return Answer(Suites());
  if (n == 2 && first == "suites") {
    auto limit = IntParam(query, "limit", kDefaultRuns, 1, kMaxRuns);
    if (!limit) return Answer(std::unexpected(std::move(limit.error())));
    SuiteFilter filter{Param(query, "skill"), Param(query, "model"), Param(query, "git_ref")};
    return Answer(Suite(segments[1], filter, static_cast<std::size_t>(*limit)));
  }
  if (n == 2 && first == "runs") return Answer(Run(segments[1]));
  if (n == 3 && first == "runs" && segments[2] == "case") {
    auto skill = Required(query, "skill");
    auto case_id = skill ? Required(query, "case") : std::unexpected(skill.error());
    auto repeat = case_id ? IntParam(query, "repeat", 0, 0, INT32_MAX) : std::unexpected(case_id.error());
    if (!repeat) return Answer(std::unexpected(std::move(repeat.error())));
    return Answer(CaseRecord(segments[1], *skill, *case_id, *repeat));
  }
  if (n == 3 && first == "runs" && segments[2] == "versions") return Answer(Versions(segments[1]));
  if (n == 1 && first == "compare") {
    auto a = Required(query, "a");
    if (!a) return Answer(std::unexpected(std::move(a.error())));
    return Answer(Compare(*a, Param(query, "b").value_or("")));
  }
  if (n == 1 && first == "cases") {
    auto suite = Required(query, "suite");
    auto skill = suite ? Required(query, "skill") : std::unexpected(suite.error());
    auto case_id = skill ? Required(query, "case") : std::unexpected(skill.error());
    auto repeat = case_id ? IntParam(query, "repeat", 0, 0, INT32_MAX) : std::unexpected(case_id.error());
    auto limit = repeat ? IntParam(query, "limit", kDefaultCaseRuns, 1, kMaxRuns) : std::unexpected(repeat.error());
    if (!limit) return Answer(std::unexpected(std::move(limit.error())));
    return Answer(Case(*suite, *skill, *case_id, *repeat, static_cast<std::size_t>(*limit)));
  }
  if (n == 1 && first == "rollouts") return Answer(Rollouts());
  return Answer(NotFound("no such API: /api/" + (segments.empty() ? std::string() : segments[0]) +
                         " (see schemas/view/ for what is served)"));
}

Result<json::object> ViewApi::Suites() {
  auto suites = history_.Suites();
  if (!suites) return std::unexpected(std::move(suites.error()));
  json::array out;
  for (const eval::SuiteRow& suite : *suites) {
    json::array skills;
    for (const auto& [id, unused] : suite.last.summary.skills) skills.emplace_back(id);
    json::array models;
    for (const std::string& model : suite.last.models) models.emplace_back(model);

    out.push_back(json::object{{"suite", suite.suite},
                               {"runs", suite.runs},
                               {"last", RunHead(suite.last)},
                               {"skills", std::move(skills)},
                               {"models", std::move(models)}});
  }
  return json::object{{"history", history_.name()}, {"suites", std::move(out)}};
}

Result<json::object> ViewApi::Suite(std::string_view suite, const SuiteFilter& filter, std::size_t limit) {
  auto runs = history_.Runs(suite, limit);
  if (!runs) return std::unexpected(std::move(runs.error()));
  if (runs->empty()) return NotFound("suite " + std::string(suite) + " has no run in the history " + history_.name());
  auto measures = history_.SuiteMeasures(suite, limit);
  if (!measures) return std::unexpected(std::move(measures.error()));
  return SuiteJson(suite, filter, *runs, *measures);
}

Result<json::object> ViewApi::Run(std::string_view run_id) {
  auto run = FindRun(run_id);
  if (!run) return std::unexpected(std::move(run.error()));
  auto records = history_.Records(run_id);
  if (!records) return std::unexpected(std::move(records.error()));
  auto measures = history_.RunMeasures(run_id);
  if (!measures) return std::unexpected(std::move(measures.error()));
  auto baseline = BaselineOf(*run);
  if (!baseline) return std::unexpected(std::move(baseline.error()));
  std::vector<json::object> baseline_records;
  if (*baseline) {
    auto loaded = history_.Records((*baseline)->run_id);
    if (!loaded) return std::unexpected(std::move(loaded.error()));
    baseline_records = std::move(*loaded);
  }
  return RunJson(*run, *measures, *records, *baseline ? &**baseline : nullptr, baseline_records);
}

Result<json::object> ViewApi::CaseRecord(std::string_view run_id, std::string_view skill, std::string_view case_id,
                                         std::int64_t repeat) {
  auto record = history_.Record(run_id, skill, case_id, repeat);
  if (!record) return std::unexpected(std::move(record.error()));
  if (!*record) {
    return NotFound("run " + std::string(run_id) + " has no case " + std::string(skill) + "/" + std::string(case_id) +
                    (repeat > 0 ? "#" + std::to_string(repeat) : ""));
  }
  return json::object{{"record", std::move(**record)}};
}

Result<json::object> ViewApi::Compare(std::string_view a, std::string_view b) {
  auto newer = FindRun(a);
  if (!newer) return std::unexpected(std::move(newer.error()));
  std::optional<eval::RunRow> older;
  if (!b.empty()) {
    auto found = FindRun(b);
    if (!found) return std::unexpected(std::move(found.error()));
    older = std::move(*found);
  } else {
    auto baseline = BaselineOf(*newer);
    if (!baseline) return std::unexpected(std::move(baseline.error()));
    if (!*baseline) return NotFound("run " + std::string(a) + " is the first of suite " + newer->suite);
    older = std::move(**baseline);
  }
  auto a_records = history_.Records(newer->run_id);
  if (!a_records) return std::unexpected(std::move(a_records.error()));
  auto b_records = history_.Records(older->run_id);
  if (!b_records) return std::unexpected(std::move(b_records.error()));
  return CompareJson(*newer, *a_records, *older, *b_records);
}

Result<json::object> ViewApi::Case(std::string_view suite, std::string_view skill, std::string_view case_id,
                                   std::int64_t repeat, std::size_t limit) {
  auto runs = history_.CaseAcrossRuns(suite, skill, case_id, repeat, limit);
  if (!runs) return std::unexpected(std::move(runs.error()));
  if (runs->empty()) {
    return NotFound("suite " + std::string(suite) + " has no case " + std::string(skill) + "/" + std::string(case_id));
  }
  return CaseJson(suite, skill, case_id, repeat, *runs);
}

Result<json::object> ViewApi::Versions(std::string_view run_id) {
  auto run = FindRun(run_id);
  if (!run) return std::unexpected(std::move(run.error()));
  const std::optional<std::vector<eval::VersionComparison>>& versions = run->summary.versions;
  if (!versions || versions->empty()) {
    return NotFound("run " + std::string(run_id) + " ran no skill at both versions (a suite entry's versions: both)");
  }
  auto records = history_.Records(run_id);
  if (!records) return std::unexpected(std::move(records.error()));
  return VersionsJson(*run, *versions, *records);
}

Result<json::object> ViewApi::Rollouts() {
  // Enough points a rollout for a day of snapshots a minute and its decisions.
  constexpr std::size_t kPointsPerRollout = 2000;
  auto points = history_.RolloutPoints(kPointsPerRollout);
  if (!points) return std::unexpected(std::move(points.error()));
  auto samples = history_.RolloutSamples();
  if (!samples) return std::unexpected(std::move(samples.error()));
  return RolloutsJson(*points, *samples);
}

}  // namespace skillrunner::view
