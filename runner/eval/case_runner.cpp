#include "runner/eval/case_runner.h"

#include <algorithm>

#include "runner/eval/case_checks.h"
#include "runner/eval/expected_match.h"
#include "runner/eval/records/case_record.h"

namespace skillrunner::eval {
namespace json = boost::json;
namespace {

struct JudgeOutcome {
  std::optional<json::value> review;        // the verdict
  std::optional<json::object> judge_error;  // or why there is none
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
    out.review = std::move(verdict->output);
  } else {
    out.judge_error = ErrorToJson(verdict.error()).as_object();
  }
  co_return out;
}

void AddUsage(JudgeUsage& sum, const Metrics& more) {
  sum.input_tokens += more.input_tokens;
  sum.output_tokens += more.output_tokens;
  sum.cached_input_tokens += more.cached_input_tokens;
  if (more.cost_usd) sum.cost_usd = sum.cost_usd.value_or(0) + *more.cost_usd;
  sum.batched = sum.batched || more.batched;
  if (more.batch_cost_usd) sum.batch_cost_usd = sum.batch_cost_usd.value_or(0) + *more.batch_cost_usd;
  if (more.online_cost_usd) sum.online_cost_usd = sum.online_cost_usd.value_or(0) + *more.online_cost_usd;
}

void CheckExpected(const CaseTask& task, const json::value& output, CaseRecord& record) {
  if (task.entry->expected == ExpectedMode::kNone || !task.eval_case->expected) return;
  std::vector<FieldError> mismatches = CompareExpected(task.entry->expected, *task.eval_case->expected, output);
  record.expected_match = mismatches.empty();
  for (const auto& m : mismatches) record.expected_mismatches.push_back(FieldMismatch{m.path, m.message});
}

boost::asio::awaitable<CheckResult> RunExecCheck(const ExecCheck& check, const json::value& output,
                                                 const json::value& input, const CaseDeps& deps) {
  CheckResult failed;
  failed.op = "exec";
  if (!deps.graders) {
    failed.message = "no grader runner";
    co_return failed;
  }
  handler::ProcessRequest request{check.argv, check.working_dir, ExecCheckInput(output, input), check.timeout};
  Result<handler::ProcessOutcome> ended = co_await deps.graders->Run(std::move(request));
  if (!ended) {
    failed.message = ended.error().message;
    co_return failed;
  }
  co_return ExecVerdict(*ended, check);
}

// The case's own checks against `output` and the invocation's metrics: each verdict, and whether
// all of them held.
boost::asio::awaitable<void> RunCaseChecks(const CaseTask& task, const json::value& output, const json::value& metrics,
                                           const CaseDeps& deps, CaseRecord& record) {
  const EvalCase& c = *task.eval_case;
  if (c.checks.empty() && !c.exec_check) co_return;
  bool pass = true;
  for (const CaseCheck& check : c.checks) {
    record.checks.push_back(RunCheck(check, output, metrics));
    pass = pass && record.checks.back().pass;
  }
  if (c.exec_check) {
    record.checks.push_back(co_await RunExecCheck(*c.exec_check, output, c.input, deps));
    pass = pass && record.checks.back().pass;
  }
  record.check_pass = pass;
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
                                       const CaseDeps& deps, CaseRecord& record) {
  const std::uint64_t seed = invoked.seed.value_or(0);
  const json::value context = JudgeContext(*task.eval_case);
  record.rubric = task.entry->rubric;
  // design.md §12.3: a case with its own criteria is judged by its own judge (the rubric plus them).
  const auto own = task.entry->case_judges.find(task.eval_case->id);
  const bool own_judge = own != task.entry->case_judges.end();
  const review::JudgeSpec& judge = own_judge ? *own->second : *task.entry->judge;
  if (own_judge) {
    for (const CaseCriterion& criterion : task.eval_case->criteria) record.case_criteria.push_back(criterion.id);
  }
  JudgeUsage usage;
  if (task.entry->judge_is_gate && gate_review && !own_judge) {
    if (gate_review->is_object()) record.review = gate_review->as_object();
  } else {
    JudgeOutcome judged = co_await JudgeOnce(judge, seed, output, context, deps, invoked);
    AddUsage(usage, judged.metrics);
    if (judged.review && judged.review->is_object()) record.review = judged.review->as_object();
    record.judge_error = std::move(judged.judge_error);
  }
  json::array rejudges;
  for (int k = 1; k <= task.rejudges; ++k) {
    // A different seed per judging: a judge that only agrees with itself
    // because it saw the same request would prove nothing.
    JudgeOutcome again =
        co_await JudgeOnce(judge, seed + 1000 * static_cast<std::uint64_t>(k), output, context, deps, invoked);
    AddUsage(usage, again.metrics);
    rejudges.push_back(RejudgeJson(std::move(again.review), std::move(again.judge_error)));
  }
  if (task.rejudges > 0) record.rejudges = std::move(rejudges);
  record.judge_usage = usage.ToJson();
}

// The invocation's answer, or (--rejudge-from) the stored one as it was; the output to judge.
boost::asio::awaitable<std::optional<json::value>> Answer(const CaseTask& task, const InvocationOptions& options,
                                                          const CaseDeps& deps, CaseRecord& record,
                                                          std::optional<json::value>& gate_review) {
  if (task.stored != nullptr) {
    // --rejudge-from: the stored output (or error) as it was; today's judge.
    const CaseRecord stored = CaseRecord::FromJson(*task.stored);
    record.rejudged_from = task.stored_run;
    record.error = stored.error;
    record.result = stored.result;
    const json::value* output = stored.Output();
    co_return output ? std::optional<json::value>(*output) : std::nullopt;
  }
  InvocationOutcome outcome = co_await deps.runner.Invoke(task.entry->skill->id, task.eval_case->input, options);
  if (!outcome) {
    record.error = ErrorToJson(outcome.error()).as_object();
    co_return std::nullopt;
  }
  record.result = ToJson(*outcome).as_object();
  gate_review = std::move(outcome->review);
  co_return std::move(outcome->output);
}

}  // namespace

boost::asio::awaitable<json::object> RunCase(const CaseTask& task, const CaseDeps& deps) {
  const Skill& skill = *task.entry->skill;
  CaseRecord record;
  record.skill = skill.id;
  record.case_id = task.eval_case->id;
  if (task.entry->version) record.version = *task.entry->version;
  record.repeat = task.repeat;
  record.input = KeptValue(task.eval_case->input);
  record.tags = task.eval_case->tags;
  record.human = task.eval_case->human;

  const Clock& clock = deps.runner.clock();
  Clock::TimePoint started = clock.Now();  // rate-limit waits are not the case's latency
  InvocationOptions options;
  if (task.repeat > 0) options.seed = static_cast<std::uint64_t>(task.repeat);
  options.eval = std::make_shared<const EvalTag>(EvalTag{task.eval_case->id, task.repeat, task.entry->redact});
  options.version = task.entry->version;  // a candidate's entry pins it; else the stable version
  if (deps.batch && task.entry->batch) options.timeout = kBatchCaseTimeout;
  std::optional<json::value> gate_review;
  const std::optional<json::value> output = co_await Answer(task, options, deps, record, gate_review);
  if (output) {
    CheckExpected(task, *output, record);
    co_await RunCaseChecks(task, *output, record.MetricsValue(), deps, record);
  }
  if (output && !task.entry->rubric.empty()) {
    InvocationOptions judging = options;
    judging.timeout = deps.batch && task.entry->batch ? options.timeout : skill.timeout;
    co_await JudgeCase(task, *output, gate_review, judging, deps, record);
  }
  record.duration_ms = clock.ElapsedMs(started);
  record.Redact(task.entry->redact);
  co_return record.ToJson();
}

}  // namespace skillrunner::eval
