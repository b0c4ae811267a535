#include "runner/server/server.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <set>

#include "runner/rollout_report.h"
#include "runner/server/connection.h"
#include "runner/server/listeners.h"
#include "runner/server/metrics_endpoint.h"
#include "services/common/clock.h"
#include "services/common/iso_time.h"
#include "services/common/json_text.h"
#include "services/common/text.h"
#include "services/state/shared_state.h"
#include "services/state/tenant_quota.h"

namespace skillrunner::server {
namespace asio = boost::asio;
namespace json = boost::json;

namespace {

// After the drain timeout, cancelled invocations get this long to answer
// before their connections are closed regardless.
constexpr std::chrono::seconds kCancelGrace{5};

json::object LimitsJson(const ServerLimits& limits) {
  return json::object{{"max_line_bytes", limits.max_line_bytes},
                      {"max_depth", limits.max_depth},
                      {"max_in_flight_per_connection", limits.max_in_flight_per_connection},
                      {"max_in_flight_total", limits.max_in_flight_total},
                      {"max_connections", limits.max_connections},
                      {"max_batch", limits.max_batch},
                      {"idle_timeout_ms", limits.idle_timeout.count()},
                      {"max_write_queue_bytes", limits.max_write_queue_bytes},
                      {"drain_timeout_ms", limits.drain_timeout.count()}};
}

// What a failed reload's errors were (its warnings left out), or what a reload under
// --allow-broken left out.
json::array ReloadProblems(const SkillHost::ReloadReport& report) {
  if (report.ok) return report.failed;
  json::array errors;
  for (const auto& d : report.diagnostics) {
    const auto* severity = d.is_object() ? d.as_object().if_contains("severity") : nullptr;
    if (severity != nullptr && *severity == "error") errors.push_back(d);
  }
  return errors;
}

}  // namespace

Server::State::State(asio::io_context& io_context, ServerOptions server_options, SkillHost& skill_host,
                     std::vector<asio::io_context*> worker_contexts)
    : io(io_context),
      workers(worker_contexts.empty() ? std::vector<asio::io_context*>{&io_context} : std::move(worker_contexts)),
      options(std::move(server_options)),
      host(skill_host),
      clock(*options.clock),
      started(clock.Now()),
      strand(asio::make_strand(io_context)),
      drain_timer(strand) {
  metrics.Attach(options.quotas, options.shared_state, options.tracing);
  metrics.RecordReload(true, UnixSeconds(clock.WallNow()), false);  // the tree loaded at start
  metrics.AttachServing([this] { return ServingMetrics(); });
  metrics.AttachRollouts([&host = host] {
    std::shared_ptr<SkillRunner> runner = host.Current();
    if (!runner || !runner->rollouts()) return std::string();
    return RolloutPrometheus(*runner->registry(), *runner->rollouts(), runner->online_reviews().get());
  });
}

asio::io_context& Server::State::NextWorker() {
  return *workers[next_worker.fetch_add(1, std::memory_order_relaxed) % workers.size()];
}

void Server::State::AddConnection(const std::shared_ptr<Connection>& connection, std::uint64_t id) {
  std::lock_guard lock(connections_mutex);
  connections.emplace(id, connection);
}

void Server::State::RemoveConnection(std::uint64_t id) {
  bool last = false;
  {
    std::lock_guard lock(connections_mutex);
    connections.erase(id);
    last = connections.empty();
  }
  if (last && draining) asio::post(strand, [self = shared_from_this()] { self->FinishIfDrained(); });
}

std::vector<std::shared_ptr<Connection>> Server::State::LiveConnections() {
  std::vector<std::shared_ptr<Connection>> live;
  std::lock_guard lock(connections_mutex);
  for (auto& [id, weak] : connections) {
    if (auto connection = weak.lock()) live.push_back(std::move(connection));
  }
  return live;
}

std::string Server::State::ServingMetrics() {
  std::set<std::string, std::less<>> files;
  for (const json::value& failure : host.Failed()) {
    const json::value* file = failure.is_object() ? failure.as_object().if_contains("file") : nullptr;
    if (file != nullptr && file->is_string()) files.emplace(file->as_string());
  }
  std::string out = fmt::format(
      "# HELP skillrunner_tree_degraded 1 while the tree in service left files out (serve --allow-broken), else 0.\n"
      "# TYPE skillrunner_tree_degraded gauge\nskillrunner_tree_degraded {}\n"
      "# HELP skillrunner_tree_failed_files The skill and rubric files the tree in service left out.\n"
      "# TYPE skillrunner_tree_failed_files gauge\nskillrunner_tree_failed_files {}\n",
      files.empty() ? 0 : 1, files.size());
  if (!tls) return out;
  out +=
      "# HELP skillrunner_tls_certificate_expiry_timestamp_seconds When the certificate a TLS listener serves "
      "expires (its notAfter, Unix time).\n"
      "# TYPE skillrunner_tls_certificate_expiry_timestamp_seconds gauge\n";
  std::vector<std::string> listeners = options.listen;
  for (const std::string* other : {&options.metrics_listen, &options.mcp_listen}) {
    if (!other->empty()) listeners.push_back(*other);
  }
  for (const std::string& listener : listeners) {
    out += fmt::format("skillrunner_tls_certificate_expiry_timestamp_seconds{{listener=\"{}\"}} {}\n",
                       PrometheusLabel(listener), tls->ExpiresAt());
  }
  return out;
}

void Server::State::WarnOfExpiry() {
  constexpr std::chrono::hours kDay{24};
  const auto left = std::chrono::seconds(tls->ExpiresAt()) - clock.WallNow().time_since_epoch();
  if (left > 14 * kDay || (expiry_warned && clock.Now() - *expiry_warned < kDay)) return;
  expiry_warned = clock.Now();
  spdlog::warn(
      "the TLS certificate ({}) expires in {} day(s): renew it (a new pair is loaded on SIGHUP or when "
      "its files change)",
      tls->Describe(), std::chrono::duration_cast<std::chrono::hours>(left).count() / 24);
}

json::value Server::State::LastReload() {
  std::lock_guard lock(last_reload_mutex);
  return last_reload;
}

std::optional<json::object> Server::State::ReloadTls(bool force) {
  if (!tls) return std::nullopt;
  if (metrics_tls) {  // the same pair, the metrics listener's own client CA
    if (auto again = metrics_tls->Reload(force); !again) {
      spdlog::error("the metrics listener's TLS pair was not reloaded ({})", again.error().message);
    }
  }
  auto reloaded = tls->Reload(force);
  if (reloaded && !*reloaded) return std::nullopt;
  metrics.RecordTlsReload(reloaded.has_value());
  if (!reloaded) {
    spdlog::error("the TLS certificate and key were not reloaded ({}); the previous pair still serves",
                  reloaded.error().message);
    return json::object{{"ok", false}, {"error", reloaded.error().message}};
  }
  spdlog::info("TLS: new connections now get {}", tls->Describe());
  return json::object{{"ok", true}, {"certificate", tls->Describe()}};
}

SkillHost::ReloadReport Server::State::Reload() {
  // Counted before the new skills are in service, so that no client sees
  // them with the old count (ThreadSanitizer's timing found that window).
  SkillHost::ReloadReport report = host.Reload([this] { ++reloads; });
  const auto at = clock.WallNow();
  metrics.RecordReload(report.ok, UnixSeconds(at));
  {
    std::lock_guard lock(last_reload_mutex);
    last_reload = json::object{{"ok", report.ok}, {"at", IsoUtc(at)}, {"failed", ReloadProblems(report)}};
    if (auto tls_reload = ReloadTls(true)) {
      last_reload.as_object()["tls"] = std::move(*tls_reload);
      if (!last_reload.at("tls").at("ok").as_bool()) last_reload.as_object()["ok"] = false;
    }
  }
  if (report.ok) {
    spdlog::info("reloaded: {} skill(s), {} rubric(s)", report.skills, report.rubrics);
    // Every open connection hears which skills' schemas changed, and whether that breaks callers.
    for (auto& door : front_doors) door->Reloaded();
    for (const auto& change : report.changed) {
      const std::string line =
          CompactJson(json::object{{"jsonrpc", "2.0"}, {"method", "skills.changed"}, {"params", change.as_object()}});
      for (auto& connection : LiveConnections()) connection->Notify(line);
    }
    if (!report.failed.empty()) {
      spdlog::warn("serving without what did not load (--allow-broken): {} problem(s)", report.failed.size());
    }
  } else {
    spdlog::warn("reload failed with {} diagnostic(s); the previous skills stay in service", report.diagnostics.size());
  }
  return report;
}

namespace {

// Each tenant's usage in this process: {name: {invocations, overloaded, in_flight}}.
json::object TenantsJson(const state::TenantQuotas* quotas) {
  json::object out;
  if (quotas == nullptr) return out;
  for (const auto& [name, usage] : quotas->usage()) {
    out[name] =
        json::object{{"invocations", usage.requests}, {"overloaded", usage.overloaded}, {"in_flight", usage.in_flight}};
  }
  return out;
}

}  // namespace

std::string_view Server::State::Status(const json::array& failed) const {
  if (draining) return "draining";
  return failed.empty() ? "ok" : "degraded";
}

Probe Server::State::Readiness() {
  json::array failed = host.Failed();
  // Neither a degraded tree nor an unreachable Redis makes a replica unready:
  // its peers share the same tree and the same Redis.
  const bool ready = !draining && !host.Current()->registry()->skills().empty();
  std::string_view status = Status(failed);
  return Probe{ready, json::object{{"status", status},
                                   {"state", StateStatus(options.shared_state.get())},
                                   {"failed", std::move(failed)},
                                   {"last_reload", LastReload()}}};
}

json::object Server::State::Health() {
  auto registry = host.Current()->registry();
  json::array tcp;
  for (const auto& listen : options.listen) tcp.push_back(json::string(listen));
  json::array failed = host.Failed();
  std::string_view status = Status(failed);
  return json::object{
      {"status", status},
      {"failed", std::move(failed)},
      {"version", SKILLRUNNER_VERSION},
      {"uptime_ms", clock.ElapsedMs(started)},
      {"in_flight", metrics.in_flight()},
      {"connections", metrics.connections()},
      {"skills", registry->skills().size()},
      {"rubrics", registry->rubrics().size()},
      {"reloads", reloads.load()},
      {"last_reload", LastReload()},
      {"listeners", json::object{{"socket", options.socket_path},
                                 {"tcp", std::move(tcp)},
                                 {"metrics", options.metrics_listen},
                                 {"tls", tls ? json::value(json::object{{"certificate", tls->Describe()},
                                                                        {"client_certificates", tls->mutual()}})
                                             : json::value(nullptr)}}},
      {"limits", LimitsJson(options.limits)},
      {"state", StateStatus(options.shared_state.get())},
      {"tenants", TenantsJson(options.quotas)},
      {"tracing", TracingJson(options.tracing.get())}};
}

void Server::State::BeginShutdown() {
  if (stopped) return;
  if (draining) {
    spdlog::warn("second stop signal: cancelling every invocation in flight now");
    CancelEverything("a second stop signal ended the server's drain");
    return;
  }
  drain_ends = (clock.Now() + options.limits.drain_timeout).time_since_epoch().count();
  draining = true;
  if (unix_listener) unix_listener->Stop();  // its file goes too
  for (auto& listener : tcp_listeners) listener->Stop();
  if (tls_watch) tls_watch->cancel();
  // The metrics listener stays open until the drain is over: /readyz says
  // 503 to the load balancer meanwhile, and /metrics shows the drain.
  auto live = LiveConnections();
  spdlog::info("stopping: {} connection(s), {} invocation(s) in flight; waiting up to {} ms", live.size(),
               metrics.in_flight(), options.limits.drain_timeout.count());
  for (auto& connection : live) connection->Drain();
  DrainFrontDoors();
  drain_timer.expires_after(options.limits.drain_timeout);
  drain_timer.async_wait([self = shared_from_this()](boost::system::error_code ec) {
    if (ec || self->stopped) return;
    spdlog::warn("drain timeout: cancelling {} invocation(s) still in flight", self->metrics.in_flight());
    self->CancelEverything("the server's drain timeout (" + std::to_string(self->options.limits.drain_timeout.count()) +
                           " ms) ran out");
    self->drain_timer.expires_after(kCancelGrace);
    self->drain_timer.async_wait([self](boost::system::error_code again) {
      if (again || self->stopped) return;
      for (auto& connection : self->LiveConnections()) connection->Abort("shutdown");
    });
  });
  FinishIfDrained();
}

std::int64_t Server::State::DrainLeftMs() const {
  const Clock::TimePoint ends{Clock::TimePoint::duration(drain_ends.load())};
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(ends - clock.Now()).count();
  return std::max<std::int64_t>(0, left);
}

void Server::State::DrainFrontDoors() {
  front_doors_busy = front_doors.size();
  for (auto& door : front_doors) {
    door->Drain([weak = weak_from_this()] {
      if (auto self = weak.lock()) {
        asio::post(self->strand, [self] {
          --self->front_doors_busy;
          self->FinishIfDrained();
        });
      }
    });
  }
}

void Server::State::CancelEverything(const std::string& reason) {
  for (auto& connection : LiveConnections()) connection->CancelAll(reason);
  for (auto& door : front_doors) door->CancelAll(reason);
}

void Server::State::FinishIfDrained() {
  if (stopped || !draining) return;
  {
    std::lock_guard lock(connections_mutex);
    if (!connections.empty()) return;
  }
  if (front_doors_busy > 0) return;
  stopped = true;
  drain_timer.cancel();
  for (auto& door : front_doors) door->Close();
  if (metrics_endpoint) metrics_endpoint->Close();
  if (signals) signals->cancel();
  spdlog::info("stopped");
  if (on_stopped) on_stopped();
}

Server::Server(asio::io_context& io, ServerOptions options, SkillHost& host, std::vector<asio::io_context*> workers)
    : state_(std::make_shared<State>(io, std::move(options), host, std::move(workers))) {}

Server::~Server() {
  // A server that never drained (a failed start, a test) leaves no socket file.
  if (state_->unix_listener) state_->unix_listener->Stop();
  for (auto& listener : state_->tcp_listeners) listener->Stop();
}

namespace {

// The Prometheus and probe listener (--metrics-listen), if asked for.
// design.md §12.1: the metrics listener's TLS: serve's, or (--metrics-client-ca) the same pair with its
// own client CA, "none" asking no client certificate of probes and scrapers.
Result<std::shared_ptr<net::TlsServer>> MetricsTls(Server::State& state) {
  const std::string& ca = state.options.metrics_client_ca;
  if (ca.empty()) return state.tls;
  if (!state.tls) return Fail(ErrorCode::kConfigInvalid, "--metrics-client-ca needs --tls-cert and --tls-key");
  net::TlsFiles files = state.options.tls;
  files.client_ca_file = ca == "none" ? "" : ca;
  auto loaded = net::TlsServer::Load(std::move(files));
  if (!loaded) return Fail(std::move(loaded.error()), "--metrics-client-ca");
  state.metrics_tls = *loaded;
  return state.metrics_tls;
}

Result<void> OpenMetricsEndpoint(const std::shared_ptr<Server::State>& shared) {
  Server::State& state = *shared;
  if (state.options.metrics_listen.empty()) return {};
  auto endpoint = net::ParseListenAddress(state.options.metrics_listen);
  if (!endpoint)
    return std::unexpected(endpoint.error().WithContext("--metrics-listen " + state.options.metrics_listen));
  if (!endpoint->address().is_loopback() && !state.options.allow_remote) {
    return std::unexpected(Error{ErrorCode::kConfigInvalid,
                                 "--metrics-listen " + state.options.metrics_listen +
                                     " is not a loopback address; add --allow-remote to expose metrics to other hosts",
                                 {},
                                 {}});
  }
  auto listener = net::Listener::Tcp(state.io, *endpoint, state.options.metrics_listen);
  if (!listener) return std::unexpected(std::move(listener.error()));
  std::weak_ptr<Server::State> weak = shared;
  auto probe = [weak] {
    auto alive = weak.lock();
    return alive ? alive->Readiness() : Probe{false, json::object{{"status", "stopped"}}};
  };
  auto tls = MetricsTls(state);
  if (!tls) return std::unexpected(std::move(tls.error()));
  state.metrics_endpoint = std::make_shared<net::HttpServer>(std::move(*listener), MetricsHttpOptions(*tls),
                                                             MetricsRoutes(state.metrics, std::move(probe)));
  state.metrics_endpoint->Start({&state.io}, StopServerIfLoopFails(shared, "metrics endpoint accept loop"));
  return {};
}

// A changed certificate or key file (cert-manager renewing a Secret) is loaded within kTlsWatch.
constexpr std::chrono::seconds kTlsWatch{5};

asio::awaitable<void> WatchTlsFiles(std::shared_ptr<Server::State> state) {
  state->tls_watch.emplace(state->strand);
  while (!state->draining && !state->stopped) {
    state->tls_watch->expires_after(kTlsWatch);
    auto [ec] = co_await state->tls_watch->async_wait(asio::as_tuple(asio::use_awaitable));
    if (ec || state->draining) break;
    state->WarnOfExpiry();
    if (auto reloaded = state->ReloadTls(false)) {
      std::lock_guard lock(state->last_reload_mutex);
      if (!state->last_reload.is_object()) state->last_reload = json::object();
      state->last_reload.as_object()["tls"] = std::move(*reloaded);
    }
  }
}

}  // namespace

Result<std::shared_ptr<net::TlsServer>> Server::LoadTls() {
  State& state = *state_;
  if (state.tls || !state.options.tls.enabled()) return state.tls;
  auto tls = net::TlsServer::Load(state.options.tls);
  if (!tls) return std::unexpected(std::move(tls.error()));
  state.tls = std::move(*tls);
  spdlog::info("TLS on every TCP listener: {}{}", state.tls->Describe(),
               state.tls->mutual() ? "; client certificates required" : "");
  return state.tls;
}

Result<void> Server::Start() {
  State& state = *state_;
  if (state.options.socket_path.empty() && state.options.listen.empty() && state.front_doors.empty()) {
    return Fail(ErrorCode::kConfigInvalid, "nothing to listen on: give --socket PATH and/or --listen HOST:PORT");
  }
  auto fail = [&](Error error) -> Result<void> {
    if (state.unix_listener) state.unix_listener->Stop();
    state.unix_listener.reset();
    state.tcp_listeners.clear();
    return std::unexpected(std::move(error));
  };
  if (auto loaded = LoadTls(); !loaded) return fail(std::move(loaded.error()));
  if (!state.options.socket_path.empty()) {
    if (auto opened = OpenUnixListener(state); !opened) return fail(std::move(opened.error()));
  }
  for (const auto& listen : state.options.listen) {
    if (auto opened = OpenTcpListener(state, listen); !opened) return fail(std::move(opened.error()));
  }
  if (auto opened = OpenMetricsEndpoint(state_); !opened) return fail(std::move(opened.error()));
  StartAccepting(state_);
  if (state.tls) asio::co_spawn(state.strand, WatchTlsFiles(state_), asio::detached);
  for (auto& door : state.front_doors) door->Open();
  return {};
}

std::vector<unsigned short> Server::tcp_ports() const {
  std::vector<unsigned short> ports;
  for (const auto& listener : state_->tcp_listeners) ports.push_back(listener->port());
  return ports;
}

unsigned short Server::metrics_port() const { return state_->metrics_endpoint ? state_->metrics_endpoint->port() : 0; }

void Server::HandleSignals() {
  // Nothing runs on the strand yet (see server.h): the set is made here, not posted to it.
  state_->signals.emplace(state_->strand, SIGTERM, SIGINT, SIGHUP);
  asio::co_spawn(
      state_->strand,
      [state = state_]() -> asio::awaitable<void> {
        while (!state->stopped) {
          auto [ec, signal] = co_await state->signals->async_wait(asio::as_tuple(asio::use_awaitable));
          if (ec) break;
          if (signal == SIGHUP) {
            spdlog::info("SIGHUP: reloading skills");
            state->Reload();
          } else {
            spdlog::info("{}: shutting down", signal == SIGTERM ? "SIGTERM" : "SIGINT");
            state->BeginShutdown();
          }
        }
      },
      StopServerIfLoopFails(state_, "signal loop"));
}

void Server::Shutdown() {
  asio::post(state_->strand, [state = state_] { state->BeginShutdown(); });
}

void Server::OnStopped(std::function<void()> callback) { state_->on_stopped = std::move(callback); }

ServerMetrics& Server::metrics() { return state_->metrics; }

void Server::AddFrontDoor(std::shared_ptr<FrontDoor> door) { state_->front_doors.push_back(std::move(door)); }

}  // namespace skillrunner::server
