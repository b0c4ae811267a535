#include "runner/server/server_metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "services/common/text.h"
#include "services/state/shared_state.h"
#include "services/state/tenant_quota.h"

namespace skillrunner::server {
namespace json = boost::json;

namespace {

template <class Map>
std::uint64_t& Slot(Map& map, std::string_view key) {
  auto it = map.find(key);
  if (it == map.end()) it = map.emplace(std::string(key), typename Map::mapped_type{}).first;
  return it->second;
}

}  // namespace

ServerMetrics::Shard& ServerMetrics::ThisThreadsShard() {
  static std::atomic<std::size_t> threads{0};
  thread_local const std::size_t index = threads.fetch_add(1, std::memory_order_relaxed) % kShards;
  return shards_[index];
}

void ServerMetrics::Figures::Add(const Figures& other) {
  for (const auto& [name, f] : other.skills) {
    SkillFigures& sum = skills[name];
    for (const auto& [outcome, n] : f.outcomes) sum.outcomes[outcome] += n;
    for (const auto& [key, n] : f.reviews) sum.reviews[key] += n;
    for (const auto& [key, n] : f.refusals) sum.refusals[key] += n;
    for (const auto& [key, n] : f.native_downgrades) sum.native_downgrades[key] += n;
    sum.attempts += f.attempts;
    sum.transient_retries += f.transient_retries;
    sum.validation_retries += f.validation_retries;
    sum.fallbacks += f.fallbacks;
    sum.escalations += f.escalations;
    for (const auto& [model, cost] : f.cost_by_model) sum.cost_by_model[model] += cost;
    sum.input_tokens += f.input_tokens;
    sum.output_tokens += f.output_tokens;
    for (std::size_t i = 0; i < f.buckets.size(); ++i) sum.buckets[i] += f.buckets[i];
    sum.seconds_sum += f.seconds_sum;
    sum.count += f.count;
  }
  for (const auto& [method, n] : other.requests) requests[method] += n;
  for (const auto& [reason, n] : other.rejected) rejected[reason] += n;
}

ServerMetrics::Figures ServerMetrics::Sum() const {
  Figures all;
  for (const Shard& shard : shards_) {
    std::lock_guard lock(shard.mutex);
    all.Add(shard.figures);
  }
  return all;
}

namespace {

// Each criterion's verdict of a review ({criteria_results: [{criterion_id, verdict}]}).
void CountVerdicts(const json::value& review, std::map<std::pair<std::string, std::string>, std::uint64_t>& into) {
  const auto* results = review.is_object() ? review.as_object().if_contains("criteria_results") : nullptr;
  if (results == nullptr || !results->is_array()) return;
  for (const auto& result : results->as_array()) {
    const auto* fields = result.if_object();
    if (fields == nullptr) continue;
    const auto* id = fields->if_contains("criterion_id");
    const auto* verdict = fields->if_contains("verdict");
    if (id == nullptr || verdict == nullptr || !id->is_string() || !verdict->is_string()) continue;
    ++into[{std::string(id->get_string()), std::string(verdict->get_string())}];
  }
}

}  // namespace

void ServerMetrics::RecordReload(bool ok, double loaded_at, bool counted) {
  if (counted) (ok ? reloads_ok_ : reloads_failed_).fetch_add(1, std::memory_order_relaxed);
  if (ok) tree_loaded_at_.store(loaded_at, std::memory_order_relaxed);
}

void ServerMetrics::RecordInvocation(std::string_view skill, std::string_view outcome, const Metrics& metrics,
                                     double seconds, const json::value* review) {
  Shard& shard = ThisThreadsShard();
  std::lock_guard lock(shard.mutex);
  auto& skills = shard.figures.skills;
  auto it = skills.find(skill);
  if (it == skills.end()) it = skills.emplace(std::string(skill), SkillFigures{}).first;
  SkillFigures& figures = it->second;
  ++Slot(figures.outcomes, outcome);
  if (review != nullptr) CountVerdicts(*review, figures.reviews);
  if (outcome == "REFUSED" || outcome == "CONTENT_FILTERED") {
    ++figures.refusals[{metrics.model, metrics.provider, outcome == "REFUSED" ? "refused" : "content_filtered"}];
  }
  if (!metrics.native_downgraded.empty()) ++figures.native_downgrades[{metrics.native_downgraded, metrics.provider}];
  figures.attempts += static_cast<std::uint64_t>(metrics.attempts);
  figures.transient_retries += static_cast<std::uint64_t>(metrics.transient_retries);
  figures.validation_retries += static_cast<std::uint64_t>(metrics.validation_retries);
  figures.fallbacks += static_cast<std::uint64_t>(metrics.fallbacks);
  figures.escalations += metrics.escalated ? 1 : 0;
  for (const auto& [model, cost] : metrics.cost_by_model) figures.cost_by_model[model] += cost;
  figures.input_tokens += static_cast<std::uint64_t>(metrics.input_tokens);
  figures.output_tokens += static_cast<std::uint64_t>(metrics.output_tokens);
  std::size_t bucket = 0;
  while (bucket < kBuckets.size() && seconds > kBuckets[bucket]) ++bucket;
  ++figures.buckets[bucket];
  figures.seconds_sum += seconds;
  ++figures.count;
  shard.recent_ms[shard.recorded++ % kRecent] = static_cast<std::int64_t>(seconds * 1000);
}

std::optional<std::int64_t> ServerMetrics::RecentMedianMs() const {
  std::vector<std::int64_t> all;
  for (const Shard& shard : shards_) {
    std::lock_guard lock(shard.mutex);
    const std::size_t n = std::min<std::uint64_t>(shard.recorded, kRecent);
    all.insert(all.end(), shard.recent_ms.begin(), shard.recent_ms.begin() + static_cast<std::ptrdiff_t>(n));
  }
  if (all.empty()) return std::nullopt;
  auto middle = all.begin() + static_cast<std::ptrdiff_t>(all.size() / 2);
  std::nth_element(all.begin(), middle, all.end());
  return *middle;
}

void ServerMetrics::RecordRequest(std::string_view method) {
  Shard& shard = ThisThreadsShard();
  std::lock_guard lock(shard.mutex);
  ++Slot(shard.figures.requests, method);
}

void ServerMetrics::RecordRejected(std::string_view reason) {
  Shard& shard = ThisThreadsShard();
  std::lock_guard lock(shard.mutex);
  ++Slot(shard.figures.rejected, reason);
}

void ServerMetrics::Attach(const state::TenantQuotas* quotas, std::shared_ptr<const state::SharedState> shared,
                           std::shared_ptr<const telemetry::OtlpExporter> tracing) {
  quotas_ = quotas;
  shared_ = std::move(shared);
  tracing_ = std::move(tracing);
}

boost::json::value TracingJson(const telemetry::OtlpExporter* tracing) {
  if (tracing == nullptr) return nullptr;
  const telemetry::ExporterStats stats = tracing->Stats();
  return boost::json::object{{"endpoint", tracing->options().endpoint},
                             {"exported_spans", stats.exported_spans},
                             {"dropped_spans", stats.dropped_spans},
                             {"failed_exports", stats.failed_exports},
                             {"queued_spans", stats.queued_spans}};
}

std::string_view StateStatus(const state::SharedState* shared) {
  if (shared == nullptr) return "local";
  return shared->healthy() ? "shared" : "degraded";
}

template <typename Header>
void ServerMetrics::AppendTenantsAndState(std::string& out, const Header& header) const {
  if (quotas_ != nullptr) {
    auto usage = quotas_->usage();
    header("skillrunner_tenant_invocations_total", "counter", "Invocations of each tenant admitted by this process.");
    for (const auto& [tenant, u] : usage) {
      out += fmt::format("skillrunner_tenant_invocations_total{{tenant=\"{}\"}} {}\n", PrometheusLabel(tenant),
                         u.requests);
    }
    header("skillrunner_tenant_overloaded_total", "counter", "Invocations of each tenant refused over its quota.");
    for (const auto& [tenant, u] : usage) {
      out += fmt::format("skillrunner_tenant_overloaded_total{{tenant=\"{}\"}} {}\n", PrometheusLabel(tenant),
                         u.overloaded);
    }
    header("skillrunner_tenant_in_flight", "gauge", "Invocations of each tenant running in this process.");
    for (const auto& [tenant, u] : usage) {
      out += fmt::format("skillrunner_tenant_in_flight{{tenant=\"{}\"}} {}\n", PrometheusLabel(tenant), u.in_flight);
    }
  }
  if (shared_) {
    header("skillrunner_state_degraded", "gauge",
           "1 while Redis (state.redis) is unreachable or slow and each limit is this process's share.");
    out += fmt::format("skillrunner_state_degraded {}\n", shared_->healthy() ? 0 : 1);
    header("skillrunner_state_degradations_total", "counter", "Times sharing through Redis was lost.");
    out += fmt::format("skillrunner_state_degradations_total {}\n", shared_->degradations());
  }
  if (tracing_) {
    const telemetry::ExporterStats stats = tracing_->Stats();
    header("skillrunner_trace_spans_exported_total", "counter", "Spans the OTLP collector accepted.");
    out += fmt::format("skillrunner_trace_spans_exported_total {}\n", stats.exported_spans);
    header("skillrunner_trace_spans_dropped_total", "counter",
           "Spans never delivered: the export queue was full, or the collector did not take them.");
    out += fmt::format("skillrunner_trace_spans_dropped_total {}\n", stats.dropped_spans);
  }
}

namespace {

boost::json::object CostJson(const std::map<std::string, double, std::less<>>& by_model) {
  boost::json::object out;
  for (const auto& [model, cost] : by_model) out[model] = cost;
  return out;
}

}  // namespace

void ServerMetrics::AppendCosts(std::string& out, const Figures& all) {
  for (const auto& [skill, f] : all.skills) {
    for (const auto& [model, cost] : f.cost_by_model) {
      out += fmt::format("skillrunner_cost_usd_total{{skill=\"{}\",model=\"{}\"}} {}\n", PrometheusLabel(skill),
                         PrometheusLabel(model), cost);
    }
  }
}

std::string ServerMetrics::Prometheus() const {
  const Figures all = Sum();
  std::string out;
  auto header = [&out](std::string_view name, std::string_view type, std::string_view help) {
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  };
  header("skillrunner_invocations_total", "counter",
         "Finished invocations by skill and outcome (ok, review_failed or the error code).");
  for (const auto& [skill, f] : all.skills) {
    for (const auto& [outcome, n] : f.outcomes) {
      out += fmt::format("skillrunner_invocations_total{{skill=\"{}\",outcome=\"{}\"}} {}\n", PrometheusLabel(skill),
                         PrometheusLabel(outcome), n);
    }
  }
  auto per_skill = [&](std::string_view name, std::string_view help, auto field) {
    header(name, "counter", help);
    for (const auto& [skill, f] : all.skills) {
      out += fmt::format("{}{{skill=\"{}\"}} {}\n", name, PrometheusLabel(skill), f.*field);
    }
  };
  per_skill("skillrunner_attempts_total", "Provider or handler attempts, every retry included.",
            &SkillFigures::attempts);
  per_skill("skillrunner_transient_retries_total", "Retries after transient provider errors (429, 5xx, timeouts).",
            &SkillFigures::transient_retries);
  per_skill("skillrunner_validation_retries_total", "Retries after unparseable or invalid output.",
            &SkillFigures::validation_retries);
  per_skill("skillrunner_fallbacks_total", "Models given up on for their next fallback (transient budget spent).",
            &SkillFigures::fallbacks);
  per_skill("skillrunner_escalations_total", "Invocations that ran one more generation on the escalate_to model.",
            &SkillFigures::escalations);
  header("skillrunner_cost_usd_total", "counter", "What the attempts cost at the models' prices (priced models only).");
  AppendCosts(out, all);
  header("skillrunner_tokens_total", "counter", "Tokens of every attempt, by direction.");
  for (const auto& [skill, f] : all.skills) {
    out += fmt::format("skillrunner_tokens_total{{skill=\"{}\",direction=\"input\"}} {}\n", PrometheusLabel(skill),
                       f.input_tokens);
    out += fmt::format("skillrunner_tokens_total{{skill=\"{}\",direction=\"output\"}} {}\n", PrometheusLabel(skill),
                       f.output_tokens);
  }
  header("skillrunner_invocation_duration_seconds", "histogram", "Invocation latency.");
  AppendLatency(out, all);
  header("skillrunner_requests_total", "counter", "JSON-RPC requests by method.");
  for (const auto& [method, n] : all.requests) {
    out += fmt::format("skillrunner_requests_total{{method=\"{}\"}} {}\n", PrometheusLabel(method), n);
  }
  header("skillrunner_rejected_total", "counter", "Requests refused before running, by reason.");
  for (const auto& [reason, n] : all.rejected) {
    out += fmt::format("skillrunner_rejected_total{{reason=\"{}\"}} {}\n", PrometheusLabel(reason), n);
  }
  header("skillrunner_in_flight", "gauge", "Invocations accepted and not yet answered.");
  out += fmt::format("skillrunner_in_flight {}\n", in_flight());
  header("skillrunner_connections", "gauge", "Open client connections.");
  out += fmt::format("skillrunner_connections {}\n", connections());
  AppendReviewsAndReloads(out, all, header);
  AppendTenantsAndState(out, header);
  if (rollouts_) out += rollouts_();
  if (serving_) out += serving_();
  return out;
}

void ServerMetrics::AppendNativeDowngrades(std::string& out, const Figures& all) {
  std::map<std::pair<std::string, std::string>, std::uint64_t> models;
  for (const auto& [skill, f] : all.skills) {
    for (const auto& [key, n] : f.native_downgrades) models[key] += n;
  }
  for (const auto& [key, n] : models) {
    out += fmt::format("skillrunner_native_downgrades_total{{model=\"{}\",provider=\"{}\"}} {}\n",
                       PrometheusLabel(key.first), PrometheusLabel(key.second), n);
  }
}

void ServerMetrics::AppendRefusals(std::string& out, const Figures& all) {
  for (const auto& [skill, f] : all.skills) {
    for (const auto& [key, n] : f.refusals) {
      const auto& [model, provider, reason] = key;
      out += fmt::format("skillrunner_refusals_total{{skill=\"{}\",model=\"{}\",provider=\"{}\",reason=\"{}\"}} {}\n",
                         PrometheusLabel(skill), PrometheusLabel(model), PrometheusLabel(provider), reason, n);
    }
  }
}

template <typename Header>
void ServerMetrics::AppendReviewsAndReloads(std::string& out, const Figures& all, const Header& header) const {
  header("skillrunner_reviews_total", "counter",
         "Verdicts of the final review of gated invocations, by skill, criterion and verdict.");
  for (const auto& [skill, f] : all.skills) {
    for (const auto& [key, n] : f.reviews) {
      out += fmt::format("skillrunner_reviews_total{{skill=\"{}\",criterion=\"{}\",verdict=\"{}\"}} {}\n",
                         PrometheusLabel(skill), PrometheusLabel(key.first), PrometheusLabel(key.second), n);
    }
  }
  header("skillrunner_refusals_total", "counter",
         "Invocations ended by a refusal (reason refused) or a provider's content filter (content_filtered), by skill "
         "and the model that refused.");
  AppendRefusals(out, all);
  header("skillrunner_native_downgrades_total", "counter",
         "Models sent to the validation loop for the process's life after their strict mode answered outside the "
         "schema three times within 10 minutes.");
  AppendNativeDowngrades(out, all);
  header("skillrunner_reloads_total", "counter",
         "Reloads by kind (tree: the skill tree, on SIGHUP or skills.reload; tls: the certificate and key, on SIGHUP "
         "or when their files change) and result.");
  const std::pair<const char*, const std::atomic<std::uint64_t>*> reloads[] = {
      {"kind=\"tree\",result=\"ok\"", &reloads_ok_},
      {"kind=\"tree\",result=\"failed\"", &reloads_failed_},
      {"kind=\"tls\",result=\"ok\"", &tls_reloads_ok_},
      {"kind=\"tls\",result=\"failed\"", &tls_reloads_failed_}};
  for (const auto& [labels, count] : reloads) {
    out += fmt::format("skillrunner_reloads_total{{{}}} {}\n", labels, count->load(std::memory_order_relaxed));
  }
  header("skillrunner_tree_loaded_timestamp_seconds", "gauge",
         "When the skill tree in service was loaded (Unix time): at start or the last reload that succeeded.");
  out += fmt::format("skillrunner_tree_loaded_timestamp_seconds {:.3f}\n",
                     tree_loaded_at_.load(std::memory_order_relaxed));
}

void ServerMetrics::AppendLatency(std::string& out, const Figures& all) {
  for (const auto& [skill, f] : all.skills) {
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i < kBuckets.size(); ++i) {
      cumulative += f.buckets[i];
      out += fmt::format("skillrunner_invocation_duration_seconds_bucket{{skill=\"{}\",le=\"{}\"}} {}\n",
                         PrometheusLabel(skill), kBuckets[i], cumulative);
    }
    cumulative += f.buckets.back();
    out += fmt::format("skillrunner_invocation_duration_seconds_bucket{{skill=\"{}\",le=\"+Inf\"}} {}\n",
                       PrometheusLabel(skill), cumulative);
    out += fmt::format("skillrunner_invocation_duration_seconds_sum{{skill=\"{}\"}} {}\n", PrometheusLabel(skill),
                       f.seconds_sum);
    out += fmt::format("skillrunner_invocation_duration_seconds_count{{skill=\"{}\"}} {}\n", PrometheusLabel(skill),
                       f.count);
  }
}

json::object ServerMetrics::ToJson() const {
  const Figures all = Sum();
  json::object skills;
  for (const auto& [skill, f] : all.skills) {
    json::object outcomes;
    for (const auto& [outcome, n] : f.outcomes) outcomes[outcome] = n;
    json::array buckets;
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i < kBuckets.size(); ++i) {
      cumulative += f.buckets[i];
      buckets.push_back(json::object{{"le", kBuckets[i]}, {"count", cumulative}});
    }
    json::object reviews;
    for (const auto& [key, n] : f.reviews) {
      json::value& criterion = reviews[key.first];
      if (!criterion.is_object()) criterion = json::object{};
      criterion.as_object()[key.second] = n;
    }
    skills[skill] = json::object{{"invocations", std::move(outcomes)},
                                 {"reviews", std::move(reviews)},
                                 {"attempts", f.attempts},
                                 {"transient_retries", f.transient_retries},
                                 {"validation_retries", f.validation_retries},
                                 {"fallbacks", f.fallbacks},
                                 {"escalations", f.escalations},
                                 {"cost_usd", CostJson(f.cost_by_model)},
                                 {"input_tokens", f.input_tokens},
                                 {"output_tokens", f.output_tokens},
                                 {"duration_seconds_sum", f.seconds_sum},
                                 {"duration_seconds_count", f.count},
                                 {"duration_buckets", std::move(buckets)}};
  }
  json::object requests;
  for (const auto& [method, n] : all.requests) requests[method] = n;
  json::object rejected;
  for (const auto& [reason, n] : all.rejected) rejected[reason] = n;
  return json::object{{"skills", std::move(skills)},
                      {"requests", std::move(requests)},
                      {"rejected", std::move(rejected)},
                      {"reloads", json::object{{"ok", reloads_ok_.load(std::memory_order_relaxed)},
                                               {"failed", reloads_failed_.load(std::memory_order_relaxed)}}},
                      {"tree_loaded_at", tree_loaded_at_.load(std::memory_order_relaxed)},
                      {"in_flight", in_flight()},
                      {"connections", connections()}};
}

}  // namespace skillrunner::server
