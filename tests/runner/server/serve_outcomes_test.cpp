// What callers and operators see through a real serve process: a gated answer whose review
// failed is told apart from success in the access log and the metrics, and a 2xx whose body
// was cut on its way is retried as transient.
#include <gtest/gtest.h>
#include <signal.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <sstream>

#include "tests/runner/server/serve_process.h"
#include "tests/runner/server/server_fixture.h"
#include "tests/support/llm_test_bed.h"
#include "tests/support/loopback_server.h"
#include "tests/support/temp_tree.h"

namespace skillrunner {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;
using testing::TempTree;

// The lines of a JSON log whose event is `event`.
std::vector<json::object> LogEvents(const std::string& log, const std::string& event) {
  std::vector<json::object> events;
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("\"event\":\"" + event + "\"") != std::string::npos) events.push_back(json::parse(line).as_object());
  }
  return events;
}

// A generation skill gated by a two-criterion rubric whose judge fails both criteria each time:
// the generation (1), the judge (2), the regeneration with its critique (3), the judge again (4).
void WriteGatedTree(const TempTree& tree) {
  testing::WriteServerTree(tree);
  tree.Write("rubrics/faithful.yaml", R"(id: faithful
criteria:
  - { id: total, description: The total is the invoice's total., required: true }
  - { id: currency, description: The currency is the invoice's. }
)");
  tree.Write("skills/invoice/skill.yaml", R"(id: invoice
template_type: LLM_JSON_GENERATION
model: sim-model
prompt: { user: "Read the invoice: {{input.text}}" }
input_schema: { type: object, required: [text], properties: { text: { type: string } } }
output_schema:
  type: object
  required: [total]
  additionalProperties: false
  properties: { total: { type: number } }
review: { rubric: faithful, retry_once: true }
simulation:
  faults:
    - { attempt: [2, 4], fault: verdict, verdict: fail }
)");
}

TEST(ServeOutcomesTest, AGatedAnswerItsReviewFailedIsReviewFailedInTheLogAndTheMetrics) {
  TempTree tree;
  WriteGatedTree(tree);
  const std::string socket = tree.Path("s.sock").string();
  testing::ServeProcess serve(tree, {"--socket", socket, "--log-format", "json"});
  auto client = testing::ConnectWhenReady(socket);
  ASSERT_TRUE(client) << serve.Stderr();
  // The answer is served (the CLI's exit status 5), its review saying it failed.
  auto answer = client->Call(testing::InvokeLine(1, "invoice", R"({"text":"Total: 664.88 EUR"})"));
  ASSERT_TRUE(answer.as_object().contains("result")) << json::serialize(answer);
  EXPECT_EQ(answer.at("result").at("review").at("pass"), false);
  ASSERT_TRUE(client->Call(testing::InvokeLine(2, "contact", R"({"text":"Ada"})")).as_object().contains("result"));

  auto metrics = client->Call(R"({"jsonrpc":"2.0","id":3,"method":"metrics"})").at("result");
  EXPECT_EQ(metrics.at("skills").at("invoice").at("invocations"), json::parse(R"({"review_failed":1})"));
  EXPECT_EQ(metrics.at("skills").at("invoice").at("reviews"),
            json::parse(R"({"total":{"fail":1},"currency":{"fail":1}})"));
  EXPECT_EQ(metrics.at("skills").at("contact").at("invocations"), json::parse(R"({"ok":1})"));
  EXPECT_EQ(metrics.at("skills").at("contact").at("reviews"), json::object{});
  const std::string prometheus(metrics.at("prometheus").as_string());
  for (const std::string line :
       {"skillrunner_invocations_total{skill=\"invoice\",outcome=\"review_failed\"} 1\n",
        "skillrunner_reviews_total{skill=\"invoice\",criterion=\"currency\",verdict=\"fail\"} 1\n"
        "skillrunner_reviews_total{skill=\"invoice\",criterion=\"total\",verdict=\"fail\"} 1\n",
        "skillrunner_invocations_total{skill=\"contact\",outcome=\"ok\"} 1\n"}) {
    EXPECT_NE(prometheus.find("\n" + line), std::string::npos) << line << prometheus;
  }
  client->Close();
  serve.Signal(SIGTERM);
  ASSERT_EQ(serve.Wait(10s), 0);
  auto invokes = LogEvents(serve.Stderr(), "invoke");
  ASSERT_EQ(invokes.size(), 2u) << serve.Stderr();
  EXPECT_EQ(invokes[0].at("skill"), "invoice");
  EXPECT_EQ(invokes[0].at("outcome"), "review_failed");
  EXPECT_EQ(invokes[0].at("attempts"), 4);
  EXPECT_EQ(invokes[1].at("outcome"), "ok");
}

// A proxy that cuts a body sends a 200 whose JSON ends mid-way: the attempt is transient
// (reason malformed_body, the body's first 200 bytes kept) and the call is retried within the
// transient budget; it answers once the provider's next answer is whole.
TEST(ServeOutcomesTest, A2xxWhoseBodyIsCutIsRetriedAsTransientAndKeepsItsFirst200Bytes) {
  test_support::LoopbackServer llm;
  const std::string whole = test_support::OpenAiAnswer(R"({"name":"Ada"})");
  const std::string cut = whole.substr(0, whole.size() / 2);
  const std::string html = "<html><body>" + std::string(300, 'x') + "</body></html>";
  llm.Enqueue({.body = cut});
  llm.Enqueue({.body = html});
  llm.SetDefault({.body = whole});
  TempTree tree;
  testing::WriteServerTree(tree, "  http: { kind: openai, base_url: \"" + llm.base_url() + "\" }\n");
  tree.Write("skills/remote/skill.yaml", R"(id: remote
template_type: LLM_JSON_GENERATION
model: http-model
input_schema: { type: object }
output_schema: { type: object, required: [name], properties: { name: { type: string } } }
prompt: { user: "Say a name." }
retry: { transient: { initial_delay_ms: 10 } }
)");
  std::string config = testing::ReadFile(tree.Path("skillrunner.yaml"));
  config.replace(config.find("default_provider"), 0, "  http-model: { provider: http, structured_output: none }\n");
  tree.Write("skillrunner.yaml", config);
  const std::string socket = tree.Path("s.sock").string();
  testing::ServeProcess serve(tree, {"--socket", socket});
  auto client = testing::ConnectWhenReady(socket);
  ASSERT_TRUE(client) << serve.Stderr();
  auto answer = client->Call(testing::InvokeLine(1, "remote", "{}"));
  ASSERT_TRUE(answer.as_object().contains("result")) << json::serialize(answer);
  EXPECT_EQ(answer.at("result").at("output"), json::parse(R"({"name":"Ada"})"));
  const json::array& attempts = answer.at("result").at("attempts").as_array();
  ASSERT_EQ(attempts.size(), 3u) << json::serialize(attempts);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(attempts[i].at("kind"), "transient");
    EXPECT_EQ(attempts[i].at("reason"), "malformed_body");
    EXPECT_EQ(attempts[i].at("http_status"), 200);
  }
  EXPECT_EQ(attempts[0].at("raw"), json::value(cut.substr(0, 200)));
  EXPECT_EQ(attempts[0].at("errors").at(0).at("message"), "HTTP 200: the answer is not a JSON object");
  EXPECT_EQ(attempts[1].at("raw"), json::value(html.substr(0, 200)));
  EXPECT_EQ(attempts[2].at("kind"), "ok");
  EXPECT_EQ(answer.at("result").at("metrics").at("transient_retries"), 2);
  EXPECT_EQ(llm.request_count(), 3u);
  serve.Signal(SIGTERM);
  EXPECT_EQ(serve.Wait(10s), 0);
}

}  // namespace
}  // namespace skillrunner
