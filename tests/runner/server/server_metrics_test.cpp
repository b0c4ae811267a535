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

}  // namespace
}  // namespace skillrunner::server
