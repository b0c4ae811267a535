#include "services/generation/rules.h"

#include <algorithm>
#include <boost/json/serialize.hpp>

#include "services/generation/prompt_builder.h"

namespace skillrunner::generation {
namespace json = boost::json;
namespace {

const json::value* At(const json::value& answer, const std::string& pointer) {
  boost::system::error_code ec;
  const json::value* found = answer.find_pointer(pointer, ec);
  return ec ? nullptr : found;
}

// Why the value is empty, or nullopt when it holds something.
std::optional<std::string> Emptiness(const json::value* value) {
  if (value == nullptr) return "absent";
  if (value->is_null()) return "null";
  if (value->is_string() && value->as_string().empty()) return "an empty string";
  if (value->is_array() && value->as_array().empty()) return "an empty array";
  if (value->is_object() && value->as_object().empty()) return "an empty object";
  return std::nullopt;
}

bool Applies(const Rule& rule, const json::value& answer) {
  if (!rule.when) return true;
  const json::value* guard = At(answer, rule.when->path);
  return guard != nullptr && *guard == rule.when->equals;
}

void CheckNonEmpty(const Rule& rule, const json::value& answer, std::vector<FieldError>& errors) {
  for (const std::string& pointer : rule.non_empty) {
    if (auto why = Emptiness(At(answer, pointer))) {
      std::string message = "must not be empty, found " + *why;
      if (rule.when) {
        message +=
            " (required when " + ShownPointer(rule.when->path) + " is " + json::serialize(rule.when->equals) + ")";
      }
      errors.push_back({pointer, std::move(message)});
    }
  }
}

}  // namespace

std::vector<FieldError> CheckNonEmpty(const std::vector<Rule>& rules, const json::value& answer) {
  std::vector<FieldError> errors;
  for (const Rule& rule : rules) {
    if (Applies(rule, answer)) CheckNonEmpty(rule, answer, errors);
  }
  return errors;
}

bool HasExecRules(const std::vector<Rule>& rules) {
  return std::any_of(rules.begin(), rules.end(), [](const Rule& rule) { return rule.exec.has_value(); });
}

boost::asio::awaitable<Result<std::vector<FieldError>>> CheckRules(const std::vector<Rule>& rules,
                                                                   const json::value& answer, RuleRunner* runner,
                                                                   InvocationContext& ctx) {
  std::vector<FieldError> errors;
  for (const Rule& rule : rules) {
    if (!Applies(rule, answer)) continue;
    CheckNonEmpty(rule, answer, errors);
    if (!rule.exec) continue;
    if (runner == nullptr) {
      co_return Fail(ErrorCode::kConfigInvalid, "validator \"" + rule.exec->name + "\" needs a process runner");
    }
    auto rejected = co_await runner->Run(*rule.exec, answer, ctx);
    if (!rejected) co_return std::unexpected(std::move(rejected.error()));
    errors.insert(errors.end(), rejected->begin(), rejected->end());
  }
  co_return errors;
}

}  // namespace skillrunner::generation
