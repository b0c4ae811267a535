#pragma once

// Provider strict modes (OpenAI `strict: true`, Anthropic `output_config`)
// accept only a subset of JSON Schema (docs/development/providers-notes.md §1, §2). This unit
// turns a skill's schema into that subset, lists what only client-side
// validation still enforces, and maps a strict answer back so that it can be
// validated against the ORIGINAL schema (design.md §5.1). Pure: no I/O,
// thread-safe, never throws or crashes on any JSON input.

#include <boost/json/value.hpp>
#include <expected>
#include <string>
#include <vector>

#include "services/common/error.h"

namespace skillrunner::generation {

// OpenAI response_format strict, Anthropic output_config, Gemini
// generationConfig.responseJsonSchema (docs/development/providers-notes.md §1-3).
enum class StrictDialect { kOpenAi, kAnthropic, kGemini };

struct StrictSchema {
  boost::json::value wire;  // what goes on the wire
  // One line per constraint that the wire copy lost and only client-side
  // validation enforces, in schema order, formatted
  //   "<pointer>: <keyword> <json value> is enforced only by client-side validation"
  // e.g. "/properties/name: maxLength 200 is enforced only by client-side validation".
  // <pointer> is an RFC 6901 pointer into the original schema, "(root)" for
  // the root. oneOf reads
  //   "<pointer>: oneOf (exactly one branch) is enforced only by client-side validation; sent as anyOf".
  std::vector<std::string> client_only;
  // design.md §9.2 any root: a root that is not one `type: object` schema (an
  // array, a string, an enum, a root anyOf) goes on the wire as the one
  // required property of a closed object, {"value": ROOT}; the answer is
  // unwrapped (UnwrapStrictAnswer) before it is mapped back and validated.
  bool wrapped = false;
};

// Fails with "<pointer>: <what the provider cannot take>" when the provider
// cannot take the schema at all (OpenAI: a free-form object, an untyped array, a map type, over the size limits;
// Anthropic: recursion, over the complexity caps; both: an external $ref).
// The caller decides what follows (refuse the skill at load, or use the
// prompt-and-validate path instead).
Result<StrictSchema> MakeStrictSchema(const boost::json::value& original, StrictDialect dialect);

// The dialect of a provider kind: anthropic, gemini, else openai.
StrictDialect DialectOf(std::string_view provider_kind);

// Maps a strict answer back before validation against the ORIGINAL schema: a
// null becomes absent ONLY for a property that the original schema neither
// requires nor allows to be null (design.md §5.1). Walks objects and arrays
// alongside the original schema (properties, additionalProperties, items,
// allOf, local $ref; anyOf/oneOf by the branch the value fits best by type).
// Everything else is copied unchanged.
// The answer to a wrapped wire schema without its wrapper: the value of
// {"value": X}; anything else unchanged, for validation to report.
boost::json::value UnwrapStrictAnswer(boost::json::value answer);

boost::json::value MapBackStrictAnswer(const boost::json::value& answer, const boost::json::value& original);

}  // namespace skillrunner::generation
