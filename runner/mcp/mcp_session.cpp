#include "runner/mcp/mcp_session.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>

#include "runner/logging.h"
#include "runner/mcp/mcp_tools.h"
#include "runner/server/json_rpc.h"
#include "services/common/stream_events.h"

namespace skillrunner::mcp {
namespace asio = boost::asio;
namespace json = boost::json;

namespace {

constexpr std::int64_t kMinRetryAfterMs = 10;
constexpr std::int64_t kMaxRetryAfterMs = 5000;
constexpr std::int64_t kNoneFinishedRetryAfterMs = 1000;

const json::object kEmpty;

const json::object& ObjectMember(const json::object& object, std::string_view name) {
  const json::value* member = object.if_contains(name);
  return member != nullptr && member->is_object() ? member->get_object() : kEmpty;
}

json::object Notification(std::string_view method, json::object params) {
  return json::object{{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}};
}

json::object InvalidParams(const json::value& id, const std::string& message) {
  return server::ErrorAnswer(id, server::kInvalidParams, "Invalid params: " + message);
}

}  // namespace

bool IsRequest(const json::value& message) {
  const json::object* object = message.if_object();
  return object != nullptr && object->contains("id") && object->contains("method");
}

bool WantsProgress(const json::value& message) {
  const json::object* object = message.if_object();
  if (object == nullptr || !IsRequest(message)) return false;
  const json::value* method = object->if_contains("method");
  if (method == nullptr || !method->is_string() || method->get_string() != "tools/call") return false;
  const json::object& params = ObjectMember(*object, "params");
  return ObjectMember(params, "_meta").contains("progressToken");
}

namespace {

// The progress of one call with a progressToken: one notification as it starts ("attempt 1"), and
// one as each attempt is abandoned for a retry. At the start rather than at an attempt's first
// output: a fast answer right behind its progress raced it in the SDK's client (it handles
// notifications a tick later than answers, and dropped the progress of a call already answered).
struct Progress {
  json::value token;
  Sink reply;
  double progress = 0;  // the last value sent (it only grows)
  void Send(std::string message) {
    progress += 1;
    reply(
        Notification("notifications/progress",
                     json::object{{"progressToken", token}, {"progress", progress}, {"message", std::move(message)}}));
  }
};

StreamEvents::Emit ProgressOf(std::shared_ptr<Progress> state) {
  return [state = std::move(state)](std::string_view method, json::object params) {
    if (method != "skills.reset") return;
    const json::value* at = params.if_contains("attempt");
    const json::value* reason = params.if_contains("reason");
    state->Send("attempt " + std::to_string(at != nullptr && at->is_int64() ? at->get_int64() : 0) + " abandoned (" +
                (reason != nullptr && reason->is_string() ? std::string(reason->get_string()) : "retry") +
                "); retrying");
  };
}

}  // namespace

// A call in flight: how to cancel it, and whether its caller did (then nothing is answered).
struct Session::InFlight {
  std::shared_ptr<asio::cancellation_signal> signal = std::make_shared<asio::cancellation_signal>();
  std::shared_ptr<std::string> cancel_reason = std::make_shared<std::string>();
  std::unique_ptr<StreamEvents> events;  // with a progressToken
  bool by_client = false;
};

Session::Session(asio::any_io_executor executor, SessionOptions options)
    : strand_(asio::make_strand(std::move(executor))), options_(std::move(options)) {}

Session::~Session() = default;

std::string Session::protocol_version() const {
  std::lock_guard lock(version_mutex_);
  return version_;
}

void Session::Handle(json::value message, Sink reply) {
  asio::post(strand_, [self = shared_from_this(), message = std::move(message), reply = std::move(reply)]() mutable {
    self->HandleOnStrand(std::move(message), reply);
  });
}

void Session::SetNotifications(Sink sink) {
  asio::post(strand_,
             [self = shared_from_this(), sink = std::move(sink)]() mutable { self->notifications_ = std::move(sink); });
}

void Session::ToolsChanged() {
  asio::post(strand_, [self = shared_from_this()] {
    if (self->initialized_ && self->notifications_) {
      self->notifications_(Notification("notifications/tools/list_changed", {}));
    }
  });
}

void Session::CancelAll(std::string reason) {
  asio::post(strand_, [self = shared_from_this(), reason = std::move(reason)] {
    for (auto& [key, flight] : self->in_flight_) {
      *flight->cancel_reason = reason;
      flight->signal->emit(asio::cancellation_type::terminal);
    }
  });
}

void Session::Drain(std::function<void()> on_idle) {
  asio::post(strand_, [self = shared_from_this(), on_idle = std::move(on_idle)]() mutable {
    self->draining_ = true;
    if (self->in_flight_.empty()) {
      on_idle();
    } else {
      self->on_idle_ = std::move(on_idle);
    }
  });
}

void Session::HandleOnStrand(json::value message, const Sink& reply) {
  json::object* object = message.if_object();
  if (object == nullptr) {
    reply(server::ErrorAnswer(nullptr, server::kInvalidRequest, "Invalid Request: a message is a JSON object"));
    return;
  }
  const json::value* method = object->if_contains("method");
  if (method == nullptr) return;  // a response: this server asks nothing, so there is nothing to match
  const json::value id = object->contains("id") ? object->at("id") : json::value(nullptr);
  const bool request = object->contains("id");
  const json::value* version = object->if_contains("jsonrpc");
  if (!method->is_string() || version == nullptr || !version->is_string() || version->get_string() != "2.0") {
    if (request)
      reply(server::ErrorAnswer(id, server::kInvalidRequest, "Invalid Request: jsonrpc \"2.0\" and a method"));
    return;
  }
  const json::value* params = object->if_contains("params");
  if (params != nullptr && !params->is_object() && !params->is_null()) {
    if (request) reply(InvalidParams(id, "params must be an object"));
    return;
  }
  json::object fields = params != nullptr && params->is_object() ? params->get_object() : json::object{};
  const std::string name(method->get_string());
  if (request) {
    HandleRequest(name, id, std::move(fields), reply);
  } else if (name == "notifications/initialized") {
    initialized_ = true;
  } else if (name == "notifications/cancelled") {
    Cancelled(fields);
  }
}

void Session::HandleRequest(const std::string& method, const json::value& id, json::object params, const Sink& reply) {
  if (method == "initialize") {
    reply(server::ResultAnswer(id, Initialize(params)));
  } else if (method == "ping") {
    reply(server::ResultAnswer(id, json::object{}));
  } else if (method == "tools/list") {
    const bool structured = HasStructuredOutput(protocol_version());
    reply(
        server::ResultAnswer(id, json::object{{"tools", ToolsOf(*options_.host->Current()->registry(), structured)}}));
  } else if (method == "tools/call") {
    Call(id, std::move(params), reply);
  } else {
    reply(server::ErrorAnswer(id, server::kMethodNotFound, "Method not found: " + method));
  }
}

json::object Session::Initialize(const json::object& params) {
  const json::value* requested = params.if_contains("protocolVersion");
  std::string_view asked =
      requested != nullptr && requested->is_string() ? std::string_view(requested->get_string()) : "";
  {
    std::lock_guard lock(version_mutex_);
    version_ = std::string(NegotiatedVersion(asked));
  }
  initialized_ = true;  // a client that never sends notifications/initialized still hears list_changed
  return json::object{
      {"protocolVersion", protocol_version()},
      {"capabilities", json::object{{"tools", json::object{{"listChanged", true}}}}},
      {"serverInfo", json::object{{"name", "skillrunner"}, {"version", options_.server_version}}},
      {"instructions", "Each tool is a skillrunner skill: its output is JSON valid against the tool's outputSchema."}};
}

std::optional<json::object> Session::RefusedForLoad() const {
  std::string why;
  if (draining_) {
    why = "the server is shutting down and takes no new calls";
  } else if (in_flight_.size() >= options_.max_in_flight) {
    why = "overloaded: this session already has " + std::to_string(in_flight_.size()) + " calls in flight";
  } else if (options_.metrics != nullptr &&
             options_.metrics->in_flight() >= static_cast<std::int64_t>(options_.max_in_flight_total)) {
    why = "overloaded: the server has " + std::to_string(options_.max_in_flight_total) +
          " invocations in flight (max_in_flight_total)";
  } else {
    return std::nullopt;
  }
  if (options_.metrics != nullptr) options_.metrics->RecordRejected(draining_ ? "draining" : "overloaded");
  const std::int64_t median = options_.metrics != nullptr
                                  ? options_.metrics->RecentMedianMs().value_or(kNoneFinishedRetryAfterMs)
                                  : kNoneFinishedRetryAfterMs;
  return server::Overloaded(nullptr, why, std::clamp(median, kMinRetryAfterMs, kMaxRetryAfterMs));
}

void Session::Cancelled(const json::object& params) {
  const json::value* id = params.if_contains("requestId");
  if (id == nullptr) return;
  auto it = in_flight_.find(server::IdKey(*id));
  if (it == in_flight_.end()) return;  // finished already, or never ours: ignored, as MCP says
  it->second->by_client = true;
  it->second->signal->emit(asio::cancellation_type::terminal);
}

void Session::Finished(const std::string& key) {
  in_flight_.erase(key);
  in_flight_count_ = in_flight_.size();
  if (in_flight_.empty() && on_idle_) {
    auto callback = std::move(on_idle_);
    on_idle_ = nullptr;
    callback();
  }
}

// Where a call's invocation ends: its answer (none when its caller cancelled it), counted.
struct CallDone {
  std::shared_ptr<Session> session;
  std::shared_ptr<SkillRunner> runner;
  const Skill* skill;
  std::string key;
  json::value id;
  Sink reply;
  bool structured;
};

void Session::Call(const json::value& id, json::object params, const Sink& reply) {
  const json::value* name = params.if_contains("name");
  if (name == nullptr || !name->is_string()) return reply(InvalidParams(id, "/name: the tool's name, a string"));
  const json::value* arguments = params.if_contains("arguments");
  if (arguments != nullptr && !arguments->is_object() && !arguments->is_null()) {
    return reply(InvalidParams(id, "/arguments: an object of the tool's arguments"));
  }
  std::shared_ptr<SkillRunner> runner = options_.host->Current();
  const Skill* skill = runner->registry()->FindSkill(name->get_string());
  if (skill == nullptr || !IsTool(*skill)) {
    return reply(InvalidParams(id, "Unknown tool: " + std::string(name->get_string())));
  }
  std::string key = server::IdKey(id);
  if (in_flight_.contains(key)) {
    return reply(
        server::ErrorAnswer(id, server::kInvalidRequest, "Invalid Request: id " + key + " is already in flight"));
  }
  const bool structured = HasStructuredOutput(protocol_version());
  if (auto refused = RefusedForLoad()) return reply(server::ResultAnswer(id, CallResult(*skill, *refused, structured)));
  auto request = std::make_unique<server::InvokeParams>();
  request->skill = skill->id;
  request->input = SkillInput(*skill, arguments != nullptr ? *arguments : json::value(nullptr));
  auto flight = std::make_shared<InFlight>();
  const json::object& meta = ObjectMember(params, "_meta");
  if (const json::value* token = meta.if_contains("progressToken")) {
    auto progress = std::make_shared<Progress>(Progress{*token, reply});
    progress->Send("attempt 1");
    flight->events = std::make_unique<StreamEvents>(ProgressOf(std::move(progress)));
    request->options.stream = flight->events.get();
  }
  in_flight_.emplace(key, flight);
  in_flight_count_ = in_flight_.size();
  if (options_.metrics != nullptr) options_.metrics->AddInFlight(1);
  CallDone done{shared_from_this(), runner, skill, key, id, reply, structured};
  asio::co_spawn(
      strand_,
      server::RunInvocation(std::move(runner), std::move(request), id, false, options_.caller, flight->cancel_reason),
      asio::bind_cancellation_slot(flight->signal->slot(), [done = std::move(done), flight](
                                                               std::exception_ptr e, server::DonePtr result) mutable {
        // Posted: any progress it emitted is sent before the answer.
        auto strand = done.session->strand_;
        asio::post(strand, [done = std::move(done), flight, e, result = std::move(result)]() mutable {
          done.session->Conclude(done, *flight, e, std::move(result));
        });
      }));
}

void Session::Conclude(const CallDone& done, const InFlight& flight, std::exception_ptr e, server::DonePtr result) {
  // The answer goes out before the call stops counting: a drain waiting for it ends after it is sent.
  struct Uncount {
    Session& session;
    const std::string& key;
    ~Uncount() {
      session.Finished(key);
      if (session.options_.metrics != nullptr) session.options_.metrics->AddInFlight(-1);
    }
  } uncount{*this, done.key};
  if (e) {
    server::LogInternalError(done.key, done.skill->id, e);
    done.reply(server::ErrorAnswer(done.id, server::kInternalError, "Internal error: the call failed unexpectedly"));
    return;
  }
  if (options_.metrics != nullptr) {
    options_.metrics->RecordInvocation(done.skill->id, result->outcome, result->metrics, result->seconds,
                                       result->review ? &*result->review : nullptr);
  }
  if (spdlog::should_log(spdlog::level::info)) {
    json::object event{{"mcp", true}, {"id", done.id}};
    if (!options_.caller.tenant.empty()) event["tenant"] = options_.caller.tenant;
    LogEvent(spdlog::level::info, "invoke", server::AccessLogFields(std::move(event), done.skill->id, *result));
  }
  if (flight.by_client) return done.reply(json::object{});  // MCP: no answer to a cancelled request
  done.reply(server::ResultAnswer(done.id, CallResult(*done.skill, result->answer, done.structured)));
}

}  // namespace skillrunner::mcp
