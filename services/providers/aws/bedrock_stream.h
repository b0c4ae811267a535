#pragma once

#include <memory>

#include "services/providers/chat_stream.h"

namespace skillrunner::providers::aws {

// ConverseStream's answer (design.md §10.7, §11.5): event frames (CRCs checked) of messageStart,
// contentBlockStart, contentBlockDelta (delta.text, or delta.toolUse.input as a fragment of the tool's
// JSON), contentBlockStop, messageStop (stopReason) and metadata (usage); an exception frame ends it
// with that error. The text of the answer (a tool's input in tool mode) goes to on_text as it comes.
std::unique_ptr<ChatStream> MakeBedrockChatStream(const ChatRequest& request);

}  // namespace skillrunner::providers::aws
