#pragma once

#include <boost/json/value.hpp>
#include <string>
#include <vector>

#include "services/common/error.h"
#include "services/common/invocation.h"
#include "services/providers/provider.h"

namespace skillrunner::generation {

// The first request's messages. In validation_loop and json_object modes the
// schema is given once, here, with the instruction to answer with one JSON
// value only (the word "JSON" is always present, as JSON mode requires).
// `schema_in_prompt` is the schema's JSON text, serialised once at load.
// `avoid` lists earlier mistakes of this skill in the caller's session.
std::vector<providers::ChatMessage> FirstMessages(const std::string& system, const std::string& user,
                                                  const std::string* schema_in_prompt,
                                                  const std::vector<std::string>& avoid);

// The user turn after an answer that failed: every error as
// "- pointer: what was expected, what was found" and a request for the
// corrected JSON only. The schema is not repeated (it is in the conversation).
// `fresh`: the turn follows the original messages instead of the answer, so
// it speaks of "an earlier answer".
// `failed` is the attempt's kind: parse, validation or rule. `tool` (tool
// mode) names the tool to call again instead of asking for JSON text.
std::string RetryTurn(const std::vector<FieldError>& errors, AttemptKind failed, bool fresh = false,
                      std::string_view tool = {});

// "(root)" for the empty pointer.
std::string ShownPointer(const std::string& pointer);

}  // namespace skillrunner::generation
