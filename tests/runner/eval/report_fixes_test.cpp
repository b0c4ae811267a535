// design.md §9.5's report fixes: distinct histogram labels, a failure reason
// once, review-gate judges' tokens counted as judge tokens.

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <set>

#include "runner/eval/report/html_charts.h"
#include "runner/eval/report/report_markup.h"
#include "runner/eval/summary.h"
#include "tests/runner/eval/summary_json.h"

namespace skillrunner::eval {
namespace {
namespace json = boost::json;

TEST(ReportFixesTest, SubMillisecondLatenciesGetDistinctLabels) {
  std::vector<report::Bar> bars = report::LatencyBuckets({0.2, 0.4, 3.7, 8.1});
  std::vector<std::string> labels;
  for (const auto& bar : bars) labels.push_back(bar.label);
  EXPECT_EQ(labels, (std::vector<std::string>{"≥0 ms", "≥1 ms", "≥2 ms", "≥3 ms", "≥4 ms", "≥5 ms", "≥6 ms", "≥7 ms",
                                              "≥8 ms"}));
  EXPECT_EQ(bars[0].value, 2);
  std::vector<report::Bar> tiny = report::LatencyBuckets({0.1, 0.3, 0.9});
  ASSERT_EQ(tiny.size(), 1u);  // all under a millisecond: one bucket, not ten "≥0 ms"
  EXPECT_EQ(tiny[0].value, 3);
}

// Bin labels wider than a bar and its gap ran into each other at any width (latency and cost
// bins at 1400 px): they are turned 40 degrees, each about its own place under its bar, and the
// chart grows to hold them. Short ones stay level.
TEST(ReportFixesTest, BinLabelsWiderThanTheirBarAreTurnedSoTheyDoNotOverlap) {
  const std::string level = report::SvgHistogram("cases by attempts", {{"1", 3}, {"2", 1}});
  EXPECT_EQ(level.find("rotate("), std::string::npos) << level;
  EXPECT_NE(level.find(R"(height="178.0")"), std::string::npos) << level;
  const std::string turned = report::SvgHistogram("cases by latency", {{"≥100 ms", 3}, {"≥2500 ms", 1}});
  EXPECT_NE(turned.find(R"X(<text x="30.0" y="158.0" text-anchor="end" font-size="10" )X"
                        R"X(transform="rotate(-40 26.0 158.0)">≥100 ms</text>)X"),
            std::string::npos)
      << turned;
  EXPECT_NE(turned.find(R"X(transform="rotate(-40 70.0 158.0)">≥2500 ms</text>)X"), std::string::npos) << turned;
  EXPECT_NE(turned.find(R"(height="208.9")"), std::string::npos) << turned;  // 8 characters at 6 px, turned
}

TEST(ReportFixesTest, AFailedCriterionIsOneReasonNotThree) {
  json::object record = json::parse(R"({"review":{"pass":false,
      "issues":["Too long.","short: Three sentences.","Too long."],
      "criteria_results":[{"criterion_id":"short","verdict":"fail","reasoning":"Three sentences."},
                          {"criterion_id":"faithful","verdict":"pass","reasoning":"ok"}]}})")
                            .as_object();
  EXPECT_EQ(report::FailureReasons(record),
            (std::vector<std::string>{"Too long.", "criterion short failed: Three sentences."}));
}

// And at a priced model, its cost is judging too (it was null beside priced judge tokens).
TEST(ReportFixesTest, AReviewGatesJudgeTokensAndCostAreJudgeTokensAndCost) {
  json::object record = json::parse(R"({"skill":"s","case":"c1","result":{"output":{},
      "attempts":[{"n":1,"kind":"ok","role":"generation","input_tokens":100,"output_tokens":10,"cost_usd":0.25},
                  {"n":2,"kind":"ok","role":"judge","input_tokens":50,"output_tokens":5,"cost_usd":0.125}],
      "metrics":{"attempts":2,"input_tokens":150,"output_tokens":15,"cost_usd":0.375,"duration_ms":1}},
      "review":{"pass":true,"criteria_results":[]}})")
                            .as_object();
  SummaryHeader header;
  header.skills = {"s"};
  json::object summary = SummaryJson(header, {record});
  const json::object& s = summary.at("skills").at("s").as_object();
  EXPECT_EQ(s.at("judge_input_tokens"), 50);
  EXPECT_EQ(s.at("judge_output_tokens"), 5);
  EXPECT_EQ(s.at("input_tokens"), 150);  // generation and judging, counted once
  EXPECT_EQ(s.at("output_tokens"), 15);
  EXPECT_EQ(s.at("judge_cost_usd"), 0.125);
  EXPECT_EQ(s.at("cost_usd"), 0.375);  // generation and judging
}

}  // namespace
}  // namespace skillrunner::eval
