// FinishEval (orchestrate.h): what a finished run tells the user.
#include <cstdio>

#include "runner/eval/finish_run.h"
#include "runner/eval/orchestrate.h"

namespace skillrunner::eval {
namespace json = boost::json;
namespace fs = std::filesystem;
namespace {

// "skillrunner eval: <skill>: rubric pass rate 93.3% over 15 decided case(s); ..."
void SayRubricRates(const RunSummary& summary, const Say& say) {
  for (const auto& [id, s] : summary.skills) {
    if (s.judged.value_or(0) == 0 && s.judge_errors.value_or(0) == 0) continue;
    char shown[32] = "-";
    if (s.rubric_pass_rate) std::snprintf(shown, sizeof shown, "%.1f%%", *s.rubric_pass_rate * 100);
    say("skillrunner eval: " + id + ": rubric pass rate " + shown + " over " + std::to_string(s.decided.value_or(0)) +
        " decided case(s); " + std::to_string(s.indeterminate.value_or(0)) + " indeterminate left out, " +
        std::to_string(s.judge_errors.value_or(0)) + " judge error(s)");
  }
}

// What the regression gate did: no baseline, skipped, or the cases that flipped.
void SayBaseline(const std::optional<BaselineComparison>& baseline, const Say& say) {
  if (!baseline) return;
  switch (baseline->status) {
    case BaselineComparison::Status::kNone:
      say("no baseline: " + baseline->reason);
      break;
    case BaselineComparison::Status::kSkipped:
      say("skillrunner eval: the regression gate was skipped (no baseline compared): " + baseline->reason);
      break;
    case BaselineComparison::Status::kCompared:
      break;
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
  const std::optional<BaselineComparison>& baseline = result.summary.baseline;
  SayBaseline(baseline, say);
  for (const auto& note : result.notes) say("skillrunner eval: " + note);
  for (const auto& problem : result.problems) say("skillrunner eval: " + problem);
  SayRubricRates(result.summary, say);
  for (const Breach& breach : result.summary.breaches) {
    const bool counts = !request.fail_on_regressions_only || breach.kind == "regression";
    say(std::string(counts ? "breach: " : "breach (reported; --fail-on regressions): ") + breach.message);
  }
  if (baseline && baseline->status == BaselineComparison::Status::kCompared) {
    say("skillrunner eval: " + std::to_string(baseline->flipped.size()) + " case(s) flipped from pass since run " +
        baseline->run_id);
  }
  if (request.cache) {
    say("skillrunner eval: response cache " + request.cache->file().string() + ": " +
        std::to_string(request.cache->hits()) + " hit(s), " + std::to_string(request.cache->misses()) +
        " miss(es) (a hit makes no provider request)");
  }
  say("skillrunner eval: " + std::to_string(records.size()) + " record(s); " + result.summary.status + "; reports in " +
      fs::absolute(request.out).lexically_normal().string() + " (summary.json, junit.xml, report.html)");
  return result.exit_status;
}

}  // namespace skillrunner::eval
