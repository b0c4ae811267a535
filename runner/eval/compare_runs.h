#pragma once

// design.md §9.5 `eval compare RUN_A RUN_B --rubric R [--judge-model M]`: for
// every case both runs have an output for, the judge says which output
// better meets the rubric, twice, with the order swapped; a disagreement
// between the two orders is a tie. Per skill: wins, losses, ties and a
// two-sided sign-test p-value. Writes compare.json and compare.html.

#include <boost/json/value.hpp>
#include <filesystem>
#include <map>
#include <string>

#include "runner/eval/orchestrate.h"

namespace skillrunner::eval {

struct CompareRequest {
  std::string run_a;  // a run folder or a run id of `history`
  std::string run_b;
  std::string rubric;       // a rubric id of the registry
  std::string judge_model;  // empty: each skill's own model
  std::filesystem::path out;
  std::filesystem::path history;
  int concurrency = 8;
  // Each case's input ("skill/case" -> input), shown to the judge as context.
  std::map<std::string, boost::json::value> inputs;
};

// The exit status: 0 compared, 2 could not (a run, the rubric, the judge).
int CompareRuns(const SkillRegistry& registry, const CompareRequest& request, const RunnerFactory& make_runner,
                const Say& say);

}  // namespace skillrunner::eval
