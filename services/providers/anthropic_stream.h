#pragma once

// Anthropic Messages streamed as server-sent events (docs/streaming.md).

#include <memory>

#include "services/providers/chat_stream.h"

namespace skillrunner::providers {

// Anthropic: message_start, content_block_start/delta/stop, message_delta,
// message_stop, ping, error. `text_delta` pieces (`input_json_delta` of the
// tool_use block in tool mode) go to request.on_text; the answer is the
// message the events add up to, read as a whole answer is
// (ParseAnthropicResponse). An `error` event ends it as a retryable error.
std::unique_ptr<ChatStream> MakeAnthropicChatStream(const ChatRequest& request);

}  // namespace skillrunner::providers
