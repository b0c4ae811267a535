#include "services/state/redis.h"

#include <hiredis/async.h>
#include <hiredis/hiredis.h>

#include <atomic>
#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/url/parse.hpp>
#include <charconv>
#include <optional>

namespace skillrunner::state {
namespace asio = boost::asio;

std::string RedisUrl::Display() const {
  return "redis://" + host + ":" + std::to_string(port) + "/" + std::to_string(db);
}

Result<RedisUrl> ParseRedisUrl(std::string_view text) {
  auto parsed = boost::urls::parse_uri(text);
  if (parsed && parsed->scheme() == "rediss") {
    return Fail(
        ErrorCode::kConfigInvalid,
        "rediss:// (Redis over TLS) is not supported: Debian 12's hiredis has no TLS; run a TLS sidecar such as "
        "stunnel next to each replica and give its local redis:// address (docs/operations.md)");
  }
  if (!parsed || parsed->scheme() != "redis") {
    return Fail(ErrorCode::kConfigInvalid, "not a redis:// URL (redis://[:password@]host[:port][/db])");
  }
  RedisUrl url;
  url.host = parsed->host();
  if (url.host.empty()) return Fail(ErrorCode::kConfigInvalid, "the redis URL names no host");
  if (parsed->has_port()) {
    if (parsed->port_number() == 0) return Fail(ErrorCode::kConfigInvalid, "the redis URL's port is not a port number");
    url.port = parsed->port_number();
  }
  if (parsed->has_password()) url.password = parsed->password();
  std::string path = parsed->path();
  if (!path.empty() && path != "/") {
    std::string_view digits = std::string_view(path).substr(1);
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), url.db);
    if (ec != std::errc() || end != digits.data() + digits.size() || url.db < 0) {
      return Fail(ErrorCode::kConfigInvalid, "the redis URL's path must be a database number, not \"" + path + "\"");
    }
  }
  return url;
}

namespace {

RedisReply Convert(const redisReply* reply) {
  RedisReply out;
  switch (reply->type) {
    case REDIS_REPLY_INTEGER:
      out.type = RedisReply::Type::kInteger;
      out.integer = reply->integer;
      break;
    case REDIS_REPLY_STRING:
      out.type = RedisReply::Type::kString;
      break;
    case REDIS_REPLY_STATUS:
      out.type = RedisReply::Type::kStatus;
      break;
    case REDIS_REPLY_ERROR:
      out.type = RedisReply::Type::kError;
      break;
    case REDIS_REPLY_ARRAY:
      out.type = RedisReply::Type::kArray;
      break;
    default:
      out.type = RedisReply::Type::kNil;
      break;
  }
  if (reply->str != nullptr) out.text.assign(reply->str, reply->len);
  for (std::size_t i = 0; i < reply->elements; ++i) out.elements.push_back(Convert(reply->element[i]));
  return out;
}

// One awaited answer: completed once, by the reply or by its timeout,
// whichever comes first; the coroutine resumes on its own executor.
// (Boost 1.81's any_completion_handler move-assignment recurses for ever:
// it is only ever constructed here, never assigned.)
template <typename Value>
struct Pending {
  template <typename Handler>
  Pending(Handler&& h, asio::any_io_executor resume_on)
      : handler(std::forward<Handler>(h)), resume_on(std::move(resume_on)) {}

  asio::any_completion_handler<void(Value)> handler;
  asio::any_io_executor resume_on;  // the awaiting coroutine's executor
  std::optional<asio::steady_timer> timer;

  void Complete(Value value) {
    if (!handler) return;
    if (timer) timer->cancel();
    // Held by pointer: any_completion_handler is move-only, but its
    // converting constructor would let a lambda holding it look copyable.
    auto held = std::make_shared<asio::any_completion_handler<void(Value)>>(std::move(handler));
    asio::post(resume_on, [held, value = std::move(value)]() mutable { std::move (*held)(std::move(value)); });
  }
};

using ConnectResult = std::expected<void, std::string>;

}  // namespace

struct RedisConnection::Impl : std::enable_shared_from_this<RedisConnection::Impl> {
  Impl(asio::any_io_executor executor, RedisUrl url) : strand(asio::make_strand(executor)), url(std::move(url)) {}

  asio::strand<asio::any_io_executor> strand;
  RedisUrl url;
  // Everything below is touched only on `strand`.
  redisAsyncContext* context = nullptr;
  std::optional<asio::posix::stream_descriptor> socket;
  std::uint64_t generation = 0;  // which connection a socket wait belongs to
  bool want_read = false;
  bool want_write = false;
  bool read_armed = false;
  bool write_armed = false;
  std::shared_ptr<Pending<ConnectResult>> connecting;
  std::atomic<bool> connected{false};

  void Arm(bool read);
  void OnReady(bool read, boost::system::error_code ec);
  void Drop();
  static void OnConnect(const redisAsyncContext* context, int status);
  static void OnDisconnect(const redisAsyncContext* context, int status);
  static void OnReply(redisAsyncContext* context, void* reply, void* privdata);
  void Attach(redisAsyncContext* context);
};

void RedisConnection::Impl::Arm(bool read) {
  bool& armed = read ? read_armed : write_armed;
  if (armed || !socket) return;
  armed = true;
  auto wait = read ? asio::posix::descriptor_base::wait_read : asio::posix::descriptor_base::wait_write;
  socket->async_wait(wait, asio::bind_executor(strand, [weak = weak_from_this(), read,
                                                        generation = generation](boost::system::error_code ec) {
                       auto self = weak.lock();
                       if (!self || generation != self->generation) return;  // a wait of a connection that is gone
                       self->OnReady(read, ec);
                     }));
}

void RedisConnection::Impl::OnReady(bool read, boost::system::error_code ec) {
  {
    (read ? read_armed : write_armed) = false;
    if (ec || context == nullptr) return;
    if (read && want_read) redisAsyncHandleRead(context);
    if (!read && want_write) redisAsyncHandleWrite(context);
    // hiredis may have freed the context (and released the socket) meanwhile.
    if (context != nullptr && (read ? want_read : want_write)) Arm(read);
  }
}

// Forgets the connection hiredis has freed or is about to free.
void RedisConnection::Impl::Drop() {
  context = nullptr;
  connected = false;
  want_read = want_write = false;
  ++generation;
  if (socket) {
    (void)socket->release();  // hiredis owns (and closes) the descriptor
    socket.reset();
  }
  read_armed = write_armed = false;
}

void RedisConnection::Impl::OnConnect(const redisAsyncContext* context, int status) {
  auto* self = static_cast<Impl*>(context->ev.data);
  if (status != REDIS_OK) {
    std::string why = context->errstr[0] != '\0' ? context->errstr : "connection refused";
    self->Drop();  // hiredis frees a context whose connect failed
    if (self->connecting) self->connecting->Complete(std::unexpected(why));
    return;
  }
  if (self->connecting) self->connecting->Complete(ConnectResult{});
}

void RedisConnection::Impl::OnDisconnect(const redisAsyncContext* context, int) {
  auto* self = static_cast<Impl*>(context->ev.data);
  if (self != nullptr && self->context == context) self->Drop();
}

void RedisConnection::Impl::OnReply(redisAsyncContext*, void* reply, void* privdata) {
  std::unique_ptr<std::shared_ptr<Pending<Answer>>> pending(static_cast<std::shared_ptr<Pending<Answer>>*>(privdata));
  if (reply == nullptr) {
    (*pending)->Complete(Fail(ErrorCode::kInternal, "the connection to redis was lost"));
    return;
  }
  RedisReply converted = Convert(static_cast<redisReply*>(reply));
  if (converted.type == RedisReply::Type::kError) {
    (*pending)->Complete(Fail(ErrorCode::kInternal, "redis answered: " + converted.text));
  } else {
    (*pending)->Complete(std::move(converted));
  }
}

void RedisConnection::Impl::Attach(redisAsyncContext* fresh) {
  context = fresh;
  ++generation;
  context->ev.data = this;
  context->ev.addRead = [](void* data) {
    auto* s = static_cast<Impl*>(data);
    s->want_read = true;
    s->Arm(true);
  };
  context->ev.delRead = [](void* data) { static_cast<Impl*>(data)->want_read = false; };
  context->ev.addWrite = [](void* data) {
    auto* s = static_cast<Impl*>(data);
    s->want_write = true;
    s->Arm(false);
  };
  context->ev.delWrite = [](void* data) { static_cast<Impl*>(data)->want_write = false; };
  context->ev.cleanup = [](void* data) { static_cast<Impl*>(data)->Drop(); };
  socket.emplace(strand, context->c.fd);
  redisAsyncSetDisconnectCallback(context, &Impl::OnDisconnect);
  redisAsyncSetConnectCallback(context, &Impl::OnConnect);  // arms the first write wait: the connect
}

RedisConnection::RedisConnection(asio::any_io_executor executor, RedisUrl url)
    : impl_(std::make_shared<Impl>(std::move(executor), std::move(url))) {}

std::shared_ptr<RedisConnection> RedisConnection::Create(asio::any_io_executor executor, RedisUrl url) {
  return std::shared_ptr<RedisConnection>(new RedisConnection(std::move(executor), std::move(url)));
}

RedisConnection::~RedisConnection() {
  // No wait or command can be running: each holds a shared_ptr to this.
  if (impl_->context != nullptr) {
    redisAsyncContext* context = impl_->context;
    context->ev.data = impl_.get();
    redisAsyncFree(context);  // answers what is pending with "lost", then cleanup → Drop
  }
}

bool RedisConnection::connected() const { return impl_->connected; }

void RedisConnection::Close() {
  // hiredis keeps a read armed while it is connected (to see the server hang up), and that wait
  // alone keeps an io_context running: a server that drained would never end.
  asio::post(impl_->strand, [impl = impl_] {
    if (impl->context == nullptr) return;
    redisAsyncContext* context = impl->context;
    redisAsyncFree(context);  // answers what is pending with "lost", then cleanup → Drop
  });
}

boost::asio::awaitable<Result<void>> RedisConnection::Connect(std::chrono::milliseconds timeout) {
  auto self = shared_from_this();
  asio::ip::tcp::resolver resolver(impl_->strand);
  auto [ec, endpoints] = co_await resolver.async_resolve(impl_->url.host, std::to_string(impl_->url.port),
                                                         asio::as_tuple(asio::use_awaitable));
  if (ec || endpoints.empty()) {
    co_return Fail(ErrorCode::kInternal,
                   "cannot resolve " + impl_->url.host + ": " + (ec ? ec.message() : "no address"));
  }
  std::string ip = endpoints.begin()->endpoint().address().to_string();
  asio::any_io_executor resume_on = co_await asio::this_coro::executor;
  // Named, not a temporary in the co_await expression (GCC 12 destroys such
  // a lambda's captures twice).
  auto initiation = [self, ip, timeout, resume_on](auto handler) {
    Impl& impl = *self->impl_;
    asio::post(impl.strand, [self, ip, timeout, resume_on, handler = std::move(handler)]() mutable {
      Impl& impl = *self->impl_;
      if (impl.context != nullptr) {
        redisAsyncContext* old = impl.context;
        redisAsyncFree(old);  // → cleanup → Drop
      }
      auto pending = std::make_shared<Pending<ConnectResult>>(std::move(handler), resume_on);
      redisAsyncContext* context = redisAsyncConnect(ip.c_str(), impl.url.port);
      if (context == nullptr || context->err != 0) {
        std::string why = context != nullptr ? context->errstr : "out of memory";
        if (context != nullptr) redisAsyncFree(context);
        pending->Complete(std::unexpected(why));
        return;
      }
      impl.connecting = pending;
      pending->timer.emplace(impl.strand);
      pending->timer->expires_after(timeout);
      pending->timer->async_wait([self, pending, timeout](boost::system::error_code ec) {
        if (ec || !pending->handler) return;
        Impl& impl = *self->impl_;
        if (impl.context != nullptr) redisAsyncFree(impl.context);
        pending->Complete(std::unexpected("no connection within " + std::to_string(timeout.count()) + " ms"));
      });
      impl.Attach(context);
    });
  };
  ConnectResult result = co_await asio::async_initiate<decltype(asio::use_awaitable), void(ConnectResult)>(
      std::move(initiation), asio::use_awaitable);
  if (!result)
    co_return Fail(ErrorCode::kInternal, "cannot connect to " + impl_->url.Display() + ": " + result.error());
  if (!impl_->url.password.empty()) {
    std::vector<std::string> command{"AUTH", impl_->url.password};  // (named: GCC 12 and braced lists in co_await)
    auto auth = co_await Command(std::move(command), timeout);
    if (!auth) co_return Fail(std::move(auth.error()), impl_->url.Display() + ": AUTH failed");
  }
  if (impl_->url.db != 0) {
    std::vector<std::string> command{"SELECT", std::to_string(impl_->url.db)};
    auto select = co_await Command(std::move(command), timeout);
    if (!select) co_return Fail(std::move(select.error()), impl_->url.Display() + ": SELECT failed");
  }
  impl_->connected = true;
  co_return Result<void>{};
}

boost::asio::awaitable<RedisConnection::Answer> RedisConnection::Command(std::vector<std::string> args,
                                                                         std::chrono::milliseconds timeout) {
  auto self = shared_from_this();
  asio::any_io_executor resume_on = co_await asio::this_coro::executor;
  auto initiation = [self, args = std::move(args), timeout, resume_on](auto handler) mutable {
    asio::post(self->impl_->strand, [self, args = std::move(args), timeout, resume_on,
                                     handler = std::move(handler)]() mutable {
      Impl& impl = *self->impl_;
      auto pending = std::make_shared<Pending<Answer>>(std::move(handler), resume_on);
      if (impl.context == nullptr) {
        pending->Complete(Fail(ErrorCode::kInternal, "not connected to redis"));
        return;
      }
      std::vector<const char*> argv;
      std::vector<std::size_t> lengths;
      for (const auto& arg : args) {
        argv.push_back(arg.data());
        lengths.push_back(arg.size());
      }
      auto* privdata = new std::shared_ptr<Pending<Answer>>(pending);
      if (redisAsyncCommandArgv(impl.context, &Impl::OnReply, privdata, static_cast<int>(argv.size()), argv.data(),
                                lengths.data()) != REDIS_OK) {
        delete privdata;
        pending->Complete(Fail(ErrorCode::kInternal, "redis refused the command: the connection is closing"));
        return;
      }
      pending->timer.emplace(impl.strand);
      pending->timer->expires_after(timeout);
      pending->timer->async_wait([pending, timeout](boost::system::error_code ec) {
        if (ec) return;
        pending->Complete(
            Fail(ErrorCode::kInternal, "no answer from redis within " + std::to_string(timeout.count()) + " ms"));
      });
    });
  };
  Answer answer = co_await asio::async_initiate<decltype(asio::use_awaitable), void(Answer)>(std::move(initiation),
                                                                                             asio::use_awaitable);
  co_return answer;
}

}  // namespace skillrunner::state
