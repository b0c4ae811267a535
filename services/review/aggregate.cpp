#include "services/review/aggregate.h"

#include <array>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <cmath>
#include <string>

namespace skillrunner::review {
namespace json = boost::json;

namespace {

constexpr std::array<std::string_view, 3> kVerdicts = {"pass", "fail", "indeterminate"};

struct Vote {
  std::string verdict = "indeterminate";
  std::string reasoning = "the judge gave no verdict for this criterion";
  double confidence = 0;
};

double Round2(double x) { return std::round(x * 100) / 100; }

// An integral number as an integer (90, not 9E1), else the double.
json::value Number(double x) {
  double r = Round2(x);
  if (r == std::floor(r) && std::fabs(r) < 1e15) return static_cast<std::int64_t>(r);
  return r;
}

Vote VoteOf(const json::value& answer, const std::string& id, double bar) {
  Vote vote;
  const json::object* root = answer.if_object();
  const json::value* results = root ? root->if_contains("criteria_results") : nullptr;
  if (results == nullptr || !results->is_array()) return vote;
  for (const auto& item : results->get_array()) {
    const json::object* obj = item.if_object();
    if (obj == nullptr) continue;
    const json::value* cid = obj->if_contains("criterion_id");
    if (cid == nullptr || !cid->is_string() || cid->get_string() != id) continue;
    if (const json::value* v = obj->if_contains("verdict"); v && v->is_string()) vote.verdict = v->get_string();
    if (const json::value* r = obj->if_contains("reasoning"); r && r->is_string()) vote.reasoning = r->get_string();
    if (const json::value* c = obj->if_contains("confidence"); c && c->is_number()) {
      vote.confidence = c->to_number<double>();
    }
    if (vote.verdict != "indeterminate" && vote.confidence < bar) vote.verdict = "indeterminate";
    return vote;
  }
  return vote;
}

void AppendStrings(const json::value& answer, std::string_view key, json::array& out) {
  const json::object* root = answer.if_object();
  const json::value* list = root ? root->if_contains(key) : nullptr;
  if (list == nullptr || !list->is_array()) return;
  for (const auto& item : list->get_array()) {
    if (!item.is_string()) continue;
    bool seen = false;
    for (const auto& existing : out) seen = seen || existing == item;
    if (!seen) out.push_back(item);
  }
}

}  // namespace

std::string_view EffectivePassRule(const Rubric& rubric) {
  if (rubric.pass_rule == "all" || rubric.pass_rule == "required") return rubric.pass_rule;
  for (const auto& criterion : rubric.criteria) {
    if (criterion.required) return "required";
  }
  return "all";
}

namespace {

// One criterion's votes tallied: the winning verdict (indeterminate on a tie
// for first place or when nobody voted) and how many gave it.
struct Tally {
  std::array<int, 3> counts{};
  std::string verdict;
  int top = 0;
  bool tie = false;
};

Tally Count(const std::vector<Vote>& votes) {
  Tally tally;
  for (const auto& vote : votes) {
    for (std::size_t k = 0; k < kVerdicts.size(); ++k) tally.counts[k] += vote.verdict == kVerdicts[k] ? 1 : 0;
  }
  std::size_t best = 2;  // indeterminate when nobody voted
  for (std::size_t k = 0; k < kVerdicts.size(); ++k) {
    if (tally.counts[k] > tally.top) {
      tally.top = tally.counts[k];
      best = k;
      tally.tie = false;
    } else if (tally.counts[k] == tally.top && tally.top > 0) {
      tally.tie = true;
    }
  }
  tally.verdict = tally.tie ? "indeterminate" : std::string(kVerdicts[best]);
  return tally;
}

// The criteria_results entry of one criterion.
json::object ResultEntry(const std::string& criterion_id, const std::vector<Vote>& votes, const Tally& tally,
                         std::size_t samples) {
  std::string reasoning;
  double confidence_sum = 0;
  int confidence_n = 0;
  for (const auto& vote : votes) {
    if (!tally.tie && vote.verdict != tally.verdict) continue;
    if (!tally.tie && reasoning.empty()) reasoning = vote.reasoning;
    confidence_sum += vote.confidence;
    ++confidence_n;
  }
  if (tally.tie) {
    reasoning = "the judges split:";
    for (std::size_t k = 0; k < kVerdicts.size(); ++k) {
      if (tally.counts[k] == 0) continue;
      reasoning +=
          (reasoning.back() == ':' ? " " : ", ") + std::to_string(tally.counts[k]) + " " + std::string(kVerdicts[k]);
    }
  }
  json::object entry;
  entry["criterion_id"] = criterion_id;
  entry["verdict"] = tally.verdict;
  entry["reasoning"] = reasoning;
  entry["confidence"] = Number(confidence_n ? confidence_sum / confidence_n : 0);
  if (samples > 1) entry["agreement"] = Number(static_cast<double>(tally.top) / static_cast<double>(samples));
  return entry;
}

}  // namespace

json::value Aggregate(const Rubric& rubric, const std::vector<json::value>& answers) {
  const bool only_required = EffectivePassRule(rubric) == "required";
  json::array issues;
  json::array fixes;
  for (const auto& answer : answers) {
    AppendStrings(answer, "issues", issues);
    AppendStrings(answer, "suggested_fixes", fixes);
  }
  json::array failed_lines;
  json::array indeterminate;
  json::array results;
  bool pass = true;
  for (const auto& criterion : rubric.criteria) {
    std::vector<Vote> votes;
    for (const auto& answer : answers)
      votes.push_back(VoteOf(answer, criterion.id, rubric.indeterminate_below_confidence));
    Tally tally = Count(votes);
    json::object entry = ResultEntry(criterion.id, votes, tally, answers.size());
    if (tally.verdict == "fail") {
      failed_lines.push_back(json::value(criterion.id + ": " + std::string(entry.at("reasoning").as_string())));
      if (!only_required || criterion.required) pass = false;
    } else if (tally.verdict == "indeterminate") {
      indeterminate.push_back(json::value(criterion.id));
    }
    results.push_back(std::move(entry));
  }
  for (auto& line : failed_lines) {
    bool seen = false;
    for (const auto& existing : issues) seen = seen || existing == line;
    if (!seen) issues.push_back(std::move(line));
  }
  json::object out;
  out["pass"] = pass;
  out["issues"] = std::move(issues);
  out["suggested_fixes"] = std::move(fixes);
  out["indeterminate"] = std::move(indeterminate);
  out["criteria_results"] = std::move(results);
  return out;
}

}  // namespace skillrunner::review
