#include "services/generation/answer_check.h"

#include <string>
#include <utility>

#include "services/generation/json_extract.h"
#include "services/generation/strict_schema.h"

namespace skillrunner::generation {
namespace json = boost::json;

std::optional<json::value> CheckAnswer(const GenerationSpec& spec, const AnswerSchema& schema, OutputMode mode,
                                       const providers::ChatResponse& answer, Attempt& attempt) {
  if (mode == OutputMode::kTool && !answer.tool_call) {
    attempt.kind = AttemptKind::kParse;
    attempt.errors = {{"", "the model answered with text instead of calling the tool \"" + spec.schema_name + "\""}};
    return std::nullopt;
  }
  auto extracted = ExtractJson(answer.text);
  if (!extracted) {
    attempt.kind = AttemptKind::kParse;
    attempt.errors = {{"", "not JSON: " + extracted.error().message}};
    return std::nullopt;
  }
  attempt.repair = extracted->repair;
  json::value value = std::move(extracted->value);
  const bool strict_wire = mode == OutputMode::kNative || mode == OutputMode::kTool;
  if (strict_wire && !schema.strict_wire.is_null()) {
    if (schema.wrapped) value = UnwrapStrictAnswer(std::move(value));
    value = MapBackStrictAnswer(value, schema.original);
  }
  if (spec.coercion == Coercion::kLax) {
    attempt.coerced = CoerceToSchema(value, schema.original);
    if (!attempt.coerced.empty()) attempt.repair = attempt.repair ? *attempt.repair + ",coerce" : "coerce";
  }
  attempt.errors = schema.compiled->Validate(value);
  if (spec.extra_validator) {
    auto more = spec.extra_validator(value);
    attempt.errors.insert(attempt.errors.end(), more.begin(), more.end());
  }
  attempt.kind = attempt.errors.empty() ? AttemptKind::kOk : AttemptKind::kValidation;
  if (!attempt.errors.empty()) return std::nullopt;
  return value;
}

}  // namespace skillrunner::generation
