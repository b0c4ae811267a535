#pragma once

// OpenAI chat completions as server-sent events (docs/streaming.md):
// chat.completion.chunk events, then a usage chunk, then [DONE]. llama.cpp's
// server and the other OpenAI-compatible servers send the same.

#include <memory>

#include "services/providers/chat_stream.h"

namespace skillrunner::providers {

// Reads one streamed answer: `choices[0].delta.content` (or a tool call's
// `function.arguments`) pieces go to request.on_text; `refusal` pieces,
// `finish_reason`, `model`, `id` and the `usage` chunk are kept for the
// answer; an `{"error": ...}` event ends it as a (retryable) ProviderError.
// A stream that ends without a finish_reason or [DONE] (and was not stopped
// on purpose) is a dropped connection. `request` must outlive it.
std::unique_ptr<ChatStream> MakeOpenAiChatStream(const ChatRequest& request);

}  // namespace skillrunner::providers
