#include "services/providers/sse.h"

namespace skillrunner::providers {

void SseParser::Feed(std::string_view bytes, const Handler& handler) {
  for (char c : bytes) {
    if (c == '\n' && after_cr_) {
      after_cr_ = false;
      continue;
    }
    after_cr_ = c == '\r';
    if (c == '\n' || c == '\r') {
      Line(line_, handler);
      line_.clear();
    } else {
      line_.push_back(c);
    }
  }
}

void SseParser::Line(std::string_view line, const Handler& handler) {
  if (line.empty()) {
    if (has_data_) handler(event_);
    event_ = SseEvent{};
    has_data_ = false;
    return;
  }
  if (line[0] == ':') return;
  const std::size_t colon = line.find(':');
  std::string_view field = line.substr(0, colon);
  std::string_view value = colon == std::string_view::npos ? std::string_view() : line.substr(colon + 1);
  if (!value.empty() && value[0] == ' ') value.remove_prefix(1);
  if (field == "data") {
    if (has_data_) event_.data.push_back('\n');
    event_.data.append(value);
    has_data_ = true;
  } else if (field == "event") {
    event_.event = std::string(value);
  }
}

}  // namespace skillrunner::providers
