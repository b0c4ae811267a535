#pragma once

// "Repair on retry" for the simulated provider: when the conversation holds a
// previous answer and a user turn listing its errors, one per line as
//   - /path/to/field: message
//   - (root): message
// the provider keeps that answer and regenerates only the named values, each
// to a value that differs from the one named and is not empty (so that what
// a skill's rule rejected changes too). A fresh retry (design.md §9.2: the
// original messages and one more user turn with the errors, no assistant
// turn) names no answer: the provider regenerates the one it gave the
// original messages, and repairs that.

#include <boost/json/value.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "services/providers/provider.h"
#include "services/providers/simulated/schema_instance.h"

namespace skillrunner::providers::simulation {

struct FeedbackError {
  std::string pointer;  // RFC 6901; "" for the root
  std::string message;
};

struct RepairRequest {
  std::string previous_answer;  // the last assistant turn, as sent ("" when fresh)
  std::vector<FeedbackError> errors;
  bool fresh = false;  // no assistant turn: the errors are in a second user turn in a row
};

// The last assistant turn and the error lines of the user turns after it, or
// (fresh) the error lines of a last user turn that follows another user
// turn; nullopt when there are no such error lines.
std::optional<RepairRequest> FindRepairRequest(const std::vector<ChatMessage>& messages);

// The one JSON value in `text`, tolerating a code fence or prose around it.
std::optional<boost::json::value> ExtractJson(std::string_view text);

// Regenerates what `errors` name in `answer` from the generator's schema: a
// missing property is added, an unexpected one removed, anything else
// regenerated; a root error regenerates everything. The rest is kept as is.
void Repair(boost::json::value& answer, const std::vector<FeedbackError>& errors, InstanceGenerator& generator);

}  // namespace skillrunner::providers::simulation
