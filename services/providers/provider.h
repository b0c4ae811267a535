#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/json/value.hpp>
#include <chrono>
#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "services/common/boxed_expected.h"
#include "services/common/invocation.h"

namespace skillrunner::providers {

struct ChatMessage {
  std::string role;  // system | user | assistant
  std::string content;
  // design.md §9.4 prompt caching: how many leading bytes of `content` stay the
  // same across a retry, a regeneration and the cases of an eval (the skill's
  // system prompt and schema); 0 for none. Anthropic marks them cache_control.
  std::size_t stable_prefix = 0;
};

struct ResponseFormat {
  // kTool (design.md §9.3 `structured_output: tool`): one tool named `name`
  // whose parameters are `schema`, forced by tool_choice; its arguments are
  // the answer.
  enum class Kind { kNone, kJsonObject, kJsonSchema, kTool };
  Kind kind = Kind::kNone;
  std::string name;  // json_schema, tool: [a-zA-Z0-9_-]{1,64}
  // json_schema, tool: the wire schema (already transformed). Shared with the
  // skill that owns it: every request of every invocation points at one copy.
  std::shared_ptr<const boost::json::value> schema;
  bool strict = false;
  // The schema, or null when there is none.
  const boost::json::value& Schema() const;
};

// Facts about a request that any provider may read (the simulated provider
// seeds and scripts its answers with them; tracing will label spans with
// them). None of it is sent on the wire by the HTTP providers.
struct RequestMetadata {
  std::string invocation_id;  // InvocationContext::invocation_id()
  std::string provider;       // the config's name of the provider it goes to
  AttemptRole role = AttemptRole::kGeneration;
  std::string skill_id;   // the invoked skill
  int skill_version = 0;  // its version (a rollout's stable or candidate); 0: not known
  // What this request produces: the skill's id for its output, the review
  // skill's id, "<skill>.review" for a gate's judge, "<skill>.eval" for an
  // eval's judge.
  std::string task_id;
  int attempt = 1;                    // the invocation's provider request number, from 1
  int sample = 0;                     // judges with `samples` > 1: which sample, from 0
  std::optional<std::uint64_t> seed;  // the caller's seed, if it gave one
  // The JSON Schema the caller validates the answer against (before any
  // strict transform); null for free text. Owned by the caller's skill or
  // rubric, which outlives the request.
  const boost::json::value* answer_schema = nullptr;
  std::optional<Price> price;  // the model's (design.md §9.4), for each attempt's cost_usd
  // design.md §9.4: sent as the `traceparent` header when not empty (the span of this request).
  std::string traceparent;
  bool validation_retry = false;        // the request feeds back a rejected answer's errors
  std::shared_ptr<const EvalTag> eval;  // an eval's case and repeat (InvocationOptions); null outside evals
};

// Provider-neutral request (design.md §5, docs/development/providers-notes.md).
struct ChatRequest {
  std::string model;
  std::vector<ChatMessage> messages;
  std::optional<double> temperature;
  int max_output_tokens = 1024;
  ResponseFormat response_format;
  RequestMetadata metadata;
  // Bound on this one request (the invocation deadline also applies).
  std::chrono::milliseconds timeout{600'000};
  // Streaming (design.md §10.7): when set, a provider that can stream asks for
  // the answer as a stream and calls it with each piece of the answer's text
  // (content, or a tool call's arguments) as it arrives; `false` stops the
  // stream (the answer comes back cut, with stopped_early set). Providers
  // that cannot stream ignore it.
  std::function<bool(std::string_view)> on_text;
};

enum class FinishReason { kStop, kLength, kRefusal, kContentFilter, kOther };
std::string_view FinishReasonName(FinishReason reason);  // stop|length|refusal|content_filter|other

struct Usage {
  std::int64_t input_tokens = 0;
  std::int64_t output_tokens = 0;
  bool estimated = false;  // characters/4 (code points) when the provider reported none
  // Of input_tokens, those the provider served from its prompt cache (OpenAI
  // prompt_tokens_details.cached_tokens, Anthropic cache_read_input_tokens).
  std::int64_t cached_input_tokens = 0;
  // Of input_tokens, those written to the cache (Anthropic cache_creation_input_tokens).
  std::int64_t cache_write_tokens = 0;
};

struct ChatResponse {
  std::string text;                    // the answer (JSON text for structured output)
  bool tool_call = false;              // text is the arguments of a tool call
  std::optional<std::string> refusal;  // set when the model declined
  FinishReason finish_reason = FinishReason::kStop;
  Usage usage;
  std::string request_id;
  std::string model;     // as the provider reports it
  std::string raw_body;  // the HTTP body as received
  int http_status = 200;
  std::int64_t queued_ms = 0;  // waited for the provider's rate limit before it was sent
  AttemptSpan span;            // the request's span (RetryingProvider fills in its id and times)
  RequestTiming timing;        // RetryingProvider: the wait before it went out and its own time
  bool from_cache = false;     // answered by eval --cache's store, not the provider (design.md §9.5)
  bool stopped_early = false;  // ChatRequest::on_text stopped the stream: `text` is cut
  std::string batch_id;        // answered inside this batch (design.md §10.6), not online
};

// A failed request, as a value. `retryable` follows design.md §5.2.
struct ProviderError {
  enum class Kind {
    kHttp,      // an HTTP error status
    kNetwork,   // connect/TLS/dropped connection
    kTimeout,   // the request timed out
    kProtocol,  // a 2xx whose body we cannot understand
    kConfig,    // e.g. the API key variable is not set (before any request)
    kCancelled,
    kOverloaded,  // not sent: the rate limit leaves no slot before the deadline (retry_after: when one is free)
  };
  Kind kind = Kind::kHttp;
  int http_status = 0;  // 0 when no response arrived
  std::string type;     // provider error type, e.g. rate_limit_error
  std::string code;     // provider error code, if any
  std::string param;    // OpenAI `param`, e.g. response_format
  std::string message;  // the provider's message, or ours
  // Why a failure the kind does not explain happened: "malformed_body" (a 2xx whose body is not
  // JSON or not the provider's shape, as a proxy that cuts a body sends; retried as transient).
  std::string reason;
  bool retryable = false;
  std::optional<std::chrono::milliseconds> retry_after;  // retry-after-ms / retry-after
  std::optional<bool> should_retry;                      // x-should-retry
  std::string request_id;
  std::string raw_body;
  std::int64_t queued_ms = 0;  // waited for the provider's rate limit before it was sent
  // Set by a provider that tells a rate limit from other 429s itself (Bedrock: ThrottlingException
  // is one, ModelNotReadyException, also a 429, is not); unset: a 429 or 529 is one.
  std::optional<bool> rate_limited;
  // Whether the limiter and the retry's pacing treat this error as the provider's rate limit.
  bool IsRateLimited() const { return rate_limited.value_or(http_status == 429 || http_status == 529); }
};

// What Chat comes back with, boxed: the answer passes up through the frames
// of several coroutines (the provider's, its wrappers', the retry loop's),
// each of which reserves room for it for as long as the request is in flight.
using ChatResult = BoxedExpected<ChatResponse, ProviderError>;

// One LLM backend. Chat may be called concurrently. Implementations never
// retry: RetryingProvider does (design.md §5.2).
class Provider {
 public:
  virtual ~Provider() = default;
  virtual boost::asio::awaitable<ChatResult> Chat(const ChatRequest& request) = 0;
};

// Token estimate for text a provider did not count: code points / 4, rounded up.
std::int64_t EstimateTokens(std::string_view utf8);

// The request as shown to users (`run --show-request`, debug logs):
// {"messages": [{role, content}], "response_format"?: {type, name?, schema?,
// strict?}, "temperature"?, "max_output_tokens"}. Metadata and keys are not
// part of it.
boost::json::object RequestForDisplay(const ChatRequest& request);

// Usage for an answer whose provider reported none: the request's messages
// and the answer text, estimated and marked so.
Usage EstimatedUsage(const ChatRequest& request, std::string_view answer);

}  // namespace skillrunner::providers
