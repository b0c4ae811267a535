#pragma once

// "Repair on retry" for the simulated provider: when the conversation holds a
// previous answer and a user turn listing its errors, one per line as
//   - /path/to/field: message
//   - (root): message
// the provider keeps that answer and regenerates only the named values.

#include <boost/json/value.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "services/providers/provider.h"
#include "services/providers/schema_instance.h"

namespace skillrunner::providers::simulation {

struct FeedbackError {
  std::string pointer;  // RFC 6901; "" for the root
  std::string message;
};

struct RepairRequest {
  std::string previous_answer;  // the last assistant turn, as sent
  std::vector<FeedbackError> errors;
};

// The last assistant turn and the error lines of the user turns after it;
// nullopt when there is no assistant turn or no error line after it.
std::optional<RepairRequest> FindRepairRequest(const std::vector<ChatMessage>& messages);

// The one JSON value in `text`, tolerating a code fence or prose around it.
std::optional<boost::json::value> ExtractJson(std::string_view text);

// Regenerates what `errors` name in `answer` from the generator's schema: a
// missing property is added, an unexpected one removed, anything else
// regenerated; a root error regenerates everything. The rest is kept as is.
void Repair(boost::json::value& answer, const std::vector<FeedbackError>& errors,
            InstanceGenerator& generator);

}  // namespace skillrunner::providers::simulation
