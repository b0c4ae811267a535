#pragma once

// Applying the faults of one attempt (fault_script.h) to the simulated
// provider's answer: first to the JSON value, then to its text, or instead of
// an answer, as an HTTP error.

#include <boost/json/value.hpp>
#include <optional>
#include <string>
#include <vector>

#include "services/providers/provider.h"
#include "services/providers/simulated/fault_script.h"
#include "services/providers/simulated/schema_instance.h"

namespace skillrunner::providers::simulation {

// The first rate_limit / unavailable fault as the error it stands for, or
// nullopt when there is none.
std::optional<ProviderError> ErrorFault(const std::vector<Fault>& faults);

// Applies missing_field, wrong_type, out_of_range, extra_field and verdict
// faults, in order, to `answer`; others are ignored. The generator supplies
// the schema (for defaults and bounds) and fresh values.
void ApplyValueFaults(const std::vector<Fault>& faults, boost::json::value& answer, InstanceGenerator& generator);

// Judges: sets pass, issues, suggested_fixes and indeterminate (those of them
// the answer has) from the answer's criteria results.
void SummariseVerdict(boost::json::value& answer);

struct ShapedText {
  std::string text;
  std::optional<std::string> refusal;
  FinishReason finish_reason = FinishReason::kStop;
};

// Applies invalid_json, fence, prose, truncate, then refusal / content_filter.
void ApplyTextFaults(const std::vector<Fault>& faults, ShapedText& shaped);

}  // namespace skillrunner::providers::simulation
