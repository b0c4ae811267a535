#pragma once

// Splits a byte stream into '\n'-terminated lines with a length cap. A line
// longer than the cap is reported once, as soon as the cap is passed, and its
// remaining bytes are skipped up to the next '\n': memory stays bounded by
// the cap whatever a client sends. Not thread-safe (one per connection).

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace skillrunner::server {

class LineFramer {
 public:
  explicit LineFramer(std::size_t max_line_bytes) : max_line_bytes_(max_line_bytes) {}

  // Feeds a chunk; calls on_line for each complete line (without '\n' or a
  // trailing '\r') and on_oversized once per over-long line. The string_view
  // passed to on_line is valid only during the call.
  void Feed(std::string_view chunk, const std::function<void(std::string_view)>& on_line,
            const std::function<void()>& on_oversized);

  // Bytes of an unfinished line held.
  std::size_t buffered() const { return pending_.size(); }

 private:
  std::size_t max_line_bytes_;
  std::string pending_;
  bool skipping_ = false;
};

}  // namespace skillrunner::server
