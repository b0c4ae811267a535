#pragma once

// Counters of the socket server, for the `metrics` method and the Prometheus
// endpoint. Thread-safe: invocations finish on any io thread. Each thread
// records into a shard of its own (its own lock and cache lines), summed when
// the figures are read, so that io threads never wait on each other here.

#include <array>
#include <atomic>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>

#include "services/common/invocation.h"
#include "services/telemetry/otlp_exporter.h"

namespace skillrunner::state {
class SharedState;
class TenantQuotas;
}  // namespace skillrunner::state

namespace skillrunner::server {

class ServerMetrics {
 public:
  // Upper bounds (seconds) of the latency histogram's buckets; +Inf is implied.
  static constexpr std::array<double, 13> kBuckets = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};

  // One finished invocation: `outcome` is "ok", "review_failed" (a gated answer whose review
  // failed) or the error code; `review`, a gated invocation's final review, counts each of its
  // criteria's verdicts.
  void RecordInvocation(std::string_view skill, std::string_view outcome, const Metrics& metrics, double seconds,
                        const boost::json::value* review = nullptr);
  // A reload of the tree, and when the tree in service was loaded (Unix seconds; the start's
  // load too, with `counted` false).
  void RecordReload(bool ok, double loaded_at, bool counted = true);
  // A reload of the TLS certificate and key (SIGHUP, or a file that changed) that loaded or was refused.
  void RecordTlsReload(bool ok) {
    (ok ? tls_reloads_ok_ : tls_reloads_failed_).fetch_add(1, std::memory_order_relaxed);
  }
  void RecordRequest(std::string_view method);
  // A request refused before it ran: "overloaded", "unauthorized", "draining", ...
  void RecordRejected(std::string_view reason);

  void AddInFlight(std::int64_t delta) { in_flight_.fetch_add(delta, std::memory_order_relaxed); }
  void AddConnections(std::int64_t delta) { connections_.fetch_add(delta, std::memory_order_relaxed); }
  std::int64_t in_flight() const { return in_flight_.load(std::memory_order_relaxed); }
  std::int64_t connections() const { return connections_.load(std::memory_order_relaxed); }
  // The median duration in milliseconds of the last invocations (up to
  // kRecent per shard), or nullopt before the first has finished.
  std::optional<std::int64_t> RecentMedianMs() const;

  // Tenants' usage and the shared state's health join the figures; both may
  // be null and must outlive the metrics. Call before serving.
  void Attach(const state::TenantQuotas* quotas, std::shared_ptr<const state::SharedState> shared,
              std::shared_ptr<const telemetry::OtlpExporter> tracing = nullptr);

  // More Prometheus lines, rendered at each scrape (the rollouts of the tree in service). Call
  // before serving.
  void AttachRollouts(std::function<std::string()> render) { rollouts_ = std::move(render); }
  // The same for what the server is serving: the tree's failed files, the certificate's expiry.
  void AttachServing(std::function<std::string()> render) { serving_ = std::move(render); }

  // Prometheus text exposition format 0.0.4.
  std::string Prometheus() const;
  // The same figures as JSON for the `metrics` method.
  boost::json::object ToJson() const;

 private:
  struct SkillFigures {
    std::map<std::string, std::uint64_t, std::less<>> outcomes;
    std::map<std::pair<std::string, std::string>, std::uint64_t> reviews;  // (criterion, verdict)
    // REFUSED and CONTENT_FILTERED answers by (model, provider, reason: refused | content_filtered).
    std::map<std::tuple<std::string, std::string, std::string>, std::uint64_t> refusals;
    // Models whose strict mode was given up (design.md §11.5), by (model, provider).
    std::map<std::pair<std::string, std::string>, std::uint64_t> native_downgrades;
    std::uint64_t attempts = 0;
    std::uint64_t transient_retries = 0;
    std::uint64_t validation_retries = 0;
    std::uint64_t fallbacks = 0;
    std::uint64_t escalations = 0;
    std::map<std::string, double, std::less<>> cost_by_model;  // USD
    std::uint64_t input_tokens = 0;
    std::uint64_t output_tokens = 0;
    std::array<std::uint64_t, kBuckets.size() + 1> buckets{};  // cumulative at render time
    double seconds_sum = 0;
    std::uint64_t count = 0;
  };

  struct Figures {
    std::map<std::string, SkillFigures, std::less<>> skills;
    std::map<std::string, std::uint64_t, std::less<>> requests;
    std::map<std::string, std::uint64_t, std::less<>> rejected;
    void Add(const Figures& other);
  };
  static constexpr std::size_t kShards = 8;
  static constexpr std::size_t kRecent = 16;
  struct alignas(64) Shard {
    mutable std::mutex mutex;
    Figures figures;
    std::array<std::int64_t, kRecent> recent_ms{};  // a ring of the last durations
    std::uint64_t recorded = 0;
  };

  // Tenants' usage and the shared state's health, for Prometheus().
  template <typename Header>
  void AppendTenantsAndState(std::string& out, const Header& header) const;
  // skillrunner_cost_usd_total{skill,model} lines.
  static void AppendCosts(std::string& out, const Figures& all);
  // The invocation latency histogram, per skill.
  static void AppendLatency(std::string& out, const Figures& all);
  // skillrunner_refusals_total{skill,model,provider,reason} lines.
  static void AppendRefusals(std::string& out, const Figures& all);
  // skillrunner_native_downgrades_total{model,provider} lines.
  static void AppendNativeDowngrades(std::string& out, const Figures& all);
  // skillrunner_reviews_total, skillrunner_refusals_total, skillrunner_reloads_total and the tree's load time.
  template <typename Header>
  void AppendReviewsAndReloads(std::string& out, const Figures& all, const Header& header) const;
  Shard& ThisThreadsShard();
  Figures Sum() const;

  std::array<Shard, kShards> shards_;
  alignas(64) std::atomic<std::int64_t> in_flight_{0};
  alignas(64) std::atomic<std::int64_t> connections_{0};
  std::atomic<std::uint64_t> reloads_ok_{0};
  std::atomic<std::uint64_t> reloads_failed_{0};
  std::atomic<std::uint64_t> tls_reloads_ok_{0};
  std::atomic<std::uint64_t> tls_reloads_failed_{0};
  std::atomic<double> tree_loaded_at_{0};
  const state::TenantQuotas* quotas_ = nullptr;
  std::shared_ptr<const state::SharedState> shared_;
  std::shared_ptr<const telemetry::OtlpExporter> tracing_;
  std::function<std::string()> rollouts_;
  std::function<std::string()> serving_;
};

// The shared state as `health` shows it: "local" (no state.redis), "shared"
// (Redis answers) or "degraded" (each limit is this process's share).
std::string_view StateStatus(const state::SharedState* shared);
// health's "tracing": the exporter's endpoint and counts; null without one.
boost::json::value TracingJson(const telemetry::OtlpExporter* tracing);

}  // namespace skillrunner::server
