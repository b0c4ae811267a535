#pragma once

// Gemini streamGenerateContent streamed as server-sent events (docs/streaming.md).

#include <memory>

#include "services/providers/chat_stream.h"

namespace skillrunner::providers {

// Gemini: each event is a whole GenerateContentResponse holding the next text
// part; finishReason and usageMetadata come on the last.
std::unique_ptr<ChatStream> MakeGeminiChatStream(const ChatRequest& request);

}  // namespace skillrunner::providers
