#include "runner/server/line_framer.h"

namespace skillrunner::server {

namespace {
constexpr std::size_t kKeepCapacity = 64 * 1024;
}  // namespace

void LineFramer::Feed(std::string_view chunk, const std::function<void(std::string_view)>& on_line,
                      const std::function<void()>& on_oversized) {
  while (!chunk.empty()) {
    std::size_t newline = chunk.find('\n');
    std::string_view piece = chunk.substr(0, newline);
    if (skipping_) {
      if (newline == std::string_view::npos) return;
      skipping_ = false;
    } else if (pending_.size() + piece.size() > max_line_bytes_) {
      pending_.clear();
      pending_.shrink_to_fit();
      on_oversized();
      if (newline == std::string_view::npos) {
        skipping_ = true;
        return;
      }
    } else if (newline == std::string_view::npos) {
      pending_.append(piece);
      return;
    } else {
      std::string_view line = piece;
      if (!pending_.empty()) {
        pending_.append(piece);
        line = pending_;
      }
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      on_line(line);
      pending_.clear();
      // One long line must not pin a large buffer for the connection's life.
      if (pending_.capacity() > kKeepCapacity) pending_.shrink_to_fit();
    }
    chunk.remove_prefix(newline + 1);
  }
}

}  // namespace skillrunner::server
