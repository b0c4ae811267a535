#pragma once

// A provider's streamed answer (design.md §10.7), read as its body arrives.

#include <expected>
#include <string_view>

#include "services/http/http_client.h"
#include "services/providers/provider.h"

namespace skillrunner::providers {

// One streamed answer's state. PostChat hands it each piece of a 2xx body;
// it passes the answer's text on to ChatRequest::on_text as it grows.
class ChatStream {
 public:
  virtual ~ChatStream() = default;
  // The next bytes of the body; false: stop reading (on_text asked to, or
  // the stream carried an error).
  virtual bool Feed(std::string_view bytes) = 0;
  // The answer from everything that arrived (`response.stopped`: the read
  // was stopped on purpose: the answer is marked stopped_early).
  virtual std::expected<ChatResponse, ProviderError> Finish(const http::HttpResponse& response,
                                                            const ChatRequest& request) = 0;
};

}  // namespace skillrunner::providers
