#pragma once

// Where a streamed invocation's events go (DESIGN 10.7): the socket's
// skills.partial / skills.reset notifications, `run --stream`'s lines.

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "services/common/error.h"

namespace skillrunner {

// Builds each event's params and hands them to the front door's `emit`
// (which adds the request's id and sends them). Called on the invocation's
// coroutine only; `emit` must not block for long.
class StreamEvents {
 public:
  // method: "skills.partial" or "skills.reset"; params without "id".
  using Emit = std::function<void(std::string_view method, boost::json::object params)>;
  explicit StreamEvents(Emit emit) : emit_(std::move(emit)) {}

  // {attempt, value, complete}: attempt `attempt`'s output so far.
  void Partial(int attempt, const boost::json::value& value, const std::vector<std::string>& complete);
  // {attempt, reason, errors}: attempt `attempt` was abandoned (reason: its
  // kind's word, or "fallback") and a retry starts; the client drops what
  // it showed.
  void Reset(int attempt, std::string_view reason, const std::vector<FieldError>& errors);
  // The attempt whose partials were sent since the last reset (0: none).
  int shown_attempt() const { return shown_attempt_; }

 private:
  Emit emit_;
  int shown_attempt_ = 0;
};

}  // namespace skillrunner
