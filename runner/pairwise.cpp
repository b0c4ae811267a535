#include "runner/pairwise.h"

#include <boost/json/object.hpp>

#include "services/review/prepared_judge.h"

namespace skillrunner {

Result<std::shared_ptr<const review::Rubric>> PairwiseRubric(const review::Rubric& rubric) {
  auto pairwise = std::make_shared<review::Rubric>();
  pairwise->id = rubric.id + "_pairwise";
  pairwise->description = "Which of two answers to the same input better meets the rubric \"" + rubric.id + "\"";
  review::Criterion better;
  better.id = "a_better";
  better.description =
      "The subject holds two answers to the same input, A and B. Judge which one better meets every criterion "
      "listed in the guidance, as a whole. Verdict pass: A is better. Verdict fail: B is better. Verdict "
      "indeterminate: neither is better (a tie). Do not prefer an answer for its position or its length.";
  better.required = true;
  for (const review::Criterion& c : rubric.criteria) {
    better.guidance += "- " + c.id + (c.required ? " (required)" : "") + ": " + c.description + "\n";
  }
  pairwise->criteria.push_back(std::move(better));
  pairwise->indeterminate_below_confidence = rubric.indeterminate_below_confidence;
  auto judge = review::PrepareJudge(*pairwise);
  if (!judge) return std::unexpected(std::move(judge.error()));
  pairwise->judge = std::move(*judge);
  return std::shared_ptr<const review::Rubric>(std::move(pairwise));
}

boost::json::value PairSubject(const boost::json::value& first, const boost::json::value& second) {
  return boost::json::object{{"A", first}, {"B", second}};
}

Preference PreferenceOf(const boost::json::value& verdict) {
  const auto* results = verdict.is_object() ? verdict.as_object().if_contains("criteria_results") : nullptr;
  if (results == nullptr || !results->is_array() || results->as_array().empty()) return Preference::kTie;
  const auto& first = results->as_array().front();
  const auto* said = first.is_object() ? first.as_object().if_contains("verdict") : nullptr;
  if (said == nullptr || !said->is_string()) return Preference::kTie;
  if (said->as_string() == "pass") return Preference::kFirst;
  if (said->as_string() == "fail") return Preference::kSecond;
  return Preference::kTie;
}

}  // namespace skillrunner
