// FinishEval (orchestrate.h): what a finished run tells the user.
#include <cstdio>

#include "runner/eval/finish_run.h"
#include "runner/eval/orchestrate.h"
#include "runner/eval/records/record_fields.h"

namespace skillrunner::eval {
namespace json = boost::json;
namespace fs = std::filesystem;
namespace {

// "skillrunner eval: <skill>: rubric pass rate 93.3% over 15 decided case(s); ..."
void SayRubricRates(const json::object& summary, const Say& say) {
  const auto* skills = summary.if_contains("skills");
  if (skills == nullptr || !skills->is_object()) return;
  for (const auto& [id, stats] : skills->as_object()) {
    const json::object* s = stats.is_object() ? &stats.as_object() : nullptr;
    auto count = [&](std::string_view key) { return IntAt(s, key).value_or(0); };
    if (count("judged") == 0 && count("judge_errors") == 0) continue;
    std::optional<double> rate = NumberAt(s, "rubric_pass_rate");
    char shown[32] = "-";
    if (rate) std::snprintf(shown, sizeof shown, "%.1f%%", *rate * 100);
    say("skillrunner eval: " + std::string(id) + ": rubric pass rate " + shown + " over " +
        std::to_string(count("decided")) + " decided case(s); " + std::to_string(count("indeterminate")) +
        " indeterminate left out, " + std::to_string(count("judge_errors")) + " judge error(s)");
  }
}

}  // namespace

int FinishEval(const Suite& suite, SummaryHeader header, std::vector<json::object> records,
               const FinishRequest& request, const Say& say) {
  for (const auto& entry : suite.skills) header.skills.push_back(entry.label);
  SortRecords(suite, records);
  FinishOptions finish;
  finish.out_dir = request.out;
  finish.history_file = request.history.empty() ? DefaultHistoryFile(request.out) : request.history;
  finish.baseline = request.baseline;
  finish.fail_on_regressions_only = request.fail_on_regressions_only;
  finish.cache = request.cache;
  FinishResult result = FinishRun(suite, header, records, finish);
  const json::object* baseline = ObjectAt(&result.summary, "baseline");
  if (TextAt(baseline, "status") == "none") say("no baseline: " + std::string(TextAt(baseline, "reason")));
  if (TextAt(baseline, "status") == "skipped") {
    say("skillrunner eval: the regression gate was skipped (no baseline compared): " +
        std::string(TextAt(baseline, "reason")));
  }
  for (const auto& note : result.notes) say("skillrunner eval: " + note);
  for (const auto& problem : result.problems) say("skillrunner eval: " + problem);
  SayRubricRates(result.summary, say);
  for (const auto& breach : result.summary.at("breaches").as_array()) {
    const bool counts = !request.fail_on_regressions_only || breach.at("kind") == "regression";
    say(std::string(counts ? "breach: " : "breach (reported; --fail-on regressions): ") +
        std::string(breach.at("message").as_string()));
  }
  if (TextAt(baseline, "status") == "compared") {
    const json::array* flipped = ArrayAt(baseline, "flipped");
    say("skillrunner eval: " + std::to_string(flipped ? flipped->size() : 0) + " case(s) flipped from pass since run " +
        std::string(TextAt(baseline, "run_id")));
  }
  if (request.cache) {
    say("skillrunner eval: response cache " + request.cache->file().string() + ": " +
        std::to_string(request.cache->hits()) + " hit(s), " + std::to_string(request.cache->misses()) +
        " miss(es) (a hit makes no provider request)");
  }
  say("skillrunner eval: " + std::to_string(records.size()) + " record(s); " +
      std::string(result.summary.at("status").as_string()) + "; reports in " +
      fs::absolute(request.out).lexically_normal().string() + " (summary.json, junit.xml, report.html)");
  return result.exit_status;
}

}  // namespace skillrunner::eval
