#pragma once

// Bedrock Converse's answers as the runner sees them (design.md §11.5).

#include <boost/json/object.hpp>
#include <expected>

#include "services/http/http_client.h"
#include "services/providers/provider.h"

namespace skillrunner::providers::aws {

// `output.message.content` (text blocks, or a toolUse's input for a tool answer), `stopReason`
// (max_tokens: a truncation; guardrail_intervened, content_filtered: the content filter), `usage`
// (cache reads and writes counted in the input, as for the other providers).
std::expected<ChatResponse, ProviderError> ParseBedrockAnswer(const boost::json::object& root,
                                                              const http::HttpResponse& response,
                                                              const ChatRequest& request);
std::expected<ChatResponse, ProviderError> ParseBedrockResponse(const http::HttpResponse& response,
                                                                const ChatRequest& request);

// The error type (x-amzn-ErrorType, without what follows a ':'; else the body's __type) and message.
// ThrottlingException feeds the rate limit; ModelNotReadyException (also 429), ServiceUnavailable,
// InternalServer and ModelTimeout are transient; ModelErrorException and ValidationException are not.
// A ValidationException naming outputConfig or toolConfig says the model cannot take that mode.
ProviderError ParseBedrockError(const http::HttpResponse& response);

// An exception frame of ConverseStream (`:exception-type`, its JSON payload) as the same error.
ProviderError BedrockStreamError(std::string_view type, std::string_view payload);

}  // namespace skillrunner::providers::aws
