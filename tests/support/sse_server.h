#pragma once

// A loopback HTTP/1.1 server that answers each request with a scripted
// server-sent event stream, written in pieces of a chosen size (1: every
// byte its own write and chunk), for provider streaming tests. One
// connection at a time; each connection carries one request, then closes.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace skillrunner::test_support {

struct SseScript {
  int status = 200;
  std::string content_type = "text/event-stream";
  std::string body;             // the exact bytes of the stream (or an error body)
  std::size_t piece_bytes = 0;  // 0: the body in one write; n: writes of n bytes
  // Sends the first `hold_at` bytes, then waits (up to hold_timeout) for the
  // client to hang up before sending the rest.
  std::optional<std::size_t> hold_at;
  std::chrono::milliseconds hold_timeout{3000};
  std::chrono::milliseconds piece_gap{0};  // a pause after each piece (a model writing at its pace)
};

// A stream of `body` written `piece_bytes` at a time, held at `hold_at`
// (npos: never).
inline SseScript Streamed(std::string body, std::size_t piece_bytes = 0,
                          std::size_t hold_at = static_cast<std::size_t>(-1)) {
  SseScript script;
  script.body = std::move(body);
  script.piece_bytes = piece_bytes;
  if (hold_at != static_cast<std::size_t>(-1)) script.hold_at = hold_at;
  return script;
}

// A whole JSON answer (a server that does not stream).
inline SseScript JsonAnswer(std::string body, int status = 200) {
  SseScript script;
  script.status = status;
  script.content_type = "application/json";
  script.body = std::move(body);
  return script;
}

class SseServer {
 public:
  SseServer();  // listens on 127.0.0.1, an ephemeral port
  ~SseServer();
  SseServer(const SseServer&) = delete;
  SseServer& operator=(const SseServer&) = delete;

  std::string base_url() const;  // http://127.0.0.1:PORT
  // Each request takes the next script; with none left, a 500.
  void Enqueue(SseScript script);
  std::vector<std::string> request_bodies() const;
  std::vector<std::string> request_targets() const;
  // How many holds ended because the client hung up (not by the timeout).
  int hung_up_during_hold() const;
  // Polls until hung_up_during_hold() >= count; false after `timeout`.
  bool WaitForHangUps(int count, std::chrono::milliseconds timeout = std::chrono::seconds(5)) const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace skillrunner::test_support
