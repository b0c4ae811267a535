#pragma once

// Where a streamed invocation's events go: the socket's skills.partial /
// skills.reset notifications, `run --stream`'s lines. Partials are coalesced:
// at most one per interval, the newest held back until a timer sends it, and
// the held one always sent before a reset or the answer.

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "services/common/clock.h"
#include "services/common/error.h"

namespace skillrunner {

// The default of options.partial_interval_ms, and its largest value.
inline constexpr std::chrono::milliseconds kDefaultPartialInterval{25};
inline constexpr std::chrono::milliseconds kMaxPartialInterval{10000};

// Builds each event's params and hands them to the front door's `emit`
// (which adds the request's id and sends them). Called on the invocation's
// coroutine; the timer's callback may run on another thread (a lock keeps
// them apart). `emit` must not block for long.
class StreamEvents {
 public:
  // method: "skills.partial" or "skills.reset"; params without "id".
  using Emit = std::function<void(std::string_view method, boost::json::object params)>;
  // Calls `fire` once, `delay` from now (a Clock timer: MakeClockTimer).
  using Timer = std::function<void(std::chrono::milliseconds delay, std::function<void()> fire)>;

  // Every partial sent as it comes.
  explicit StreamEvents(Emit emit);
  // At most one partial per `interval` (0: every one) by `clock`; `timer`
  // sends a held-back partial when its interval is up.
  StreamEvents(Emit emit, std::chrono::milliseconds interval, const Clock& clock, Timer timer);

  // {attempt, value, complete}: attempt `attempt`'s output so far.
  void Partial(int attempt, const boost::json::value& value, const std::vector<std::string>& complete);
  // {attempt, reason, errors}: attempt `attempt` was abandoned (reason: its
  // kind's word, or "fallback") and a retry starts; the client drops what
  // it showed. A held-back partial goes first.
  void Reset(int attempt, std::string_view reason, const std::vector<FieldError>& errors);
  // Sends the held-back partial now (before the answer).
  void Flush();
  // The attempt whose partials were sent since the last reset (0: none).
  int shown_attempt() const { return shown_attempt_; }

 private:
  struct Pacing;
  std::shared_ptr<Pacing> pacing_;
  int shown_attempt_ = 0;
};

}  // namespace skillrunner
