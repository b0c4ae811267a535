#pragma once

// The AWS event stream (`application/vnd.amazon.eventstream`) that Bedrock's ConverseStream answers:
// binary frames of a prelude (total length, headers length, the prelude's CRC32), headers, a payload
// and the whole frame's CRC32.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace skillrunner::providers::aws {

struct EventMessage {
  std::map<std::string, std::string, std::less<>> headers;  // the string-valued ones (`:event-type`, ...)
  std::string payload;

  std::string_view Header(std::string_view name) const;
};

// Frames are at most this long (the service's own limit is 16 MiB).
inline constexpr std::uint32_t kMaxEventFrame = 16 * 1024 * 1024;

class EventStreamDecoder {
 public:
  // Decodes the frames `bytes` completes, handing each to `on_message`. After a malformed frame (a
  // CRC that does not match, lengths that cannot be) it says what was wrong, then and after.
  std::optional<std::string> Feed(std::string_view bytes, const std::function<void(const EventMessage&)>& on_message);
  // Bytes of a frame that has not ended.
  bool Pending() const { return !buffer_.empty(); }

 private:
  std::optional<std::string> Decode(std::string_view frame, EventMessage& out) const;

  std::string buffer_;
  std::optional<std::string> broken_;
};

// One frame of `headers` (string-valued) and `payload` (tests, and a fake's answers).
std::string EncodeEventFrame(const std::map<std::string, std::string, std::less<>>& headers, std::string_view payload);

}  // namespace skillrunner::providers::aws
