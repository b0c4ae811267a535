#pragma once

// One MCP session (design.md §11.4, docs/mcp.md), whatever carries it
// (stdio, Streamable HTTP): initialize, ping, tools/list, tools/call,
// notifications/cancelled and notifications/initialized. A tools/call runs
// the skill as skills.invoke would on the socket (the tree in service, the
// caller's tenant quota, the server's in-flight bound and metrics, the
// rollouts), with one progress notification per attempt when the call has a
// progressToken.

#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/strand.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "runner/server/invocation_answer.h"
#include "runner/server/server_metrics.h"
#include "runner/server/skill_host.h"

namespace skillrunner::mcp {

// Where a session's messages go. An empty object means "finished, nothing
// more to send" (a cancelled call: MCP sends no answer for it). Called on
// the session's strand, never while it holds a lock.
using Sink = std::function<void(boost::json::object message)>;

struct SessionOptions {
  server::SkillHost* host = nullptr;         // must outlive the session
  server::CallerQuota caller;                // the tenant (empty: the admin)
  server::ServerMetrics* metrics = nullptr;  // counted with the socket's; null: not counted
  std::size_t max_in_flight = 1024;          // this session's calls at once
  std::size_t max_in_flight_total = 16384;   // the server's (with metrics)
  std::string server_version;
};

struct CallDone;  // where a call's answer goes (mcp_session.cpp)

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(boost::asio::any_io_executor executor, SessionOptions options);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // One parsed message. `reply` gets its answer and, for a tools/call with
  // a progressToken, its progress notifications first. Notifications (and
  // responses, which this server never asks for) get nothing. Any thread.
  void Handle(boost::json::value message, Sink reply);
  // Where notifications that belong to no request go (tools/list_changed):
  // stdio's output, the HTTP GET stream; null: dropped. Any thread.
  void SetNotifications(Sink sink);
  // tools/list_changed to the notification sink, once initialized. Any thread.
  void ToolsChanged();
  // Cancels every call in flight; each is answered isError CANCELLED with `reason`. Any thread.
  void CancelAll(std::string reason);
  // Whether nothing is in flight (read on any thread).
  bool Idle() const { return in_flight_count_.load() == 0; }
  // From now on a tools/call is answered OVERLOADED (the server drains);
  // `on_idle` is called (on the strand) once nothing is in flight.
  void Drain(std::function<void()> on_idle);
  // The version initialize settled on ("" before it).
  std::string protocol_version() const;

 private:
  struct InFlight;
  void HandleOnStrand(boost::json::value message, const Sink& reply);
  void HandleRequest(const std::string& method, const boost::json::value& id, boost::json::object params,
                     const Sink& reply);
  boost::json::object Initialize(const boost::json::object& params);
  void Call(const boost::json::value& id, boost::json::object params, const Sink& reply);
  void Cancelled(const boost::json::object& params);
  // An OVERLOADED tool result when a bound is reached, else null.
  std::optional<boost::json::object> RefusedForLoad() const;
  void Finished(const std::string& key);
  void Conclude(const CallDone& done, const InFlight& flight, std::exception_ptr e, server::DonePtr result);

  boost::asio::strand<boost::asio::any_io_executor> strand_;
  SessionOptions options_;
  // On the strand:
  std::string version_;
  bool initialized_ = false;
  Sink notifications_;
  std::map<std::string, std::shared_ptr<InFlight>> in_flight_;
  std::atomic<std::size_t> in_flight_count_{0};
  std::function<void()> on_idle_;
  bool draining_ = false;
  mutable std::mutex version_mutex_;  // version_ read from other threads
};

// Whether a message is a request (has an id and a method): it gets an answer.
bool IsRequest(const boost::json::value& message);
// Whether a message is a tools/call with a progressToken (over HTTP: answered as SSE).
bool WantsProgress(const boost::json::value& message);

}  // namespace skillrunner::mcp
