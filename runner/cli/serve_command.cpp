#include "runner/cli/serve_command.h"

#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cstdio>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "runner/cli/reloading_host.h"
#include "runner/cli/rollout_history.h"
#include "runner/mcp/mcp_http.h"
#include "runner/mcp/mcp_stdio.h"
#include "runner/online_review.h"
#include "runner/rollout/rollout_book.h"
#include "runner/rollout/shared_rollouts.h"
#include "runner/rollout_report.h"
#include "runner/server/server.h"
#include "services/state/tenant_quota.h"

namespace skillrunner::cli {
namespace asio = boost::asio;

namespace {

constexpr int kUsageStatus = 2;

// Each client is a descriptor: take the hard limit, not the usual 1024.
void RaiseOpenFileLimit() {
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    setrlimit(RLIMIT_NOFILE, &files);
  }
}

// The config's tenants with their tokens read from the environment, or the
// message naming the one whose variable is unset.
// `command` names the subcommand in the message ("skillrunner serve", "skillrunner mcp").
bool LoadTree(ReloadingHost& host, const char* command) {
  auto loaded = host.LoadInitial();
  if (loaded) return true;
  for (const auto& d : loaded.error().problems) std::fprintf(stderr, "%s\n", d.ToString().c_str());
  std::fprintf(stderr, "%s: %s\n", command, loaded.error().message.c_str());
  return false;
}

// The io threads of `serve --threads N`: an io_context each, so that a
// connection, its invocations and their HTTP requests stay on one thread (one
// io_context run by N threads hopped between them and doubled the CPU of an
// invocation over HTTP at two threads). The first is the main one (listeners,
// signals, metrics, reloads, and its share of connections); the others are
// kept running until the server has stopped.
class IoThreads {
 public:
  explicit IoThreads(unsigned threads) {
    for (unsigned i = 1; i < threads; ++i) {
      contexts_.push_back(std::make_unique<asio::io_context>(1));
      guards_.emplace_back(contexts_.back()->get_executor());
    }
  }
  std::vector<asio::io_context*> Workers(asio::io_context& main) const {
    std::vector<asio::io_context*> workers{&main};
    for (const auto& context : contexts_) workers.push_back(context.get());
    return workers;
  }
  // Lets the other io_contexts end once their work is done (any thread).
  void Release() {
    std::lock_guard lock(mutex_);
    guards_.clear();
  }
  // Runs them all, `main` on this thread; returns when every one has ended.
  void Run(asio::io_context& main) {
    std::vector<std::thread> threads;
    for (auto& context : contexts_) threads.emplace_back([io = context.get()] { io->run(); });
    main.run();
    Release();
    for (auto& thread : threads) thread.join();
  }

 private:
  std::vector<std::unique_ptr<asio::io_context>> contexts_;
  std::mutex mutex_;
  std::vector<asio::executor_work_guard<asio::io_context::executor_type>> guards_;
};

// "SOCKET, ADDRESS (port N), ...": where serve listens.
std::string Listeners(const server::ServerOptions& options, const std::vector<unsigned short>& ports) {
  std::string where = options.socket_path;
  for (std::size_t i = 0; i < options.listen.size(); ++i) {
    if (!where.empty()) where += ", ";
    where += options.listen[i] + " (port " + std::to_string(ports[i]) + ")";
  }
  return where;
}

// The process's online review judges on `thread` while this lives (it goes before the thread does).
struct JudgingInUse {
  explicit JudgingInUse(std::shared_ptr<JudgingThread> thread) { OnlineReviews::JudgeOn(std::move(thread)); }
  ~JudgingInUse() { OnlineReviews::JudgeOn(nullptr); }
  JudgingInUse(const JudgingInUse&) = delete;
  JudgingInUse& operator=(const JudgingInUse&) = delete;
};

// The online review's judged samples go to `recorder` while this lives (none without one).
struct SamplesRecorded {
  explicit SamplesRecorded(const std::shared_ptr<RolloutRecorder>& recorder) {
    if (recorder) OnlineReviews::RecordTo([recorder](const JudgedSample& sample) { recorder->Sample(sample); });
  }
  ~SamplesRecorded() { OnlineReviews::RecordTo(nullptr); }
  SamplesRecorded(const SamplesRecorded&) = delete;
  SamplesRecorded& operator=(const SamplesRecorded&) = delete;
};

// Rollout state kept (design.md §11.2): with Redis, exchanged with the other replicas twice a
// second; else, once a second, counts saved to the state dir and operators' commands applied. Ends when
// `timer` is cancelled.
// The loop below and how to end it: on the main io_context, `stopped` set and the timer cancelled.
struct RolloutKeeper {
  explicit RolloutKeeper(asio::io_context& io) : timer(io) {}
  asio::steady_timer timer;
  bool stopped = false;
};

// After its last exchange it closes Redis (`state`), whose connection alone would keep serve from
// ever ending.
asio::awaitable<void> KeepRollouts(rollout::RolloutBook& book, std::shared_ptr<rollout::SharedRollouts> shared,
                                   std::shared_ptr<state::SharedState> state, RolloutKeeper& keeper,
                                   std::shared_ptr<RolloutRecorder> recorder, ReloadingHost& host) {
  while (!keeper.stopped) {
    // Shared, twice a second: a decision reaches every replica within a second of it.
    keeper.timer.expires_after(shared ? std::chrono::milliseconds(500) : std::chrono::milliseconds(1000));
    co_await keeper.timer.async_wait(asio::as_tuple(asio::use_awaitable));
    if (shared) {
      co_await shared->Exchange();
    } else {
      book.Sync();
      book.Flush();
    }
    if (recorder) recorder->Snapshot(*host.Current()->registry(), book, false);
  }
  if (recorder) recorder->Snapshot(*host.Current()->registry(), book, true);  // where serve left them
  if (state) state->Stop();
}

// This process among the replicas: host name and pid.
std::string ReplicaName() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return std::string(host) + ":" + std::to_string(getpid());
}

// Each decision traced when spans are exported; with Redis, the rollouts shared by the replicas
// (null without).
std::shared_ptr<rollout::SharedRollouts> ShareRollouts(ReloadingHost& host,
                                                       const std::shared_ptr<rollout::RolloutBook>& rollouts,
                                                       std::shared_ptr<RolloutRecorder> recorder) {
  auto sink = host.tracing();
  if (sink || recorder) {
    rollouts->set_observer([sink, recorder, &host](const rollout::RolloutEvent& event) {
      if (sink && sink->HasRoom(1)) sink->Export({DecisionSpan(event)});
      if (recorder) recorder->Decision(event, *host.Current()->registry());
    });
  }
  if (!host.shared_state()) return nullptr;
  rollouts->SetShared();
  return std::make_shared<rollout::SharedRollouts>(host.shared_state(), rollouts, ReplicaName());
}

// What an MCP session runs with: the tree in service, the server's bounds and metrics, the tenants' quotas.
mcp::SessionOptions McpSessionOptions(server::Server& server, ReloadingHost& host, const ServeOptions& options) {
  mcp::SessionOptions session;
  session.host = &host;
  session.caller.quotas = options.server.quotas;
  session.metrics = &server.metrics();
  session.max_in_flight = options.server.limits.max_in_flight_per_connection;
  session.max_in_flight_total = options.server.limits.max_in_flight_total;
  session.server_version = SKILLRUNNER_VERSION;
  return session;
}

// `--mcp-listen` and `skillrunner mcp`'s stdio: front doors of the server. "" when all opened, else why not.
std::string AddMcpDoors(server::Server& server, ReloadingHost& host, const ServeOptions& options,
                        std::vector<asio::io_context*> workers, std::string& where) {
  if (options.mcp_stdio) {
    server.AddFrontDoor(std::make_shared<mcp::StdioDoor>(
        *workers.front(), McpSessionOptions(server, host, options), [&server] { server.Shutdown(); }, 0, 1,
        options.server.limits.max_line_bytes, options.server.limits.max_depth));
    where += where.empty() ? "MCP on stdin/stdout" : ", MCP on stdin/stdout";
  }
  if (!options.mcp_listen.empty()) {
    mcp::HttpOptions http;
    http.session = McpSessionOptions(server, host, options);
    http.identity = options.server.identity;
    http.allow_remote = options.server.allow_remote;
    http.max_body_bytes = options.server.limits.max_line_bytes;
    http.max_depth = options.server.limits.max_depth;
    http.idle_timeout = options.server.limits.idle_timeout;
    auto tls = server.LoadTls();
    if (!tls) return tls.error().message;
    http.tls = *tls;
    auto door = mcp::HttpDoor::Listen(std::move(workers), options.mcp_listen, std::move(http));
    if (!door) return door.error().message;
    const std::string host = options.mcp_listen.substr(0, options.mcp_listen.rfind(':'));
    where += (where.empty() ? "" : ", ") + std::string(*tls ? "MCP at https://" : "MCP at http://") + host + ":" +
             std::to_string((*door)->port()) + "/mcp";
    server.AddFrontDoor(std::move(*door));
  }
  return "";
}

// The environment's token and the command line's timeouts, into the server's options.
void ApplyServeOptions(ServeOptions& options) {
  if (const char* token = std::getenv("SKILLRUNNER_TOKEN")) options.server.identity.admin_token = token;
  options.server.mcp_listen = options.mcp_listen;
  if (options.idle_timeout_ms > 0)
    options.server.limits.idle_timeout = std::chrono::milliseconds(options.idle_timeout_ms);
  if (options.drain_timeout_ms > 0)
    options.server.limits.drain_timeout = std::chrono::milliseconds(options.drain_timeout_ms);
}

}  // namespace

// Where serve listens, on stderr (what scripts wait for) and in the log.
void SayWhere(const ServeOptions& options, const server::Server& server, const std::string& mcp_where,
              std::size_t skills) {
  std::string where = Listeners(options.server, server.tcp_ports());
  if (!mcp_where.empty()) where += (where.empty() ? "" : ", ") + mcp_where;
  spdlog::info("serving {} skill(s) on {}", skills, where);
  std::fprintf(stderr, "skillrunner: listening on %s\n", where.c_str());
}

// When the server has stopped: the io threads, the judge and the rollout keeper stop too.
void StopWithServer(server::Server& server, IoThreads& io_threads, asio::io_context& io, RolloutKeeper& keeper,
                    const std::shared_ptr<JudgingThread>& judging) {
  server.OnStopped([&io_threads, &io, &keeper, judging] {
    io_threads.Release();
    judging->Stop();
    asio::post(io, [&keeper] {
      keeper.stopped = true;
      keeper.timer.cancel();
    });
  });
}

int Serve(const CommonOptions& common, ServeOptions options) {
  ApplyServeOptions(options);
  RaiseOpenFileLimit();
  const unsigned threads = options.threads ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  asio::io_context io(threads == 1 ? 1 : BOOST_ASIO_CONCURRENCY_HINT_DEFAULT);
  IoThreads io_threads(threads);  // before the host: its pooled connections live on them
  // Online review judges here, at idle priority (design.md §11.2), also before the host.
  auto judging = std::make_shared<JudgingThread>();
  JudgingInUse judging_in_use(judging);
  auto rollouts = std::make_shared<rollout::RolloutBook>(rollout::MakeDirStore(StateDir(common, ProcessEnv)));
  ReloadingHost host(common, io.get_executor(), options.allow_broken, rollouts);
  const char* command = options.mcp_stdio ? "skillrunner mcp" : "skillrunner serve";
  if (!LoadTree(host, command)) return kUsageStatus;
  const Config& config = host.Current()->registry()->config();
  auto tenants = TenantTokens(config);
  if (!tenants) {
    std::fprintf(stderr, "skillrunner serve: %s\n", tenants.error().message.c_str());
    return kUsageStatus;
  }
  std::map<std::string, state::Quota, std::less<>> quotas;
  for (const auto& [name, tenant] : config.tenants) quotas.emplace(name, tenant.quota);
  state::TenantQuotas tenant_quotas(std::move(quotas), host.shared_state(), RealClock());
  options.server.identity.tenants = std::move(*tenants);
  options.server.identity.admin_subjects = config.tls_admin_subjects;
  if (!options.server.identity.tenants.empty()) options.server.quotas = &tenant_quotas;
  options.server.shared_state = host.shared_state();
  options.server.tracing = host.tracing();
  server::Server server(io, options.server, host, io_threads.Workers(io));
  std::string mcp_where;
  if (auto failed = AddMcpDoors(server, host, options, io_threads.Workers(io), mcp_where); !failed.empty()) {
    std::fprintf(stderr, "%s: %s\n", command, failed.c_str());
    return kUsageStatus;
  }
  // design.md §11.3: with `history:` in the config, the rollouts are recorded there too.
  auto recorder = RolloutRecorder::Start(config.history, ReplicaName());
  SamplesRecorded samples_recorded(recorder);
  auto shared_rollouts = ShareRollouts(host, rollouts, recorder);
  RolloutKeeper keeper(io);
  asio::co_spawn(io, KeepRollouts(*rollouts, shared_rollouts, host.shared_state(), keeper, recorder, host),
                 asio::detached);
  StopWithServer(server, io_threads, io, keeper, judging);
  server.HandleSignals();  // before the socket listens: a SIGHUP right after must reload, not kill
  if (auto started = server.Start(); !started) {
    std::fprintf(stderr, "%s: %s\n", command, started.error().message.c_str());
    return kUsageStatus;
  }
  SayWhere(options, server, mcp_where, host.Current()->registry()->skills().size());

  io_threads.Run(io);
  judging->Join();
  // `options` (a parameter) outlives `io`: its hold on Redis's connection, whose timers belong to
  // `io`, goes first.
  options.server.shared_state.reset();
  if (host.tracing()) host.tracing()->Shutdown();  // the last spans go out before the process does
  return 0;
}

// A positive whole-number limit.
template <class T>
static void AddPositive(CLI::App* cmd, const std::string& name, T& field, const std::string& help) {
  cmd->add_option(name, field, help)->check(CLI::PositiveNumber);
}

// The limits a server holds each connection and request to.
static void AddServeLimits(CLI::App* serve_cmd, ServeOptions* serve) {
  auto& limits = serve->server.limits;
  AddPositive(serve_cmd, "--max-line-bytes", limits.max_line_bytes, "Longest request line (default 1 MiB)");
  AddPositive(serve_cmd, "--max-depth", limits.max_depth, "Deepest JSON nesting of a request (default 64)");
  AddPositive(serve_cmd, "--max-in-flight-per-connection", limits.max_in_flight_per_connection, "default 1024");
  AddPositive(serve_cmd, "--max-in-flight", limits.max_in_flight_total,
              "Invocations in flight in all (default 16384); beyond: -32000 overloaded");
  AddPositive(serve_cmd, "--max-connections", limits.max_connections, "Open connections at once (default 4096)");
  AddPositive(serve_cmd, "--max-batch", limits.max_batch, "Requests in one batch (default 1000)");
  serve_cmd
      ->add_option("--idle-timeout-ms", serve->idle_timeout_ms,
                   "Close idle connections, and ones whose answers go unread, after this (default 300000)")
      ->check(CLI::Range(1, 86400000));
  AddPositive(serve_cmd, "--max-write-queue-bytes", limits.max_write_queue_bytes,
              "Unread answers a client may leave queued (default 16 MiB)");
  serve_cmd
      ->add_option("--drain-timeout-ms", serve->drain_timeout_ms,
                   "On SIGTERM, wait this long for in-flight invocations (default 30000)")
      ->check(CLI::Range(1, 86400000));
}

void AddServeCommands(CLI::App& app, const CommonOptions& common, std::function<int()>& run) {
  auto serve = std::make_shared<ServeOptions>();
  auto* serve_cmd =
      app.add_subcommand("serve", "Serve skills over newline-delimited JSON-RPC 2.0 on a Unix socket and/or TCP");
  auto& s = serve->server;
  serve_cmd->add_option("--socket", s.socket_path, "Unix socket path (created mode 0600)");
  serve_cmd->add_option("--socket-group", s.socket_group, "Group that may also connect (socket mode 0660)");
  serve_cmd->add_option("--listen", s.listen, "TCP HOST:PORT (loopback unless --allow-remote; repeatable)");
  serve_cmd->add_flag("--allow-remote", s.allow_remote,
                      "Allow non-loopback --listen addresses (SKILLRUNNER_TOKEN required)");
  serve_cmd->add_option("--metrics-listen", s.metrics_listen, "HOST:PORT for GET /metrics (Prometheus text)");
  auto* cert = serve_cmd->add_option("--tls-cert", s.tls.cert_file,
                                     "PEM certificate (then its chain): TLS on every TCP listener");
  auto* key = serve_cmd->add_option("--tls-key", s.tls.key_file, "PEM private key of --tls-cert");
  serve_cmd
      ->add_option("--tls-client-ca", s.tls.client_ca_file,
                   "PEM CAs that client certificates must chain to (mutual TLS; tenants by tls_subject)")
      ->needs(cert);
  serve_cmd
      ->add_option("--metrics-client-ca", s.metrics_client_ca,
                   "FILE|none: the metrics listener's own client CAs; none: /metrics, /healthz and /readyz ask no "
                   "client certificate (default: --tls-client-ca)")
      ->needs(cert);
  cert->needs(key);
  key->needs(cert);
  serve_cmd->add_option("--mcp-listen", serve->mcp_listen,
                        "HOST:PORT for MCP (Streamable HTTP at /mcp; loopback unless --allow-remote)");
  serve_cmd->add_option("--threads", serve->threads, "io threads (default: one per core)");
  AddServeLimits(serve_cmd, serve.get());
  serve_cmd->add_flag(
      "--allow-broken", serve->allow_broken,
      "Serve the skills that load when others do not (health: degraded); a broken config still exits 2");
  serve_cmd->callback([&run, &common, serve] { run = [&common, serve] { return Serve(common, *serve); }; });

  auto call = std::make_shared<CallOptions>();
  auto* call_cmd = app.add_subcommand("call", "Send one JSON-RPC request to a running server and print the answer");
  call_cmd->add_option("method", call->method, "e.g. skills.invoke, skills.list, health")->required();
  call_cmd->add_option("params", call->params, "params as JSON text");
  auto* socket = call_cmd->add_option("--socket", call->socket, "Unix socket of the server");
  auto* connect =
      call_cmd->add_option("--connect", call->connect, "TCP HOST:PORT of the server (token from SKILLRUNNER_TOKEN)");
  socket->excludes(connect);
  auto* tls = call_cmd->add_flag("--tls", call->tls, "Speak TLS to --connect (a server with --tls-cert)");
  tls->needs(connect);
  call_cmd
      ->add_option("--ca", call->ca_file, "PEM CAs to check the server's certificate against (default: the system's)")
      ->needs(tls);
  auto* client_cert =
      call_cmd->add_option("--cert", call->cert_file, "PEM client certificate (mutual TLS)")->needs(tls);
  auto* client_key = call_cmd->add_option("--key", call->key_file, "PEM private key of --cert")->needs(tls);
  client_cert->needs(client_key);
  client_key->needs(client_cert);
  call_cmd->add_option("--timeout-ms", call->timeout_ms, "Give up waiting after this (default: none)")
      ->check(CLI::PositiveNumber);
  call_cmd->callback([&run, call] { run = [call] { return Call(*call); }; });

  auto probe = std::make_shared<ProbeOptions>();
  auto* probe_cmd =
      app.add_subcommand("probe", "GET a URL (e.g. http://127.0.0.1:9464/readyz); exit 0 on a 2xx, else 1");
  probe_cmd->add_option("url", probe->url, "http://HOST:PORT/PATH (https:// with TLS)")->required();
  probe_cmd->add_option("--ca", probe->ca_file, "PEM CAs for an https:// URL, besides the system's");
  auto* probe_cert =
      probe_cmd->add_option("--cert", probe->cert_file, "PEM client certificate, for a listener that asks for one");
  auto* probe_key = probe_cmd->add_option("--key", probe->key_file, "PEM private key of --cert");
  probe_cert->needs(probe_key);
  probe_key->needs(probe_cert);
  probe_cmd->add_option("--timeout-ms", probe->timeout_ms, "Give up after this (default 5000)")
      ->check(CLI::PositiveNumber);
  probe_cmd->callback([&run, probe] { run = [probe] { return Probe(*probe); }; });
}

void AddMcpCommand(CLI::App& app, const CommonOptions& common, std::function<int()>& run) {
  auto mcp = std::make_shared<ServeOptions>();
  mcp->mcp_stdio = true;
  auto* cmd = app.add_subcommand(
      "mcp", "Serve the skills as MCP tools on stdin/stdout (an MCP host starts it); logs go to stderr");
  cmd->add_option("--threads", mcp->threads, "io threads (default: one per core)");
  AddPositive(cmd, "--max-in-flight", mcp->server.limits.max_in_flight_total,
              "Calls in flight at once (default 16384); beyond: OVERLOADED");
  cmd->add_option("--drain-timeout-ms", mcp->drain_timeout_ms,
                  "When the input ends, wait this long for calls in flight (default 30000)")
      ->check(CLI::Range(1, 86400000));
  cmd->add_flag("--allow-broken", mcp->allow_broken, "Serve the skills that load when others do not");
  cmd->callback([&run, &common, mcp] { run = [&common, mcp] { return Serve(common, *mcp); }; });
}

}  // namespace skillrunner::cli
