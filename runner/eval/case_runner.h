#pragma once

// One eval case, start to finish: wait for the provider's rate limit, invoke
// the skill, check `expected`, judge the output (reusing the review gate's
// verdict when the suite judges with the gate's own rubric and model), re-judge
// it when sampled, and build the results.jsonl record (the contract in
// runner/eval/records/case_outcome.h and the eval README section).

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>
#include <chrono>
#include <functional>
#include <string>

#include "runner/eval/suite.h"
#include "runner/skill_runner.h"
#include "runner/tree/judges.h"
#include "services/common/batch_quorum.h"
#include "services/handler/process_runner.h"

namespace skillrunner::eval {

// One unit of work: a case of a suite entry, repeat k (0 when the suite has
// repeats: 1, so that records carry "repeat" only when repeats > 1).
struct CaseTask {
  const SuiteSkill* entry = nullptr;
  const EvalCase* eval_case = nullptr;
  int repeat = 0;
  int rejudges = 0;  // extra judgings of this case (--rejudge K when sampled)
  std::string key;   // CaseKey of its record
  // --rejudge-from (design.md §9.5): the earlier run's record of this case. Its
  // output is judged again with today's rubric and judge; nothing is generated.
  const boost::json::object* stored = nullptr;
  std::string stored_run;  // that run's id
};

// What a case needs from the run. All references outlive the run. Cases
// run and are judged through the runner (SkillRunner::Invoke, ::Judge).
struct CaseDeps {
  SkillRunner& runner;
  // --cache-mode replay: a case whose record names a cache miss is not
  // recorded (RunCases lists the misses instead).
  bool replay_only = false;
  // Batch mode (design.md §10.6): a batched skill's case and judge wait for their
  // batches without the skill's timeout.
  bool batch = false;
  // Batch mode: the providers' count of running cases (RunCases keeps it).
  BatchQuorum* quorum = nullptr;
  // Runs the cases' exec_check graders; a case with one needs it.
  handler::ProcessRunner* graders = nullptr;
};

// How long a batched case may wait: past the providers' 24 h completion
// window and a resubmission or two.
inline constexpr std::chrono::hours kBatchCaseTimeout{96};

// Runs one case and returns its record. Never throws for failures of the
// skill or the judge: those are in the record.
boost::asio::awaitable<boost::json::object> RunCase(const CaseTask& task, const CaseDeps& deps);

}  // namespace skillrunner::eval
