#include "services/telemetry/otlp_exporter.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/url/pct_string_view.hpp>
#include <charconv>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include "services/http/http_client.h"

namespace skillrunner::telemetry {
namespace asio = boost::asio;

struct OtlpExporter::Worker {
  explicit Worker(const OtlpExporterOptions& options) : options(options) {}

  void Start() {
    http::HttpClientOptions http_options;
    http_options.max_connections_per_host = 2;
    client = http::MakeHttpClient(io.get_executor(), http_options);
    asio::co_spawn(io, Loop(), asio::detached);
    thread = std::thread([this] { io.run(); });
  }

  void Push(std::vector<Span>& spans) {
    bool wake = false;
    {
      std::lock_guard lock(mutex);
      const std::size_t before = queue.size();
      for (Span& span : spans) {
        if (queue.size() >= options.max_queue_spans || stopping) {
          ++dropped;
          continue;
        }
        queue.push_back(std::move(span));
      }
      // Once per batch: when the queue reaches a whole one.
      wake = before < options.max_batch_spans && queue.size() >= options.max_batch_spans;
    }
    if (wake && !failing) asio::post(io, [this] { timer.cancel(); });
  }

  // Up to one batch from the queue; `stop` is whether Shutdown was called.
  std::vector<Span> Take(bool& stop) {
    std::lock_guard lock(mutex);
    stop = stopping;
    std::vector<Span> batch;
    while (!queue.empty() && batch.size() < options.max_batch_spans) {
      batch.push_back(std::move(queue.front()));
      queue.pop_front();
    }
    in_flight = batch.size();
    return batch;
  }

  std::size_t Queued() {
    std::lock_guard lock(mutex);
    return queue.size();
  }

  bool HasRoom(std::size_t count) {
    std::lock_guard lock(mutex);
    return !stopping && queue.size() + count <= options.max_queue_spans;
  }

  asio::awaitable<void> Loop() {
    for (;;) {
      bool stop = false;
      {
        std::lock_guard lock(mutex);
        stop = stopping;
      }
      // A full batch goes at once, unless the last export failed: then the
      // collector gets retry_delay to come back (a timer Shutdown cuts short).
      const bool backing_off = failing;
      if (!stop && (backing_off || Queued() < options.max_batch_spans)) {
        timer.expires_after(backing_off ? std::max(options.retry_delay, options.schedule_delay)
                                        : options.schedule_delay);
        co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
      }
      std::vector<Span> batch = Take(stop);
      if (batch.empty()) {
        if (stop) break;
        continue;
      }
      co_await Send(batch);
    }
    io.stop();
  }

  asio::awaitable<void> Send(const std::vector<Span>& batch) {
    http::HttpRequest request;
    request.url = options.endpoint;
    request.headers = options.headers;
    request.headers.emplace_back("content-type", "application/json");
    request.body = EncodeOtlpJson(options.resource, batch);
    request.timeout = options.export_timeout;
    auto response = co_await client->Send(std::move(request));
    std::string problem;
    if (!response) {
      problem = response.error().message;
    } else if (response->status < 200 || response->status >= 300) {
      problem = "HTTP " + std::to_string(response->status);
    }
    in_flight = 0;
    if (problem.empty()) {
      exported += batch.size();
      if (failing) spdlog::info("trace export to {} works again", options.endpoint);
      failing = false;
      co_return;
    }
    ++failed;
    dropped += batch.size();
    // Once per outage at warn, then quietly: a collector that is down must not flood the log.
    if (!failing) {
      spdlog::warn("trace export to {} failed ({}); {} spans dropped, and more will be until it answers",
                   options.endpoint, problem, batch.size());
    } else {
      spdlog::debug("trace export to {} failed ({}); {} spans dropped", options.endpoint, problem, batch.size());
    }
    failing = true;
  }

  // Stops taking spans, flushes what is queued, and ends the thread within
  // shutdown_timeout; whatever did not go out is counted as dropped.
  void Stop() {
    {
      std::lock_guard lock(mutex);
      if (stopping) return;
      stopping = true;
    }
    asio::post(io, [this] {
      timer.cancel();
      cutoff.expires_after(options.shutdown_timeout);
      cutoff.async_wait([this](boost::system::error_code ec) {
        if (!ec) io.stop();
      });
    });
    if (thread.joinable()) thread.join();
    std::lock_guard lock(mutex);
    dropped += queue.size() + in_flight;
    queue.clear();
    in_flight = 0;
  }

  const OtlpExporterOptions& options;
  asio::io_context io;
  asio::executor_work_guard<asio::io_context::executor_type> guard{io.get_executor()};
  asio::steady_timer timer{io};
  asio::steady_timer cutoff{io};
  std::shared_ptr<http::HttpClient> client;
  std::thread thread;
  std::mutex mutex;
  std::deque<Span> queue;
  std::size_t in_flight = 0;
  bool stopping = false;
  // The last export failed: the loop backs off, and Push wakes no one meanwhile.
  std::atomic<bool> failing{false};
  std::atomic<std::uint64_t> exported{0};
  std::atomic<std::uint64_t> dropped{0};
  std::atomic<std::uint64_t> failed{0};
};

OtlpExporter::OtlpExporter(OtlpExporterOptions options)
    : options_(std::move(options)), worker_(std::make_unique<Worker>(options_)) {
  worker_->Start();
}

OtlpExporter::~OtlpExporter() {
  Shutdown();
  worker_->client.reset();
}

void OtlpExporter::Export(std::vector<Span> spans) { worker_->Push(spans); }

bool OtlpExporter::HasRoom(std::size_t count) const { return worker_->HasRoom(count); }

void OtlpExporter::Drop(std::size_t count) { worker_->dropped += count; }

void OtlpExporter::Shutdown() { worker_->Stop(); }

ExporterStats OtlpExporter::Stats() const {
  ExporterStats stats;
  stats.exported_spans = worker_->exported;
  stats.dropped_spans = worker_->dropped;
  stats.failed_exports = worker_->failed;
  stats.queued_spans = worker_->Queued();
  return stats;
}

std::string TracesUrl(std::string base_endpoint) {
  while (!base_endpoint.empty() && base_endpoint.back() == '/') base_endpoint.pop_back();
  return base_endpoint + "/v1/traces";
}

namespace {

// A percent-encoded header key or value, decoded (Boost.URL); nullopt when
// the encoding is broken.
std::optional<std::string> PercentDecode(std::string_view text) {
  auto encoded = boost::urls::make_pct_string_view(text);
  if (!encoded) return std::nullopt;
  return encoded->decode();
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::optional<std::int64_t> Count(const std::string& text) {
  std::int64_t n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size() || n < 0) return std::nullopt;
  return n;
}

}  // namespace

Result<std::vector<std::pair<std::string, std::string>>> ParseOtlpHeaders(std::string_view text) {
  std::vector<std::pair<std::string, std::string>> out;
  std::size_t index = 0;
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    std::string_view pair = Trim(text.substr(0, comma));
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    ++index;
    if (pair.empty()) continue;
    const std::size_t eq = pair.find('=');
    if (eq == std::string_view::npos || Trim(pair.substr(0, eq)).empty()) {
      return Fail(ErrorCode::kConfigInvalid, "entry " + std::to_string(index) + " is not key=value");
    }
    auto key = PercentDecode(Trim(pair.substr(0, eq)));
    auto value = PercentDecode(Trim(pair.substr(eq + 1)));
    if (!key || !value) {
      return Fail(ErrorCode::kConfigInvalid, "entry " + std::to_string(index) + " has a broken %-escape");
    }
    out.emplace_back(std::move(*key), std::move(*value));
  }
  return out;
}

Result<void> ApplyOtelEnvironment(OtlpExporterOptions& options, const EnvLookup& env) {
  auto set = [&](std::string_view name) -> std::optional<std::string> {
    auto value = env(name);
    if (!value || value->empty()) return std::nullopt;
    return value;
  };
  if (options.endpoint.empty()) {
    if (auto full = set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")) {
      options.endpoint = *full;
    } else if (auto base = set("OTEL_EXPORTER_OTLP_ENDPOINT")) {
      options.endpoint = TracesUrl(*base);
    }
  }
  if (options.resource.service_name.empty()) {
    options.resource.service_name = set("OTEL_SERVICE_NAME").value_or("skillrunner");
  }
  if (auto headers = set("OTEL_EXPORTER_OTLP_HEADERS")) {
    auto parsed = ParseOtlpHeaders(*headers);
    if (!parsed) return Fail(std::move(parsed.error()), "OTEL_EXPORTER_OTLP_HEADERS");
    for (auto& header : *parsed) options.headers.push_back(std::move(header));
  }
  struct Number {
    const char* name;
    std::int64_t min;
    std::function<void(std::int64_t)> apply;
  };
  const Number numbers[] = {
      {"OTEL_BSP_MAX_QUEUE_SIZE", 1, [&](std::int64_t n) { options.max_queue_spans = static_cast<std::size_t>(n); }},
      {"OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 1,
       [&](std::int64_t n) { options.max_batch_spans = static_cast<std::size_t>(n); }},
      {"OTEL_BSP_SCHEDULE_DELAY", 0, [&](std::int64_t n) { options.schedule_delay = std::chrono::milliseconds(n); }},
      {"OTEL_EXPORTER_OTLP_TIMEOUT", 1, [&](std::int64_t n) { options.export_timeout = std::chrono::milliseconds(n); }},
  };
  for (const Number& number : numbers) {
    auto text = set(number.name);
    if (!text) continue;
    auto n = Count(*text);
    if (!n || *n < number.min) {
      return Fail(ErrorCode::kConfigInvalid,
                  std::string(number.name) + ": expected a whole number of at least " + std::to_string(number.min));
    }
    number.apply(*n);
  }
  if (options.max_batch_spans > options.max_queue_spans) options.max_batch_spans = options.max_queue_spans;
  return {};
}

}  // namespace skillrunner::telemetry
