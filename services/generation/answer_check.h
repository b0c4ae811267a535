#pragma once

// The check of one model answer (design.md §5.1): JSON extraction, the strict
// map-back, lax coercion, schema and extra validation. Pure: no I/O, no
// provider; StructuredGenerator runs it on every answer, and
// tests/fuzz/provider_answer_fuzz.cpp on every answer body it makes.

#include <boost/json/value.hpp>
#include <optional>

#include "services/common/invocation.h"
#include "services/generation/generation_spec.h"
#include "services/providers/provider.h"

namespace skillrunner::generation {

// Parses and validates `answer` into `attempt` (kind ok, parse or
// validation: repair, coerced and errors set); the value when it is usable.
// `mode` is the output mode the request was sent in (a downgraded model's
// may differ from spec.mode). In tool mode only a call of the tool counts:
// text instead is a parse failure.
std::optional<boost::json::value> CheckAnswer(const GenerationSpec& spec, const AnswerSchema& schema, OutputMode mode,
                                              const providers::ChatResponse& answer, Attempt& attempt);

}  // namespace skillrunner::generation
