#include "services/review/aggregate.h"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <array>
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

json::value Aggregate(const Rubric& rubric, const std::vector<json::value>& answers) {
  const bool only_required = EffectivePassRule(rubric) == "required";
  const bool sampled = answers.size() > 1;
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
    for (const auto& answer : answers) votes.push_back(VoteOf(answer, criterion.id, rubric.indeterminate_below_confidence));
    std::array<int, 3> counts{};
    for (const auto& vote : votes) {
      for (std::size_t k = 0; k < kVerdicts.size(); ++k) counts[k] += vote.verdict == kVerdicts[k] ? 1 : 0;
    }
    std::size_t best = 2;  // indeterminate when nobody voted
    int top = 0;
    bool tie = false;
    for (std::size_t k = 0; k < kVerdicts.size(); ++k) {
      if (counts[k] > top) {
        top = counts[k];
        best = k;
        tie = false;
      } else if (counts[k] == top && top > 0) {
        tie = true;
      }
    }
    std::string verdict(tie ? "indeterminate" : kVerdicts[best]);
    std::string reasoning;
    double confidence_sum = 0;
    int confidence_n = 0;
    for (const auto& vote : votes) {
      if (!tie && vote.verdict != verdict) continue;
      if (!tie && reasoning.empty()) reasoning = vote.reasoning;
      confidence_sum += vote.confidence;
      ++confidence_n;
    }
    if (tie) {
      reasoning = "the judges split:";
      for (std::size_t k = 0; k < kVerdicts.size(); ++k) {
        if (counts[k] == 0) continue;
        reasoning += (reasoning.back() == ':' ? " " : ", ") + std::to_string(counts[k]) + " " + std::string(kVerdicts[k]);
      }
    }
    json::object entry;
    entry["criterion_id"] = criterion.id;
    entry["verdict"] = verdict;
    entry["reasoning"] = reasoning;
    entry["confidence"] = Number(confidence_n ? confidence_sum / confidence_n : 0);
    if (sampled) entry["agreement"] = Number(static_cast<double>(top) / static_cast<double>(answers.size()));
    results.push_back(std::move(entry));

    if (verdict == "fail") {
      failed_lines.push_back(json::value(criterion.id + ": " + reasoning));
      if (!only_required || criterion.required) pass = false;
    } else if (verdict == "indeterminate") {
      indeterminate.push_back(json::value(criterion.id));
    }
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
