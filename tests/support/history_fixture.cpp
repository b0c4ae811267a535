#include "tests/support/history_fixture.h"

#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "runner/eval/history/history.h"
#include "services/common/iso_time.h"

namespace skillrunner::test_support {
namespace json = boost::json;

namespace {

constexpr const char* kSkills[] = {"extract_contact", "triage_ticket", "summarize"};

json::object Review(bool pass, std::mt19937_64& random) {
  const bool clear = random() % 10 != 0;
  json::array criteria{
      json::object{{"criterion_id", "faithful"},
                   {"verdict", pass ? "pass" : "fail"},
                   {"reasoning", pass ? "every field is in the text" : "the phone number is not in the text"}},
      json::object{{"criterion_id", "complete"},
                   {"verdict", clear ? "pass" : "indeterminate"},
                   {"reasoning", clear ? "nothing left out" : "cannot tell from the text"}}};
  return json::object{{"pass", pass},
                      {"issues", pass ? json::array{} : json::array{"phone number invented"}},
                      {"suggested_fixes", pass ? json::array{} : json::array{"drop the phone"}},
                      {"indeterminate", json::array{}},
                      {"criteria_results", std::move(criteria)}};
}

json::object Record(std::size_t run, std::size_t index, std::mt19937_64& random) {
  const std::string skill = kSkills[index % std::size(kSkills)];
  // A case's quality drifts slowly: it fails in runs where its phase says so.
  const bool pass = ((index * 7 + run / 3) % 11) != 0 && random() % 50 != 0;
  const std::int64_t duration = 200 + static_cast<std::int64_t>(random() % 1800);
  const double cost = static_cast<double>(150 + random() % 900) * 1e-6;
  json::object output{{"name", "Customer " + std::to_string(index)},
                      {"email", "c" + std::to_string(index) + "@example.com"},
                      {"summary", std::string(120 + random() % 400, 'x')}};
  if (!pass) output["phone"] = "+1 555 0" + std::to_string(100 + run % 900);
  json::object metrics{{"mode", "native_strict"},
                       {"attempts", 1},
                       {"input_tokens", 600},
                       {"output_tokens", 80},
                       {"duration_ms", duration},
                       {"cost_usd", cost},
                       {"model", run % 5 == 4 ? "gpt-4o" : "gpt-4o-mini"}};
  json::array attempts{json::object{{"n", 1},
                                    {"kind", "ok"},
                                    {"raw", json::serialize(output)},
                                    {"input_tokens", 600},
                                    {"output_tokens", 80},
                                    {"duration_ms", duration}}};
  return json::object{{"skill", skill},
                      {"case", "case-" + std::to_string(index)},
                      {"input", json::object{{"text", "Message " + std::to_string(index) + " from a customer."}}},
                      {"result", json::object{{"skill", skill},
                                              {"output", std::move(output)},
                                              {"attempts", std::move(attempts)},
                                              {"metrics", std::move(metrics)}}},
                      {"review", Review(pass, random)},
                      {"duration_ms", duration + 40}};
}

json::object Summary(const HistoryShape& shape, std::size_t run) {
  // One run a night from 2024-01-01.
  const auto night =
      std::chrono::sys_days(std::chrono::year(2024) / 1 / 1) + std::chrono::days(run) + std::chrono::hours(2);
  const std::string started = IsoUtc(std::chrono::system_clock::time_point(night));
  json::object skills;
  for (const char* skill : kSkills) skills[skill] = json::object{{"cases", shape.cases / std::size(kSkills)}};
  return json::object{{"run_id", GeneratedRunId(run)},
                      {"suite", shape.suite},
                      {"started_at", started},
                      {"finished_at", started},
                      {"duration_ms", 60'000},
                      {"status", run % 9 == 8 ? "breached" : "pass"},
                      {"breaches", json::array{}},
                      {"git_ref", "commit" + std::to_string(run)},
                      {"skills", std::move(skills)},
                      {"totals", json::object{{"cases", shape.cases},
                                              {"cost_usd", 0.4},
                                              {"latency_ms", json::object{{"p50", 900}, {"p95", 1800}}}}}};
}

}  // namespace

std::string GeneratedRunId(std::size_t index) {
  char id[32];
  std::snprintf(id, sizeof id, "run-%05zu", index);
  return id;
}

std::string GenerateHistory(const std::filesystem::path& file, const HistoryShape& shape) {
  auto history = eval::History::Open(file);
  if (!history) return history.error().message;
  std::mt19937_64 random(shape.seed);
  for (std::size_t run = 0; run < shape.runs; ++run) {
    std::vector<json::object> records;
    records.reserve(shape.cases);
    for (std::size_t i = 0; i < shape.cases; ++i) records.push_back(Record(run, i, random));
    if (auto recorded = (*history)->RecordRun(eval::RunSummary::FromJson(Summary(shape, run)), records); !recorded)
      return recorded.error().message;
  }
  return "";
}

}  // namespace skillrunner::test_support
