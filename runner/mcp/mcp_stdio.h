#pragma once

// `skillrunner mcp`: one MCP session over the process's standard input and
// output (newline-delimited JSON-RPC, as MCP's stdio transport says); logs go
// to standard error only. The end of the input drains the server: calls in
// flight are answered, then the process ends.

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <functional>
#include <memory>
#include <mutex>

#include "runner/mcp/mcp_session.h"
#include "runner/server/front_door.h"

namespace skillrunner::mcp {

class StdioDoor final : public server::FrontDoor, public std::enable_shared_from_this<StdioDoor> {
 public:
  // `on_end`: the input ended (called on `io`). Reads `in_fd`, writes `out_fd`.
  StdioDoor(boost::asio::io_context& io, SessionOptions options, std::function<void()> on_end, int in_fd = 0,
            int out_fd = 1, std::size_t max_line_bytes = 1 << 20, std::size_t max_depth = 64);

  void Open() override;
  void Reloaded() override;
  void Drain(std::function<void()> on_idle) override;
  void CancelAll(const std::string& reason) override;
  void Close() override;

 private:
  void Write(const boost::json::object& message);
  void ReadLoop();  // its own thread: a blocking read takes a file as well as a pipe

  boost::asio::io_context& io_;
  std::shared_ptr<Session> session_;
  std::function<void()> on_end_;
  const int in_fd_;
  const int out_fd_;
  const std::size_t max_line_bytes_;
  const std::size_t max_depth_;
  std::mutex write_mutex_;
  std::atomic<bool> closed_{false};  // after Close: nothing written, the input's end not reported
};

}  // namespace skillrunner::mcp
