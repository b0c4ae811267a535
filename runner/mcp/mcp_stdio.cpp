#include "runner/mcp/mcp_stdio.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <boost/asio/post.hpp>
#include <boost/json/parse.hpp>
#include <cerrno>
#include <cstring>
#include <string>
#include <thread>

#include "runner/server/json_rpc.h"
#include "services/common/json_text.h"

namespace skillrunner::mcp {
namespace asio = boost::asio;
namespace json = boost::json;

StdioDoor::StdioDoor(asio::io_context& io, SessionOptions options, std::function<void()> on_end, int in_fd, int out_fd,
                     std::size_t max_line_bytes, std::size_t max_depth)
    : io_(io),
      session_(std::make_shared<Session>(io.get_executor(), std::move(options))),
      on_end_(std::move(on_end)),
      in_fd_(in_fd),
      out_fd_(out_fd),
      max_line_bytes_(max_line_bytes),
      max_depth_(max_depth) {}

void StdioDoor::Open() {
  std::weak_ptr<StdioDoor> weak = weak_from_this();
  session_->SetNotifications([weak](json::object message) {
    if (auto self = weak.lock()) self->Write(message);
  });
  std::thread([self = shared_from_this()] { self->ReadLoop(); }).detach();
}

void StdioDoor::Reloaded() { session_->ToolsChanged(); }

void StdioDoor::Drain(std::function<void()> on_idle) { session_->Drain(std::move(on_idle)); }

void StdioDoor::CancelAll(const std::string& reason) { session_->CancelAll(reason); }

void StdioDoor::Close() {
  std::lock_guard lock(write_mutex_);
  closed_ = true;
}

void StdioDoor::Write(const json::object& message) {
  if (message.empty()) return;  // a cancelled call: nothing to answer
  std::string line = CompactJson(message);
  line += '\n';
  std::lock_guard lock(write_mutex_);
  if (closed_) return;
  for (std::size_t done = 0; done < line.size();) {
    const ssize_t n = ::write(out_fd_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      spdlog::warn("mcp: cannot write to the client ({}); its answers are dropped", std::strerror(errno));
      closed_ = true;
      return;
    }
    done += static_cast<std::size_t>(n);
  }
}

void StdioDoor::ReadLoop() {
  std::weak_ptr<StdioDoor> weak = weak_from_this();
  auto reply = [weak](json::object message) {
    if (auto self = weak.lock()) self->Write(message);
  };
  std::string pending;
  char chunk[65536];
  bool too_long = false;  // skipping the rest of a line past max_line_bytes
  for (;;) {
    const ssize_t n = ::read(in_fd_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    pending.append(chunk, static_cast<std::size_t>(n));
    std::size_t start = 0;
    for (std::size_t end; (end = pending.find('\n', start)) != std::string::npos; start = end + 1) {
      std::string_view line(pending.data() + start, end - start);
      if (!too_long && !line.empty() && line != "\r") {
        json::parse_options limits;
        limits.max_depth = max_depth_;
        boost::system::error_code ec;
        json::value message = json::parse(line, ec, {}, limits);
        if (ec) {
          reply(server::ErrorAnswer(nullptr, server::kParseError, "Parse error: " + ec.message()));
        } else {
          session_->Handle(std::move(message), reply);
        }
      }
      too_long = false;
    }
    pending.erase(0, start);
    if (pending.size() > max_line_bytes_) {
      reply(
          server::ErrorAnswer(nullptr, server::kInvalidRequest,
                              "Invalid Request: a message longer than " + std::to_string(max_line_bytes_) + " bytes"));
      pending.clear();
      too_long = true;
    }
  }
  if (!closed_) asio::post(io_, [self = shared_from_this()] { self->on_end_(); });
}

}  // namespace skillrunner::mcp
