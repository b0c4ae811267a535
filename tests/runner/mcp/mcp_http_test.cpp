// serve --mcp-listen as a real process, spoken to over loopback HTTP: tenants' tokens, their quotas
// and their sessions, the server's metrics, and the listener's address rules.
#include <gtest/gtest.h>
#include <signal.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <future>
#include <map>
#include <regex>

#include "tests/runner/server/serve_process.h"
#include "tests/support/child_process.h"
#include "tests/support/http_fetch.h"

namespace skillrunner::testing {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;

constexpr const char* kInitialize =
    R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})";

std::string CallLine(int id, const std::string& tool, const std::string& arguments) {
  return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":"tools/call","params":{"name":")" + tool +
         R"(","arguments":)" + arguments + "}}";
}

class McpHttpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tree_.Write("skillrunner.yaml",
                "providers:\n  simulated: { kind: simulated }\n"
                "tenants:\n"
                "  alpha: { token_env: ALPHA_TOKEN, max_in_flight: 1 }\n"
                "  beta: { token_env: BETA_TOKEN }\n");
    tree_.Write("skills/nap/skill.yaml",
                "id: nap\nversion: 1\nhandler: exec\n"
                "command: [python3, -c, \"import time; time.sleep(3); print('{}')\"]\n"
                "input_schema: { type: object }\noutput_schema: { type: object }\n");
    std::filesystem::create_directories(tree_.Path("rubrics"));
  }

  // Starts serve with `args`; the MCP port, or 0 (the test has failed then).
  std::uint16_t Start(std::vector<std::string> args) {
    serve_.emplace(tree_, std::move(args),
                   std::vector<std::string>{"ALPHA_TOKEN=alpha-secret", "BETA_TOKEN=beta-secret"});
    static const std::regex line("MCP at http://127\\.0\\.0\\.1:([0-9]+)/mcp");
    for (auto deadline = std::chrono::steady_clock::now() + 20s; std::chrono::steady_clock::now() < deadline;) {
      std::smatch match;
      const std::string seen = serve_->Stderr();
      if (std::regex_search(seen, match, line)) return static_cast<std::uint16_t>(std::stoi(match[1]));
      std::this_thread::sleep_for(20ms);
    }
    ADD_FAILURE() << "no MCP listening line\n" << serve_->Stderr();
    return 0;
  }

  test_support::HttpReply Post(std::uint16_t port, const std::string& token, const std::string& session,
                               const std::string& body) {
    std::string headers =
        "Host: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n";
    if (!token.empty()) headers += "Authorization: Bearer " + token + "\r\n";
    if (!session.empty()) headers += "Mcp-Session-Id: " + session + "\r\n";
    return test_support::HttpSend(port, "POST", "/mcp", headers, body);
  }

  // A session opened with `token`; "" when initialize failed.
  std::string Open(std::uint16_t port, const std::string& token) {
    auto reply = Post(port, token, "", kInitialize);
    EXPECT_EQ(reply.status, 200) << reply.head << reply.body;
    return test_support::HeaderOf(reply, "Mcp-Session-Id");
  }

  TempTree tree_;
  std::optional<ServeProcess> serve_;
};

TEST_F(McpHttpTest, ATenantsTokenOpensItsOwnSessionAndItsQuotaHoldsAsOnTheSocket) {
  const std::uint16_t metrics_port = test_support::FreeLoopbackPort();
  const std::uint16_t port =
      Start({"--mcp-listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:" + std::to_string(metrics_port)});
  ASSERT_NE(port, 0);
  const std::string alpha = Open(port, "alpha-secret");
  ASSERT_EQ(alpha.size(), 32u);
  // Another tenant's token does not reach alpha's session.
  auto foreign = Post(port, "beta-secret", alpha, R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})");
  EXPECT_EQ(foreign.status, 404) << foreign.body;
  // Two calls at once against alpha's max_in_flight of 1: one runs, one is OVERLOADED with when to come back.
  auto first =
      std::async(std::launch::async, [&] { return Post(port, "alpha-secret", alpha, CallLine(3, "nap", "{}")); });
  std::this_thread::sleep_for(1s);  // well inside the first call's 3 s
  auto second = Post(port, "alpha-secret", alpha, CallLine(4, "nap", "{}"));
  auto ran = first.get();
  ASSERT_EQ(ran.status, 200) << ran.body;
  EXPECT_EQ(json::parse(ran.body).at("result").at("isError"), false) << ran.body;
  ASSERT_EQ(second.status, 200) << second.body;
  const json::value refused = json::parse(second.body).at("result");
  EXPECT_EQ(refused.at("isError"), true);
  const json::value& error = refused.at("_meta").at("skillrunner/error");
  EXPECT_EQ(error.at("code"), "OVERLOADED");
  EXPECT_EQ(error.at("message").as_string().find("tenant \"alpha\" is over its max_in_flight quota"), 0u) << error;
  EXPECT_GT(error.at("retry_after_ms").to_number<double>(), 0);
  // Counted where the socket's calls are: by skill and outcome, and by tenant.
  const std::string metrics = test_support::HttpFetch(metrics_port, "/metrics").body;
  EXPECT_NE(metrics.find("skillrunner_invocations_total{skill=\"nap\",outcome=\"ok\"} 1\n"), std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("skillrunner_invocations_total{skill=\"nap\",outcome=\"OVERLOADED\"} 1\n"), std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("skillrunner_tenant_invocations_total{tenant=\"alpha\"} 1\n"), std::string::npos) << metrics;
}

// Rollouts apply to MCP calls as to the socket's: half the calls go to the candidate, each answer's
// _meta names the arm and version that produced it.
TEST_F(McpHttpTest, ARolloutSplitsMcpCallsAndEachResultNamesItsArm) {
  tree_.Write("skillrunner.yaml",
              "providers:\n  simulated: { kind: simulated }\n"
              "models:\n  sim: { provider: simulated, structured_output: none }\n"
              "tenants:\n  beta: { token_env: BETA_TOKEN }\n");
  const std::string body =
      "template_type: LLM_JSON_GENERATION\nmodel: sim\n"
      "input_schema: { type: object }\n"
      "output_schema: { type: object, required: [name], properties: { name: { type: string } } }\n";
  tree_.Write("skills/pick/skill.yaml", "id: pick\nversion: 1\n" + body +
                                            "prompt: { user: \"v1: a name\" }\n"
                                            "rollout: { candidate: candidate.yaml, traffic: 0.5 }\n");
  tree_.Write("skills/pick/candidate.yaml", "id: pick\nversion: 2\n" + body + "prompt: { user: \"v2: a name\" }\n");
  const std::uint16_t port = Start({"--mcp-listen", "127.0.0.1:0", "--state-dir", tree_.Path("state").string()});
  ASSERT_NE(port, 0);
  const std::string session = Open(port, "beta-secret");
  std::map<std::string, int> arms;
  for (int i = 0; i < 30; ++i) {
    auto reply = Post(port, "beta-secret", session, CallLine(10 + i, "pick", "{}"));
    ASSERT_EQ(reply.status, 200) << reply.body;
    const json::value result = json::parse(reply.body).at("result");
    ASSERT_EQ(result.at("isError"), false) << reply.body;
    const std::string arm(result.at("_meta").at("skillrunner/arm").as_string());
    const std::int64_t version = result.at("_meta").at("skillrunner/skill_version").as_int64();
    EXPECT_EQ(version, arm == "candidate" ? 2 : 1) << reply.body;
    EXPECT_TRUE(result.at("structuredContent").at("name").is_string()) << reply.body;
    ++arms[arm];
  }
  // 30 calls at 0.5: both arms (the chance that one gets none is 2 in a billion).
  EXPECT_EQ(arms.size(), 2u);
  EXPECT_GT(arms["stable"], 0);
  EXPECT_GT(arms["candidate"], 0);
}

// The HTTP refusals the SDK test does not reach: a body that is not JSON, one that is not a message
// object, a method /mcp does not take, a body over --max-line-bytes. Each names why.
TEST_F(McpHttpTest, BadBodiesAndMethodsAreRefusedWithTheirReason) {
  const std::uint16_t port = Start({"--mcp-listen", "127.0.0.1:0", "--max-line-bytes", "2000"});
  ASSERT_NE(port, 0);
  auto broken = Post(port, "beta-secret", "", "{\"jsonrpc\":");
  EXPECT_EQ(broken.status, 400);
  EXPECT_EQ(json::parse(broken.body).at("error").at("code"), -32700) << broken.body;
  EXPECT_EQ(json::parse(broken.body).at("error").at("message").as_string().find("Parse error: "), 0u) << broken.body;
  auto batch = Post(port, "beta-secret", "", "[]");
  EXPECT_EQ(batch.status, 400);
  EXPECT_EQ(json::parse(batch.body),
            json::parse(R"({"jsonrpc":"2.0","id":null,"error":{"code":-32600,)"
                        R"("message":"Invalid Request: one JSON-RPC message object per POST"}})"));
  auto put =
      test_support::HttpSend(port, "PUT", "/mcp", "Host: 127.0.0.1\r\nAuthorization: Bearer beta-secret\r\n", "{}");
  EXPECT_EQ(put.status, 405);
  EXPECT_EQ(test_support::HeaderOf(put, "Allow"), "GET, POST, DELETE");
  auto get =
      test_support::HttpSend(port, "GET", "/mcp", "Host: 127.0.0.1\r\nAuthorization: Bearer beta-secret\r\n", "");
  EXPECT_EQ(get.status, 405);  // not asking for an event stream
  EXPECT_EQ(json::parse(get.body).at("error").at("message"),
            "Method Not Allowed: GET /mcp is an SSE stream (Accept: text/event-stream)");
  auto elsewhere = test_support::HttpSend(port, "GET", "/other", "Host: 127.0.0.1\r\n", "");
  EXPECT_EQ(elsewhere.status, 404);
  EXPECT_EQ(elsewhere.body, "only /mcp is served here\n");
  auto large = Post(port, "beta-secret", "", std::string(3000, ' ') + kInitialize);
  EXPECT_EQ(large.status, 413);
  EXPECT_EQ(json::parse(large.body).at("error").at("message"), "Payload Too Large: a message over 2000 bytes");
}

TEST_F(McpHttpTest, ANonLoopbackAddressNeedsAllowRemoteAndThenAToken) {
  tree_.Write("skillrunner.yaml", "providers:\n  simulated: { kind: simulated }\n");  // no tenants, no token
  serve_.emplace(tree_, std::vector<std::string>{"--mcp-listen", "0.0.0.0:0"});
  EXPECT_EQ(serve_->Wait(20s), 2);
  EXPECT_NE(serve_->Stderr().find("skillrunner serve: --mcp-listen 0.0.0.0:0 is not a loopback address; add "
                                  "--allow-remote to accept other hosts\n"),
            std::string::npos)
      << serve_->Stderr();
  serve_.emplace(tree_, std::vector<std::string>{"--mcp-listen", "0.0.0.0:0", "--allow-remote"},
                 std::vector<std::string>{}, "again");
  EXPECT_EQ(serve_->Wait(20s), 2);
  EXPECT_NE(serve_->Stderr().find("skillrunner serve: --mcp-listen 0.0.0.0:0 accepts other hosts, so it needs a "
                                  "token: set SKILLRUNNER_TOKEN (or give the config tenants)\n"),
            std::string::npos)
      << serve_->Stderr();
}

TEST_F(McpHttpTest, SigtermLetsTheCallInFlightFinishThenServeExitsZero) {
  const std::uint16_t port = Start({"--mcp-listen", "127.0.0.1:0"});
  ASSERT_NE(port, 0);
  const std::string beta = Open(port, "beta-secret");
  auto call = std::async(std::launch::async, [&] { return Post(port, "beta-secret", beta, CallLine(2, "nap", "{}")); });
  std::this_thread::sleep_for(1s);  // well inside the first call's 3 s
  serve_->Signal(SIGTERM);
  auto answered = call.get();
  ASSERT_EQ(answered.status, 200) << answered.body;
  EXPECT_EQ(json::parse(answered.body).at("result").at("structuredContent"), json::object{}) << answered.body;
  EXPECT_EQ(serve_->Wait(20s), 0) << serve_->Stderr();
}

}  // namespace
}  // namespace skillrunner::testing
