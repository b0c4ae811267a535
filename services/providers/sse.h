#pragma once

// Server-sent events (the text/event-stream format) read from pieces of a
// body split anywhere.

#include <functional>
#include <string>
#include <string_view>

namespace skillrunner::providers {

struct SseEvent {
  std::string event;  // the `event:` field; empty when none was sent
  std::string data;   // the `data:` lines, joined by "\n"
};

// Lines end at LF, CRLF or CR (a CR at the end of one piece and an LF at the
// start of the next are one line end); a blank line dispatches the event;
// lines starting with ':' are comments (keep-alives); `id:` and `retry:` are
// ignored. Not thread-safe.
class SseParser {
 public:
  using Handler = std::function<void(const SseEvent&)>;

  // Calls `handler` for each event completed by `bytes`.
  void Feed(std::string_view bytes, const Handler& handler);

 private:
  void Line(std::string_view line, const Handler& handler);

  std::string line_;
  bool after_cr_ = false;
  bool has_data_ = false;
  SseEvent event_;
};

}  // namespace skillrunner::providers
