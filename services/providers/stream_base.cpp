#include "services/providers/stream_base.h"

#include "services/providers/http_errors.h"

namespace skillrunner::providers {
namespace json = boost::json;

ProviderError StreamError(const json::value* error, std::string fallback, bool retryable) {
  ProviderError out;
  out.kind = retryable ? ProviderError::Kind::kHttp : ProviderError::Kind::kProtocol;
  out.http_status = 200;
  out.message = std::move(fallback);
  if (error != nullptr && error->is_object()) {
    out.message = JsonString(error->as_object(), "message", out.message);
    out.type = JsonString(error->as_object(), "type");
    out.code = JsonString(error->as_object(), "status");
  }
  out.retryable = retryable;
  return out;
}

ProviderError Dropped(int status) {
  ProviderError out;
  out.kind = ProviderError::Kind::kNetwork;
  out.http_status = status;
  out.message = "the stream ended before the answer was complete";
  out.retryable = true;
  return out;
}

// What every stream shares: the SSE reading, the text so far, on_text, the
// error that ended it.
}  // namespace skillrunner::providers
