#pragma once

// A skill tree whose skills each end one way (a success, or one error code),
// for tests that collect real answers of `run` and `serve`.

#include <string>

#include "tests/support/temp_tree.h"

namespace skillrunner::testing {

// Skills: contact (succeeds), invalid (MAX_RETRIES_EXCEEDED), unavailable
// (PROVIDER_UNAVAILABLE), refused, filtered, truncated, budget
// (BUDGET_EXCEEDED), failing (HANDLER_FAILED), judged (JUDGE_ERROR),
// limited (OVERLOADED), slow (answers after 5 s), echo (built-in handler),
// remote (the OpenAI-compatible provider at `llm_base_url`; "" leaves it
// out) and broken (does not load: CONFIG_INVALID).
void WriteProtocolTree(const TempTree& tree, const std::string& llm_base_url = "");

}  // namespace skillrunner::testing
