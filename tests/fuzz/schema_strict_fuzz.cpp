// libFuzzer target (issue 18): bytes as a JSON Schema through the strict
// transform of every provider kind (MakeStrictSchema for OpenAI, Anthropic and
// Gemini), the wire copy placed in each provider's request body in native and
// tool mode (OpenAiProvider, AnthropicProvider, GeminiProvider::RequestBody),
// then answers mapped back: an instance of the wire schema made as the
// simulated provider makes one (InstanceGenerator), unwrapped
// (UnwrapStrictAnswer) and mapped back onto the original (MapBackStrictAnswer),
// and a few fixed small values mapped back too.
//   scripts/fuzz.sh schema_strict SECONDS

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "services/generation/strict_schema.h"
#include "services/providers/anthropic_provider.h"
#include "services/providers/gemini_provider.h"
#include "services/providers/openai_provider.h"
#include "services/providers/simulated/schema_instance.h"

namespace {

namespace json = boost::json;
namespace generation = skillrunner::generation;
namespace providers = skillrunner::providers;

const skillrunner::EnvLookup kNoEnv = [](std::string_view) -> std::optional<std::string> { return std::nullopt; };

void RequestBodies(generation::StrictDialect dialect, const json::value& wire) {
  static const providers::OpenAiProvider openai({}, nullptr, kNoEnv);
  static const providers::AnthropicProvider anthropic({}, nullptr, kNoEnv);
  static const providers::GeminiProvider gemini({}, nullptr, kNoEnv);
  providers::ChatRequest request;
  request.model = "fuzz-model";
  request.messages.push_back({"user", "Answer."});
  request.response_format.name = "fuzz";
  request.response_format.schema = std::make_shared<const boost::json::value>(wire);
  request.response_format.strict = true;
  for (auto kind : {providers::ResponseFormat::Kind::kJsonSchema, providers::ResponseFormat::Kind::kTool}) {
    request.response_format.kind = kind;
    switch (dialect) {
      case generation::StrictDialect::kOpenAi:
        (void)json::serialize(openai.RequestBody(request));
        break;
      case generation::StrictDialect::kAnthropic:
        (void)json::serialize(anthropic.RequestBody(request));
        break;
      case generation::StrictDialect::kGemini:
        if (kind == providers::ResponseFormat::Kind::kJsonSchema) (void)json::serialize(gemini.RequestBody(request));
        break;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  boost::system::error_code ec;
  json::value schema = json::parse(std::string_view(reinterpret_cast<const char*>(data), size), ec);
  if (ec) return 0;
  static const json::value kSmall[] = {json::parse("{}"), json::parse(R"({"a":null,"b":[null,{"c":null}]})"),
                                       json::parse("[null]"), json::parse(R"({"value":{"a":null}})"), nullptr};
  for (const auto& value : kSmall) (void)generation::MapBackStrictAnswer(value, schema);
  for (auto dialect : {generation::StrictDialect::kOpenAi, generation::StrictDialect::kAnthropic,
                       generation::StrictDialect::kGemini}) {
    auto strict = generation::MakeStrictSchema(schema, dialect);
    if (!strict) continue;
    RequestBodies(dialect, strict->wire);
    providers::simulation::Rng rng(size);
    providers::simulation::InstanceGenerator generator(strict->wire, rng);
    json::value answer = generator.Generate();
    if (strict->wrapped) answer = generation::UnwrapStrictAnswer(std::move(answer));
    (void)json::serialize(generation::MapBackStrictAnswer(answer, schema));
  }
  return 0;
}
