#include "runner/eval/case_runner.h"

#include <algorithm>

#include "runner/eval/case_checks.h"
#include "runner/eval/expected_match.h"
#include "runner/eval/records/case_record.h"

namespace skillrunner::eval {
namespace json = boost::json;
namespace {

struct JudgeOutcome {
  json::object record_fields;  // "review" or "judge_error" (an extra verdict for rejudges)
  Metrics metrics;
};

boost::asio::awaitable<JudgeOutcome> JudgeOnce(const review::JudgeSpec& judge, std::uint64_t seed,
                                               const json::value& output, const json::value& input,
                                               const CaseDeps& deps, const InvocationOptions& invoked) {
  InvocationOptions options = invoked;
  options.seed = seed;
  InvocationOutcome verdict = co_await deps.runner.Judge(judge, output, &input, options);
  JudgeOutcome out;
  out.metrics = verdict ? verdict->metrics : verdict.error().metrics;
  if (verdict) {
    out.record_fields["review"] = std::move(verdict->output);
  } else {
    out.record_fields["judge_error"] = ErrorToJson(verdict.error());
  }
  co_return out;
}

void AddBatchUsage(Metrics& sum, const Metrics& more) {
  sum.batched = sum.batched || more.batched;
  if (more.batch_cost_usd) sum.batch_cost_usd = sum.batch_cost_usd.value_or(0) + *more.batch_cost_usd;
  if (more.online_cost_usd) sum.online_cost_usd = sum.online_cost_usd.value_or(0) + *more.online_cost_usd;
}

void CheckExpected(const CaseTask& task, const json::value& output, json::object& record) {
  if (task.entry->expected == ExpectedMode::kNone || !task.eval_case->expected) return;
  std::vector<FieldError> mismatches = CompareExpected(task.entry->expected, *task.eval_case->expected, output);
  record["expected_match"] = mismatches.empty();
  if (mismatches.empty()) return;
  json::array list;
  for (const auto& m : mismatches) list.push_back(json::object{{"path", m.path}, {"message", m.message}});
  record["expected_mismatches"] = std::move(list);
}

boost::asio::awaitable<json::object> RunExecCheck(const ExecCheck& check, const json::value& output,
                                                  const json::value& input, const CaseDeps& deps) {
  if (!deps.graders) co_return json::object{{"op", "exec"}, {"pass", false}, {"message", "no grader runner"}};
  handler::ProcessRequest request{check.argv, check.working_dir, ExecCheckInput(output, input), check.timeout};
  Result<handler::ProcessOutcome> ended = co_await deps.graders->Run(std::move(request));
  if (!ended) co_return json::object{{"op", "exec"}, {"pass", false}, {"message", ended.error().message}};
  co_return ExecVerdict(*ended, check);
}

// The case's own checks against `output` and the record's metrics: "checks" (each verdict) and
// "check_pass" (all of them held) in `record`.
boost::asio::awaitable<void> RunCaseChecks(const CaseTask& task, const json::value& output, const CaseDeps& deps,
                                           json::object& record) {
  const EvalCase& c = *task.eval_case;
  if (c.checks.empty() && !c.exec_check) co_return;
  // The record's metrics, read in place: the record is not written until every check has run.
  static const json::value kNoMetrics;
  const json::value* metrics = &kNoMetrics;
  if (const json::value* result = record.if_contains("result"); result && result->is_object()) {
    if (const json::value* m = result->as_object().if_contains("metrics")) metrics = m;
  }
  json::array verdicts;
  bool pass = true;
  for (const CaseCheck& check : c.checks) {
    json::object verdict = RunCheck(check, output, *metrics);
    pass = pass && verdict.at("pass").as_bool();
    verdicts.push_back(std::move(verdict));
  }
  if (c.exec_check) {
    json::object verdict = co_await RunExecCheck(*c.exec_check, output, c.input, deps);
    pass = pass && verdict.at("pass").as_bool();
    verdicts.push_back(std::move(verdict));
  }
  record["checks"] = std::move(verdicts);
  record["check_pass"] = pass;
}

// What the judge sees beside the output: the case's input, or {input, reference} when the case has a
// reference answer.
json::value JudgeContext(const EvalCase& c) {
  if (!c.reference) return c.input;
  return json::object{{"input", c.input}, {"reference", *c.reference}};
}

// Judges `output` as the suite entry says (reusing `gate_review` when the
// suite judges with the skill's own gate), re-judges it when sampled, and
// puts the verdicts and the judges' usage in `record`.
boost::asio::awaitable<void> JudgeCase(const CaseTask& task, const json::value& output,
                                       const std::optional<json::value>& gate_review, const InvocationOptions& invoked,
                                       const CaseDeps& deps, json::object& record) {
  const std::uint64_t seed = invoked.seed.value_or(0);
  const json::value context = JudgeContext(*task.eval_case);
  record["rubric"] = task.entry->rubric;
  // design.md §12.3: a case with its own criteria is judged by its own judge (the rubric plus them).
  const auto own = task.entry->case_judges.find(task.eval_case->id);
  const review::JudgeSpec& judge = own != task.entry->case_judges.end() ? *own->second : *task.entry->judge;
  if (own != task.entry->case_judges.end()) {
    json::array ids;
    for (const CaseCriterion& criterion : task.eval_case->criteria) ids.emplace_back(criterion.id);
    record["case_criteria"] = std::move(ids);
  }
  Metrics judge_usage;
  if (task.entry->judge_is_gate && gate_review && own == task.entry->case_judges.end()) {
    record["review"] = *gate_review;
  } else {
    JudgeOutcome judged = co_await JudgeOnce(judge, seed, output, context, deps, invoked);
    judge_usage = judged.metrics;
    for (auto& [key, value] : judged.record_fields) record[key] = std::move(value);
  }
  json::array rejudges;
  for (int k = 1; k <= task.rejudges; ++k) {
    // A different seed per judging: a judge that only agrees with itself
    // because it saw the same request would prove nothing.
    JudgeOutcome again =
        co_await JudgeOnce(judge, seed + 1000 * static_cast<std::uint64_t>(k), output, context, deps, invoked);
    judge_usage.input_tokens += again.metrics.input_tokens;
    judge_usage.output_tokens += again.metrics.output_tokens;
    judge_usage.cached_input_tokens += again.metrics.cached_input_tokens;
    if (again.metrics.cost_usd) judge_usage.cost_usd = judge_usage.cost_usd.value_or(0) + *again.metrics.cost_usd;
    AddBatchUsage(judge_usage, again.metrics);
    // A verdict as it is; a failed judging as {"judge_error": ...}.
    json::value* verdict = again.record_fields.if_contains("review");
    rejudges.push_back(verdict ? std::move(*verdict) : json::value(std::move(again.record_fields)));
  }
  if (task.rejudges > 0) record["rejudges"] = std::move(rejudges);
  json::object usage{{"input_tokens", judge_usage.input_tokens},
                     {"cached_input_tokens", judge_usage.cached_input_tokens},
                     {"output_tokens", judge_usage.output_tokens}};
  if (judge_usage.cost_usd) usage["cost_usd"] = *judge_usage.cost_usd;
  if (judge_usage.batched) {
    usage["batch_cost_usd"] = judge_usage.batch_cost_usd ? json::value(*judge_usage.batch_cost_usd) : nullptr;
    usage["online_cost_usd"] = judge_usage.online_cost_usd ? json::value(*judge_usage.online_cost_usd) : nullptr;
  }
  record["judge_usage"] = std::move(usage);
}

}  // namespace

boost::asio::awaitable<json::object> RunCase(const CaseTask& task, const CaseDeps& deps) {
  const Skill& skill = *task.entry->skill;
  json::object record{{"skill", skill.id}, {"case", task.eval_case->id}};
  if (task.entry->version) record["version"] = *task.entry->version;
  if (task.repeat > 0) record["repeat"] = task.repeat;
  record["record_schema"] = CaseRecord::kRecordSchema;
  record["input"] = KeptValue(task.eval_case->input);
  if (!task.eval_case->tags.empty()) record["tags"] = task.eval_case->tags;
  if (!task.eval_case->human.empty()) record["human"] = task.eval_case->human;

  const Clock& clock = deps.runner.clock();
  Clock::TimePoint started = clock.Now();  // rate-limit waits are not the case's latency
  InvocationOptions options;
  if (task.repeat > 0) options.seed = static_cast<std::uint64_t>(task.repeat);
  options.eval = std::make_shared<const EvalTag>(EvalTag{task.eval_case->id, task.repeat});
  options.version = task.entry->version;  // a candidate's entry pins it; else the stable version
  if (deps.batch && task.entry->batch) options.timeout = kBatchCaseTimeout;
  std::optional<json::value> output, gate_review;
  if (task.stored != nullptr) {
    // --rejudge-from: the stored output (or error) as it was; today's judge.
    record["rejudged_from"] = task.stored_run;
    if (const json::value* error = task.stored->if_contains("error")) record["error"] = *error;
    if (const json::value* result = task.stored->if_contains("result"); result && result->is_object()) {
      record["result"] = *result;
      if (const json::value* stored_output = result->as_object().if_contains("output")) output = *stored_output;
    }
  } else {
    InvocationOutcome outcome = co_await deps.runner.Invoke(skill.id, task.eval_case->input, options);
    if (!outcome) {
      record["error"] = ErrorToJson(outcome.error());
    } else {
      record["result"] = ToJson(*outcome);
      output = std::move(outcome->output);
      gate_review = std::move(outcome->review);
    }
  }
  if (output) CheckExpected(task, *output, record);
  if (output) co_await RunCaseChecks(task, *output, deps, record);
  if (output && !task.entry->rubric.empty()) {
    InvocationOptions judging = options;
    judging.timeout = deps.batch && task.entry->batch ? options.timeout : skill.timeout;
    co_await JudgeCase(task, *output, gate_review, judging, deps, record);
  }
  record["duration_ms"] = clock.ElapsedMs(started);
  if (!task.entry->redact.empty()) {
    CaseRecord typed = CaseRecord::FromJson(record);
    typed.Redact(task.entry->redact);
    co_return typed.ToJson();
  }
  co_return record;
}

}  // namespace skillrunner::eval
