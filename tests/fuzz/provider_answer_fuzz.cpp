// libFuzzer target (issue 18): bytes as a provider's 200 answer body through
// that provider's parser (ParseOpenAiResponse, ParseAnthropicResponse,
// ParseGeminiResponse; and its error parser, as for a 429), then the text
// through CheckAnswer as StructuredGenerator runs it: ExtractJson, the strict
// map-back (UnwrapStrictAnswer, MapBackStrictAnswer), lax coercion
// (CoerceToSchema) and validation against a fixed schema, with that
// provider's strict wire copy made by MakeStrictSchema.
// The first byte chooses: bits 0-1 the provider (openai, anthropic, gemini,
// or none: the rest is the answer's text itself), bits 2-3 the output mode
// (native, tool, json_object, none), bit 4 lax coercion, bit 5 the schema (an
// object with optional, nullable and nested members, or an array root that
// the wire wraps as {"value": ...}).
//   scripts/fuzz.sh provider_answer SECONDS

#include <array>
#include <boost/json/parse.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "services/generation/answer_check.h"
#include "services/generation/strict_schema.h"
#include "services/providers/anthropic_answer.h"
#include "services/providers/anthropic_provider.h"
#include "services/providers/gemini_answer.h"
#include "services/providers/gemini_provider.h"
#include "services/providers/openai_provider.h"

namespace {

namespace json = boost::json;
namespace generation = skillrunner::generation;
namespace providers = skillrunner::providers;
using skillrunner::OutputMode;

constexpr std::string_view kObjectSchema = R"({
  "type": "object",
  "required": ["name", "email", "tags"],
  "additionalProperties": false,
  "properties": {
    "name": {"type": "string", "minLength": 1, "maxLength": 200},
    "email": {"type": "string", "format": "email"},
    "phone": {"type": ["string", "null"], "pattern": "^[+0-9 ()-]{6,20}$"},
    "priority": {"type": "integer", "minimum": 1, "maximum": 4},
    "score": {"type": "number", "multipleOf": 0.5},
    "needs_human": {"type": "boolean"},
    "category": {"enum": ["billing", "bug", "other"]},
    "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 5, "uniqueItems": true},
    "address": {"$ref": "#/definitions/address"},
    "contact": {"anyOf": [{"type": "string"}, {"$ref": "#/definitions/address"}]}
  },
  "definitions": {
    "address": {
      "type": "object",
      "required": ["city"],
      "additionalProperties": false,
      "properties": {"city": {"type": "string"}, "zip": {"type": "string", "pattern": "^[0-9]{5}$"}}
    }
  }
})";

constexpr std::string_view kArraySchema = R"({
  "type": "array",
  "minItems": 1,
  "items": {"type": "object", "required": ["id"], "additionalProperties": false,
            "properties": {"id": {"type": "integer"}, "note": {"type": "string"}}}
})";

constexpr std::array<generation::StrictDialect, 3> kDialects = {
    generation::StrictDialect::kOpenAi, generation::StrictDialect::kAnthropic, generation::StrictDialect::kGemini};

// The schema in every form the loop needs, with this dialect's wire copy.
generation::AnswerSchema MakeAnswerSchema(std::string_view text, generation::StrictDialect dialect) {
  generation::AnswerSchema schema;
  schema.original = json::parse(text);
  schema.text = std::string(text);
  auto compiled = skillrunner::validation::CompiledSchema::Compile(schema.original);
  if (!compiled) std::abort();
  schema.compiled = *compiled;
  auto strict = generation::MakeStrictSchema(schema.original, dialect);
  if (!strict) std::abort();
  schema.strict_wire = std::move(strict->wire);
  schema.wrapped = strict->wrapped;
  return schema;
}

struct Fixture {
  // [schema][dialect]
  std::array<std::array<generation::AnswerSchema, 3>, 2> schemas;
  generation::GenerationSpec strict_spec;
  generation::GenerationSpec lax_spec;
  providers::ChatRequest request;

  Fixture() {
    for (std::size_t d = 0; d < kDialects.size(); ++d) {
      schemas[0][d] = MakeAnswerSchema(kObjectSchema, kDialects[d]);
      schemas[1][d] = MakeAnswerSchema(kArraySchema, kDialects[d]);
    }
    strict_spec.schema_name = "fuzz";
    lax_spec.schema_name = "fuzz";
    lax_spec.coercion = generation::Coercion::kLax;
    request.model = "fuzz-model";
    request.messages.push_back({"user", "Extract the contact."});
  }
};

std::expected<providers::ChatResponse, providers::ProviderError> Parse(unsigned provider,
                                                                       const skillrunner::http::HttpResponse& response,
                                                                       const providers::ChatRequest& request) {
  skillrunner::http::HttpResponse refused = response;
  refused.status = 429;
  switch (provider) {
    case 0:
      (void)providers::ParseOpenAiError(refused);
      return providers::ParseOpenAiResponse(response, request);
    case 1:
      (void)providers::ParseAnthropicError(refused);
      return providers::ParseAnthropicResponse(response, request);
    default:
      (void)providers::ParseGeminiError(refused);
      return providers::ParseGeminiResponse(response, request);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const Fixture fixture;
  if (size == 0) return 0;
  const unsigned choice = data[0];
  const unsigned provider = choice & 3;
  constexpr std::array<OutputMode, 4> kModes = {OutputMode::kNative, OutputMode::kTool, OutputMode::kJsonObject,
                                                OutputMode::kNone};
  const OutputMode mode = kModes[(choice >> 2) & 3];
  const generation::GenerationSpec& spec = (choice & 16) != 0 ? fixture.lax_spec : fixture.strict_spec;
  std::string body(reinterpret_cast<const char*>(data) + 1, size - 1);

  providers::ChatResponse answer;
  if (provider == 3) {
    answer.text = std::move(body);
    answer.tool_call = mode == OutputMode::kTool;
  } else {
    skillrunner::http::HttpResponse response{200, {{"x-request-id", "req_1"}, {"retry-after", "2"}}, std::move(body)};
    auto parsed = Parse(provider, response, fixture.request);
    if (!parsed) return 0;
    answer = std::move(*parsed);
  }
  const generation::AnswerSchema& schema = fixture.schemas[(choice >> 5) & 1][provider < 3 ? provider : 0];
  skillrunner::Attempt attempt;
  auto value = generation::CheckAnswer(spec, schema, mode, answer, attempt);
  (void)value;
  return 0;
}
