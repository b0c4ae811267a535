#include "runner/mcp/mcp_http.h"

#include <openssl/rand.h>
#include <spdlog/spdlog.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "runner/mcp/mcp_http_state.h"
#include "runner/net/address.h"
#include "runner/net/listener.h"
#include "services/common/clock.h"

namespace skillrunner::mcp {
namespace asio = boost::asio;
namespace json = boost::json;

Mailbox::Mailbox(asio::any_io_executor executor) : timer_(std::move(executor)) {}

void Mailbox::Wake() {
  asio::post(timer_.get_executor(), [self = shared_from_this()] { self->timer_.cancel(); });
}

void Mailbox::Push(json::object message) {
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(message));
  }
  Wake();
}

void Mailbox::Shut() {
  {
    std::lock_guard lock(mutex_);
    shut_ = true;
  }
  Wake();
}

asio::awaitable<Mailbox::Popped> Mailbox::Pop(std::chrono::steady_clock::duration wait) {
  const auto deadline = RealClock().Now() + wait;
  for (;;) {
    {
      std::lock_guard lock(mutex_);
      if (!queue_.empty()) {
        Popped popped{Got::kMessage, std::move(queue_.front())};
        queue_.pop_front();
        co_return popped;
      }
      if (shut_) co_return Popped{};
    }
    if (RealClock().Now() >= deadline) co_return Popped{Got::kTimeout, {}};
    // A Push meanwhile cancels this wait: its Wake is posted to this same executor.
    timer_.expires_at(deadline);
    co_await timer_.async_wait(asio::as_tuple(asio::use_awaitable));
  }
}

HttpDoor::State::State(std::vector<asio::io_context*> workers_in, HttpOptions options_in)
    : workers(std::move(workers_in)), options(std::move(options_in)) {}

namespace {

constexpr std::chrono::hours kSessionIdle{1};

// 128 random bits as 32 hex digits (MCP: a session id is globally unique and unguessable).
std::string NewSessionId() {
  unsigned char bytes[16];
  if (RAND_bytes(bytes, sizeof bytes) != 1) throw std::runtime_error("no random bytes for an MCP session id");
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id;
  for (unsigned char b : bytes) {
    id += kHex[b >> 4];
    id += kHex[b & 15];
  }
  return id;
}

}  // namespace

std::optional<std::string> HttpDoor::State::Open(const std::string& tenant) {
  asio::io_context& io = *workers[next_worker++ % workers.size()];
  SessionOptions session_options = options.session;
  session_options.caller.tenant = tenant;
  auto session = std::make_shared<Session>(io.get_executor(), std::move(session_options));
  std::lock_guard lock(mutex);
  const auto now = RealClock().Now();
  auto oldest = sessions.end();
  for (auto it = sessions.begin(); it != sessions.end();) {
    if (it->second.Idle() && now - it->second.last_used > kSessionIdle) {
      it = sessions.erase(it);
      continue;
    }
    if (it->second.Idle() && (oldest == sessions.end() || it->second.last_used < oldest->second.last_used)) oldest = it;
    ++it;
  }
  if (sessions.size() >= options.max_sessions) {
    if (oldest == sessions.end()) return std::nullopt;
    sessions.erase(oldest);
  }
  std::string id = NewSessionId();
  sessions.emplace(id, HttpSession{std::move(session), tenant, nullptr});
  return id;
}

std::shared_ptr<Session> HttpDoor::State::Find(const std::string& id, const std::string& tenant) {
  std::lock_guard lock(mutex);
  auto it = sessions.find(id);
  if (it == sessions.end() || it->second.tenant != tenant) return nullptr;
  it->second.last_used = RealClock().Now();
  return it->second.session;
}

void HttpDoor::State::Erase(const std::string& id) {
  HttpSession gone;
  {
    std::lock_guard lock(mutex);
    auto it = sessions.find(id);
    if (it == sessions.end()) return;
    gone = std::move(it->second);
    sessions.erase(it);
  }
  gone.session->CancelAll("the client ended the MCP session");
  if (gone.stream) gone.stream->Shut();
}

bool HttpDoor::State::AttachStream(const std::string& id, const std::shared_ptr<Mailbox>& stream) {
  std::lock_guard lock(mutex);
  auto it = sessions.find(id);
  if (it == sessions.end() || it->second.stream) return false;
  it->second.stream = stream;
  return true;
}

void HttpDoor::State::DetachStream(const std::string& id, const std::shared_ptr<Mailbox>& stream) {
  std::shared_ptr<Session> session;
  {
    std::lock_guard lock(mutex);
    auto it = sessions.find(id);
    if (it == sessions.end() || it->second.stream != stream) return;
    it->second.stream = nullptr;
    session = it->second.session;
  }
  session->SetNotifications(nullptr);
}

void HttpDoor::State::SessionIdle() {
  std::function<void()> callback;
  {
    std::lock_guard lock(mutex);
    if (busy_sessions == 0 || --busy_sessions > 0) return;
    callback = std::move(on_idle);
  }
  if (callback) callback();
}

Result<std::shared_ptr<HttpDoor>> HttpDoor::Listen(std::vector<asio::io_context*> workers, std::string_view address,
                                                   HttpOptions options) {
  const std::string flag = "--mcp-listen " + std::string(address);
  auto endpoint = net::ParseListenAddress(address);
  if (!endpoint) return std::unexpected(endpoint.error().WithContext(flag));
  if (!endpoint->address().is_loopback()) {
    if (!options.allow_remote) {
      return Fail(ErrorCode::kConfigInvalid,
                  flag + " is not a loopback address; add --allow-remote to accept other hosts");
    }
    if (options.identity.Open()) {
      return Fail(
          ErrorCode::kConfigInvalid,
          flag + " accepts other hosts, so it needs a token: set SKILLRUNNER_TOKEN (or give the config tenants)");
    }
  }
  auto listener = net::Listener::Tcp(*workers.front(), *endpoint, flag);
  if (!listener) return std::unexpected(std::move(listener.error()));
  auto state = std::make_shared<State>(std::move(workers), std::move(options));
  state->http =
      std::make_shared<net::HttpServer>(std::move(*listener), DoorHttpOptions(state->options), ExchangeHandler(state));
  return std::shared_ptr<HttpDoor>(new HttpDoor(std::move(state)));
}

HttpDoor::HttpDoor(std::shared_ptr<State> state) : state_(std::move(state)) {}

HttpDoor::~HttpDoor() = default;

unsigned short HttpDoor::port() const { return state_->http->port(); }

void HttpDoor::Open() {
  state_->http->Start(state_->workers, [](std::exception_ptr failure) {
    if (failure) spdlog::error("mcp: the accept loop stopped on an exception");
  });
}

void HttpDoor::Reloaded() {
  std::lock_guard lock(state_->mutex);
  for (auto& [id, entry] : state_->sessions) entry.session->ToolsChanged();
}

void HttpDoor::Drain(std::function<void()> on_idle) {
  state_->draining = true;
  state_->http->StopAccepting();
  std::vector<std::shared_ptr<Session>> sessions;
  {
    std::lock_guard lock(state_->mutex);
    for (auto& [id, entry] : state_->sessions) sessions.push_back(entry.session);
    state_->busy_sessions = sessions.size();
    if (!sessions.empty()) state_->on_idle = std::move(on_idle);
  }
  if (sessions.empty()) return on_idle();
  for (auto& session : sessions) session->Drain([state = state_] { state->SessionIdle(); });
}

void HttpDoor::CancelAll(const std::string& reason) {
  std::lock_guard lock(state_->mutex);
  for (auto& [id, entry] : state_->sessions) entry.session->CancelAll(reason);
}

void HttpDoor::Close() {
  {
    std::lock_guard lock(state_->mutex);
    for (auto& [id, entry] : state_->sessions) {
      if (entry.stream) entry.stream->Shut();
    }
  }
  state_->http->Close();  // a connection in an exchange ends after it
}

}  // namespace skillrunner::mcp
