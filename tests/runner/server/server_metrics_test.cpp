#include "runner/server/server_metrics.h"

#include <gtest/gtest.h>

namespace skillrunner::server {
namespace {

// design.md §9.4: skillrunner_cost_usd_total{skill,model}, summed over invocations.
TEST(ServerMetricsTest, CostIsCountedPerSkillAndModel) {
  ServerMetrics metrics;
  Metrics first;
  first.cost_usd = 0.003;
  first.cost_by_model = {{"gpt-4o-mini", 0.001}, {"judge-model", 0.002}};
  Metrics second;
  second.cost_usd = 0.0005;
  second.cost_by_model = {{"gpt-4o-mini", 0.0005}};
  metrics.RecordInvocation("triage", "ok", first, 0.2);
  metrics.RecordInvocation("triage", "MAX_RETRIES_EXCEEDED", second, 0.4);
  metrics.RecordInvocation("echo", "ok", Metrics{}, 0.01);
  const std::string text = metrics.Prometheus();
  EXPECT_NE(text.find("# TYPE skillrunner_cost_usd_total counter\n"
                      "skillrunner_cost_usd_total{skill=\"triage\",model=\"gpt-4o-mini\"} 0.0015\n"
                      "skillrunner_cost_usd_total{skill=\"triage\",model=\"judge-model\"} 0.002\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("skillrunner_cost_usd_total{skill=\"echo\""), std::string::npos);
  const auto json = metrics.ToJson();
  EXPECT_EQ(json.at("skills").at("triage").at("cost_usd").at("gpt-4o-mini").as_double(), 0.0015);
}

// design.md §11.5: refusals are counted apart, by the model and provider that refused and whether it
// was the model (refused) or the provider's filter (content_filtered).
TEST(ServerMetricsTest, RefusalsAreCountedBySkillModelProviderAndReason) {
  ServerMetrics metrics;
  Metrics openai;
  openai.model = "gpt-4o-mini";
  openai.provider = "openai";
  Metrics gemini;
  gemini.model = "gemini-2.5-flash";
  gemini.provider = "gemini";
  metrics.RecordInvocation("triage", "REFUSED", openai, 0.2);
  metrics.RecordInvocation("triage", "REFUSED", openai, 0.2);
  metrics.RecordInvocation("triage", "CONTENT_FILTERED", gemini, 0.2);
  metrics.RecordInvocation("triage", "ok", openai, 0.2);
  const std::string text = metrics.Prometheus();
  EXPECT_NE(text.find("# TYPE skillrunner_refusals_total counter\n"
                      "skillrunner_refusals_total{skill=\"triage\",model=\"gemini-2.5-flash\",provider=\"gemini\","
                      "reason=\"content_filtered\"} 1\n"
                      "skillrunner_refusals_total{skill=\"triage\",model=\"gpt-4o-mini\",provider=\"openai\","
                      "reason=\"refused\"} 2\n#"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace skillrunner::server

namespace skillrunner::server {
namespace {

// design.md §11.5: a model whose strict mode gave way is counted once, by model and provider, whichever
// skill's invocation sent it to the loop.
TEST(ServerMetricsTest, ANativeDowngradeIsCountedByModelAndProvider) {
  ServerMetrics metrics;
  Metrics downgraded;
  downgraded.model = downgraded.native_downgraded = "anthropic.claude-3-haiku-20240307-v1:0";
  downgraded.provider = "aws";
  metrics.RecordInvocation("triage", "MAX_RETRIES_EXCEEDED", downgraded, 0.2);
  metrics.RecordInvocation("triage", "ok", Metrics{}, 0.1);
  const std::string text = metrics.Prometheus();
  EXPECT_NE(text.find("# TYPE skillrunner_native_downgrades_total counter\n"
                      "skillrunner_native_downgrades_total{model=\"anthropic.claude-3-haiku-20240307-v1:0\","
                      "provider=\"aws\"} 1\n"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace skillrunner::server
