#pragma once

// Gemini's answers as the runner sees them: a whole answer (or the one a
// stream adds up to) and an error answer.

#include <expected>

#include "services/http/http_client.h"
#include "services/providers/provider.h"

namespace skillrunner::providers {

std::expected<ChatResponse, ProviderError> ParseGeminiResponse(const http::HttpResponse& response,
                                                               const ChatRequest& request);
ProviderError ParseGeminiError(const http::HttpResponse& response);

}  // namespace skillrunner::providers
