#pragma once

// A scriptable HTTP/1.1 server on 127.0.0.1 (ephemeral port) for tests and
// benchmarks: a real Beast server on its own io_context and thread, with
// keep-alive, one coroutine per connection, TCP_NODELAY, and optional TLS.
// Each request takes the next scripted response (Enqueue), or the default
// (SetDefault) when none is queued. Thread-safe.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace skillrunner::test_support {

struct ScriptedResponse {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers{};  // Content-Type defaults to JSON
  std::string body{};
  std::chrono::milliseconds delay{0};  // before answering; a client that hangs up ends it
  bool drop_connection = false;        // read the request, close without answering
  bool truncate_body = false;          // announce Content-Length N, send N/2 bytes, close
  bool chunked = false;                // Transfer-Encoding: chunked, the body in 3 chunks
  bool close_after_response = false;   // answer (keep-alive), then close, like an idle timeout
};

struct RecordedRequest {
  std::string method;
  std::string target;
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::string body{};
  std::chrono::steady_clock::time_point arrived{};
  int status = 0;  // what it was answered with, when the rate limit decided (else 0)

  // The first header with this (lower-case) name, or "".
  std::string Header(const std::string& name) const;
};

struct LoopbackTls {
  std::string cert_file;  // PEM certificate (chain)
  std::string key_file;   // PEM private key
};

// Of `requests`, those that arrived `after` the first one or later: how many,
// and how many the rate limit (SetRateLimit) refused.
struct RefusalCount {
  std::size_t requests = 0;
  std::size_t refused = 0;
};
RefusalCount RefusedAfter(const std::vector<RecordedRequest>& requests, std::chrono::steady_clock::duration after);
// Each 250 ms from the first request: 'o' all taken, 'x' some refused (429),
// '.' none (for a failure's message).
std::string RefusalTimeline(const std::vector<RecordedRequest>& requests);

class LoopbackServer {
 public:
  // Listens at once; throws std::runtime_error when it cannot.
  explicit LoopbackServer(std::optional<LoopbackTls> tls = std::nullopt);
  ~LoopbackServer();
  LoopbackServer(const LoopbackServer&) = delete;
  LoopbackServer& operator=(const LoopbackServer&) = delete;

  // "http://127.0.0.1:PORT" (https:// in TLS mode).
  std::string base_url() const;
  std::uint16_t port() const;

  void Enqueue(ScriptedResponse response);
  void SetDefault(ScriptedResponse response);
  // Answers computed from each request's body, for requests the script and
  // the rate limit leave (nullopt: the default). Called under the server's
  // lock, one request at a time.
  void SetResponder(std::function<std::optional<ScriptedResponse>(const std::string& body)> responder);
  // Answers computed from the whole request (method, target, headers, body),
  // before the script and the responder; nullopt passes the request on.
  // Called under the server's lock, one request at a time.
  void SetRouter(std::function<std::optional<ScriptedResponse>(const RecordedRequest& request)> router);
  // Off: requests are counted but not stored (benchmarks).
  void SetRecording(bool on);
  // Enforces a rate as nginx `limit_req` with no burst does: a request that
  // comes sooner than 1/per_second after the last one let through is
  // answered 429 with `Retry-After: retry_after_s` (and an OpenAI
  // rate_limit_exceeded body). 0 turns it off.
  void SetRateLimit(double per_second, int retry_after_s = 1);
  std::size_t refused_count() const;

  std::vector<RecordedRequest> requests() const;
  std::size_t request_count() const;
  int connections_accepted() const;
  int connections_closed() const;    // connections that ended, whoever closed them
  int max_open_connections() const;  // the most open at once
  int max_in_flight() const;         // the most requests being answered at once
  // Polls until connections_closed() >= count; false after `timeout`.
  bool WaitForClosedConnections(int count, std::chrono::milliseconds timeout) const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace skillrunner::test_support
