#include "services/review/judge_prompt.h"

#include <boost/json/serialize.hpp>

#include "services/common/json_text.h"

namespace skillrunner::review {
namespace json = boost::json;

namespace {

std::string Shown(const json::value& value) {
  if (value.is_string()) return std::string(value.get_string());
  return CompactJson(value);
}

// "Example (fail): <subject> (<reason>)" for the rubric's {subject?, verdict, reason?}.
std::string Example(const json::value& example) {
  const json::object* obj = example.if_object();
  if (obj == nullptr) return "Example: " + Shown(example);
  std::string out = "Example";
  if (const json::value* verdict = obj->if_contains("verdict"); verdict && verdict->is_string()) {
    out += " (" + std::string(verdict->get_string()) + ")";
  }
  out += ":";
  if (const json::value* subject = obj->if_contains("subject")) out += " " + Shown(*subject);
  if (const json::value* reason = obj->if_contains("reason"); reason && reason->is_string()) {
    out += " (" + std::string(reason->get_string()) + ")";
  }
  return out;
}

}  // namespace

std::string JudgeSystemPrompt(const Rubric& rubric) {
  std::string out =
      "You are a careful, impartial reviewer. Judge the subject the user gives you against "
      "each criterion of the rubric \"" +
      rubric.id + "\"";
  if (!rubric.description.empty()) out += " (" + rubric.description + ")";
  out += ". Use the context, when one is given, as the source of truth.\n\nCriteria:\n";
  for (const auto& criterion : rubric.criteria) {
    out += "- " + criterion.id + (criterion.required ? " (required)" : "") + ": " + criterion.description + "\n";
    if (!criterion.guidance.empty()) out += "  Guidance: " + criterion.guidance + "\n";
    for (const auto& example : criterion.examples) out += "  " + Example(example) + "\n";
  }
  out +=
      "\nFor every criterion, exactly once and in this order: first write your reasoning, then give "
      "the verdict \"pass\", \"fail\" or \"indeterminate\" (when the subject does not let you decide), "
      "then your confidence in that verdict from 0 to 100. Then list the issues you found and "
      "the fixes you suggest, one per entry (empty lists when there are none).";
  return out;
}

std::string JudgeUserPrompt(const json::value& subject, const json::value* context) {
  std::string out = "Subject:\n" + Shown(subject);
  if (context != nullptr && !context->is_null()) out += "\n\nContext:\n" + Shown(*context);
  return out;
}

}  // namespace skillrunner::review
