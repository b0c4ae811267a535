#pragma once

// The prompt a rubric judge gets (design.md §4). Pure.

#include <boost/json/value.hpp>
#include <string>

#include "services/review/rubric.h"

namespace skillrunner::review {

// Lists every criterion by id with its description ("(required)" after the id
// of a required one), guidance and examples, then asks, per criterion, for the
// reasoning first, then the verdict pass|fail|indeterminate and a confidence
// 0-100, then the issues and suggested fixes.
std::string JudgeSystemPrompt(const Rubric& rubric);

// "Subject:\n<subject>" and, when context is given (not null),
// "\n\nContext:\n<context>". Strings as they are, other JSON as JSON text.
std::string JudgeUserPrompt(const boost::json::value& subject, const boost::json::value* context);

}  // namespace skillrunner::review
