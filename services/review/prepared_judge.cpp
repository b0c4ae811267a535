#include "services/review/prepared_judge.h"

#include "services/common/json_text.h"
#include "services/generation/strict_schema.h"
#include "services/review/judge_prompt.h"
#include "services/review/verdict_schema.h"

namespace skillrunner::review {
namespace {

using generation::AnswerSchema;

std::shared_ptr<const AnswerSchema> WithWire(const AnswerSchema& plain, generation::StrictDialect dialect) {
  auto schema = std::make_shared<AnswerSchema>(plain);
  auto strict = generation::MakeStrictSchema(plain.original, dialect);
  if (strict) {
    schema->strict_wire = std::move(strict->wire);
    schema->wrapped = strict->wrapped;
  }
  generation::ShareWire(*schema);
  return schema;
}

}  // namespace

Result<std::shared_ptr<const RubricJudge>> PrepareJudge(const Rubric& rubric) {
  AnswerSchema plain;
  plain.original = VerdictSchema(rubric);
  plain.text = CompactJson(plain.original);
  auto compiled = validation::CompiledSchema::Compile(plain.original);
  if (!compiled) return Fail(std::move(compiled.error()), "the verdict schema does not compile");
  plain.compiled = *compiled;
  generation::ShareWire(plain);
  auto judge = std::make_shared<RubricJudge>();
  judge->system_prompt = JudgeSystemPrompt(rubric);
  judge->openai = WithWire(plain, generation::StrictDialect::kOpenAi);
  judge->anthropic = WithWire(plain, generation::StrictDialect::kAnthropic);
  judge->gemini = WithWire(plain, generation::StrictDialect::kGemini);
  judge->plain = std::make_shared<const AnswerSchema>(std::move(plain));
  return judge;
}

}  // namespace skillrunner::review
