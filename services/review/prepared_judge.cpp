#include "services/review/prepared_judge.h"

#include "runner/json_text.h"
#include "services/generation/strict_schema.h"
#include "services/review/judge_prompt.h"
#include "services/review/verdict_schema.h"

namespace skillrunner::review {
namespace {

boost::json::value WireOrNull(const boost::json::value& schema, generation::StrictDialect dialect) {
  auto strict = generation::MakeStrictSchema(schema, dialect);
  return strict ? std::move(strict->wire) : boost::json::value(nullptr);
}

}  // namespace

std::expected<std::shared_ptr<const RubricJudge>, std::string> PrepareJudge(const Rubric& rubric) {
  auto judge = std::make_shared<RubricJudge>();
  judge->verdict_schema = VerdictSchema(rubric);
  judge->verdict_schema_text = CompactJson(judge->verdict_schema);
  auto compiled = validation::CompiledSchema::Compile(judge->verdict_schema);
  if (!compiled) return std::unexpected("the verdict schema does not compile: " + compiled.error());
  judge->compiled = *compiled;
  judge->system_prompt = JudgeSystemPrompt(rubric);
  judge->openai_wire = WireOrNull(judge->verdict_schema, generation::StrictDialect::kOpenAi);
  judge->anthropic_wire = WireOrNull(judge->verdict_schema, generation::StrictDialect::kAnthropic);
  return judge;
}

}  // namespace skillrunner::review
