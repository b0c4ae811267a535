#pragma once

// A way into the server besides its socket and TCP listeners (MCP over stdio
// or Streamable HTTP, runner/mcp): the server tells it of each reload, drains
// it with its connections and cancels what it has in flight with theirs.

#include <functional>
#include <string>

namespace skillrunner::server {

class FrontDoor {
 public:
  virtual ~FrontDoor() = default;
  // Starts taking calls (Server::Start, on the main io_context's thread).
  virtual void Open() = 0;
  // The tree in service was swapped (a reload that loaded).
  virtual void Reloaded() = 0;
  // Takes no new calls; `on_idle` once nothing of it is in flight (any thread).
  virtual void Drain(std::function<void()> on_idle) = 0;
  // Cancels every call in flight, each answered with `reason`.
  virtual void CancelAll(const std::string& reason) = 0;
  // The drain is over: closes what is still open (streams, descriptors).
  virtual void Close() = 0;
};

}  // namespace skillrunner::server
