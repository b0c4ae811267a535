// `skillrunner serve` and `skillrunner call` as separate processes: signals,
// exit status, the socket file, and the client a shell script would use.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "tests/runner/server/serve_process.h"
#include "tests/runner/server/server_fixture.h"
#include "tests/support/child_process.h"
#include "tests/support/loopback_server.h"

namespace skillrunner {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;
using testing::ConnectWhenReady;
using testing::InvokeLine;
using testing::ServeProcess;
using testing::SocketClient;
using testing::TempTree;

struct Output {
  int status = -1;
  std::string out;
};

Output RunCall(const std::string& args) {
  std::string command = "env -u SKILLRUNNER_TOKEN '" + std::string(SKILLRUNNER_BINARY) + "' call " + args + " 2>&1";
  Output result;
  FILE* pipe = popen(command.c_str(), "r");
  std::array<char, 4096> buffer;
  while (std::size_t n = fread(buffer.data(), 1, buffer.size(), pipe)) result.out.append(buffer.data(), n);
  int raw = pclose(pipe);
  result.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return result;
}

class ServeCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::WriteServerTree(tree_, "  slow: { kind: simulated, latency_ms: 1000 }\n");
    tree_.Write("skills/slow/skill.yaml", R"(id: slow
model: slow-model
template_type: LLM_JSON_GENERATION
input_schema: { type: object }
output_schema: { type: object, required: [name], properties: { name: { type: string } } }
prompt: { user: "Say a name." }
)");
    std::string config = R"(providers:
  sim: { kind: simulated, latency_ms: 50 }
  stuck: { kind: simulated, latency_ms: 20000 }
  slow: { kind: simulated, latency_ms: 1000 }
models:
  sim-model: { provider: sim, structured_output: native }
  stuck-model: { provider: stuck, structured_output: native }
  slow-model: { provider: slow, structured_output: native }
default_provider: sim
)";
    tree_.Write("skillrunner.yaml", config);
    socket_ = tree_.Path("s.sock").string();
  }
  TempTree tree_;
  std::string socket_;
};

TEST_F(ServeCliTest, SigtermWithFiveInFlightAnswersAllFiveThenExitsCleanly) {
  ServeProcess serve(tree_, {"--socket", socket_});
  auto client = ConnectWhenReady(socket_);
  ASSERT_TRUE(client.has_value()) << serve.Stderr();
  for (int id = 1; id <= 5; ++id) ASSERT_TRUE(client->Send(InvokeLine(id, "slow", "{}")));
  // All five are in flight (each takes 1 s) before the signal.
  SocketClient probe = *SocketClient::ConnectUnix(socket_);
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (probe.Call(R"({"jsonrpc":"2.0","id":0,"method":"health"})").at("result").at("in_flight") != 5 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  ASSERT_EQ(probe.Call(R"({"jsonrpc":"2.0","id":0,"method":"health"})").at("result").at("in_flight"), 5);
  probe.Close();
  serve.Signal(SIGTERM);
  std::map<std::string, int> answered;
  while (auto answer = client->ReadJson(10s)) {
    ++answered[json::serialize(answer->at("id"))];
    EXPECT_EQ(answer->at("result").at("skill"), "slow") << json::serialize(*answer);
  }
  EXPECT_EQ(answered.size(), 5u);
  for (auto& [id, n] : answered) EXPECT_EQ(n, 1) << "id " << id;
  EXPECT_EQ(serve.Wait(20s), 0) << serve.Stderr();
  EXPECT_FALSE(std::filesystem::exists(socket_));
  EXPECT_NE(serve.Stderr().find("SIGTERM: shutting down"), std::string::npos) << serve.Stderr();
}

// design.md §9.4: `telemetry:` in the config, OTEL_BSP_* from the environment;
// health and Prometheus say what the exporter did.
TEST_F(ServeCliTest, TracedInvocationsReachTheCollectorAndHealthAndMetricsCountTheSpans) {
  test_support::LoopbackServer collector;
  collector.SetDefault({.body = "{}"});
  std::ifstream in(tree_.Path("skillrunner.yaml"));
  std::stringstream config;
  config << in.rdbuf() << "telemetry: { otlp_endpoint: \"" << collector.base_url() << "\", service_name: replica-a }\n";
  tree_.Write("skillrunner.yaml", config.str());
  const std::uint16_t metrics_port = test_support::FreeLoopbackPort();
  ServeProcess serve(tree_, {"--socket", socket_, "--metrics-listen", "127.0.0.1:" + std::to_string(metrics_port)},
                     {"OTEL_BSP_SCHEDULE_DELAY=20"});
  auto client = ConnectWhenReady(socket_);
  ASSERT_TRUE(client) << serve.Stderr();
  auto answer = client->Call(InvokeLine(1, "slow", "{}"));
  ASSERT_TRUE(answer.as_object().contains("result")) << json::serialize(answer);
  json::value tracing;
  for (int i = 0; i < 250; ++i) {
    tracing = client->Call(R"({"jsonrpc":"2.0","id":2,"method":"health"})").at("result").at("tracing");
    if (tracing.at("exported_spans") == 2) break;
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_EQ(tracing,
            json::parse(R"({"endpoint":")" + collector.base_url() +
                        R"(/v1/traces","exported_spans":2,"dropped_spans":0,"failed_exports":0,"queued_spans":0})"));
  ASSERT_EQ(collector.request_count(), 1u);
  const json::value body = json::parse(collector.requests()[0].body);
  EXPECT_EQ(body.at("resourceSpans").at(0).at("resource").at("attributes").at(0).at("value").at("stringValue"),
            "replica-a");
  EXPECT_EQ(body.at("resourceSpans").at(0).at("scopeSpans").at(0).at("spans").at(0).at("name"), "invoke_skill slow");

  auto http = SocketClient::ConnectTcp(metrics_port);
  ASSERT_TRUE(http.has_value());
  ASSERT_TRUE(http->Send("GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
  std::string response;
  while (auto line = http->ReadLine(5s)) response += *line + "\n";
  EXPECT_NE(response.find("\nskillrunner_trace_spans_exported_total 2\n"), std::string::npos) << response;
  EXPECT_NE(response.find("\nskillrunner_trace_spans_dropped_total 0\n"), std::string::npos) << response;
  serve.Signal(SIGTERM);
  EXPECT_EQ(serve.Wait(10s), 0);
}

TEST_F(ServeCliTest, InvocationsStillRunningAtTheDrainTimeoutAreAnsweredCancelled) {
  ServeProcess serve(tree_, {"--socket", socket_, "--drain-timeout-ms", "200"});
  auto client = ConnectWhenReady(socket_);
  ASSERT_TRUE(client.has_value()) << serve.Stderr();
  for (int id = 1; id <= 3; ++id) ASSERT_TRUE(client->Send(InvokeLine(id, "stuck", R"({"text":"x"})")));
  std::this_thread::sleep_for(200ms);
  serve.Signal(SIGINT);
  int cancelled = 0;
  while (auto answer = client->ReadJson(10s)) {
    EXPECT_EQ(answer->at("error").at("data").at("code"), "CANCELLED") << json::serialize(*answer);
    EXPECT_EQ(answer->at("error").at("message"), "cancelled: the server's drain timeout (200 ms) ran out");
    EXPECT_EQ(answer->at("error").at("data").at("message"), "cancelled: the server's drain timeout (200 ms) ran out");
    ++cancelled;
  }
  EXPECT_EQ(cancelled, 3);
  EXPECT_EQ(serve.Wait(10s), 0) << serve.Stderr();
  EXPECT_FALSE(std::filesystem::exists(socket_));
}

TEST_F(ServeCliTest, CallPrintsTheAnswerAndExitsLikeRun) {
  ServeProcess serve(tree_, {"--socket", socket_});
  ASSERT_TRUE(ConnectWhenReady(socket_).has_value()) << serve.Stderr();
  auto ok = RunCall("skills.invoke '{\"skill\":\"echo\",\"input\":{\"a\":1}}' --socket " + socket_);
  EXPECT_EQ(ok.status, 0) << ok.out;
  auto answer = json::parse(ok.out);
  EXPECT_EQ(answer.at("result").at("output"), json::parse(R"({"a":1})"));
  auto missing = RunCall("skills.invoke '{\"skill\":\"nope\",\"input\":{}}' --socket " + socket_);
  EXPECT_EQ(missing.status, 2);
  EXPECT_EQ(json::parse(missing.out).at("error").at("data").at("code"), "SKILL_NOT_FOUND");
  auto unknown = RunCall("skills.frobnicate --socket " + socket_);
  EXPECT_EQ(unknown.status, 2);
  EXPECT_EQ(json::parse(unknown.out).at("error").at("code"), -32601);
  auto bad_params = RunCall("skills.list '{not json' --socket " + socket_);
  EXPECT_EQ(bad_params.status, 2);
  EXPECT_EQ(bad_params.out, "skillrunner call: PARAMS is not valid JSON: line 1, column 2: syntax error\n");
  auto nowhere = RunCall("health");
  EXPECT_EQ(nowhere.status, 2);
  EXPECT_EQ(nowhere.out, "skillrunner call: give --socket PATH or --connect HOST:PORT\n");
  auto bad_address = RunCall("health --connect localhost");
  EXPECT_EQ(bad_address.status, 2);
  EXPECT_EQ(bad_address.out, "skillrunner call: --connect expected HOST:PORT, got \"localhost\"\n");
  serve.Signal(SIGTERM);
  EXPECT_EQ(serve.Wait(10s), 0);
  auto gone = RunCall("health --socket " + socket_);
  EXPECT_EQ(gone.status, 3);
  EXPECT_NE(gone.out.find("skillrunner call: cannot connect to " + socket_), std::string::npos) << gone.out;
}

TEST_F(ServeCliTest, ANonLoopbackListenerWithoutATokenDoesNotStart) {
  ServeProcess serve(tree_, {"--listen", "0.0.0.0:0", "--allow-remote"});
  EXPECT_EQ(serve.Wait(20s), 2);
  EXPECT_NE(serve.Stderr().find("skillrunner serve: --listen 0.0.0.0:0 accepts other hosts, so it needs a token: "
                                "set SKILLRUNNER_TOKEN in the server's environment"),
            std::string::npos)
      << serve.Stderr();
}

TEST_F(ServeCliTest, ATenantWhoseTokenVariableIsUnsetStopsServeNamingIt) {
  std::ofstream(tree_.Path("skillrunner.yaml"), std::ios::app)
      << "tenants:\n  team-a: { token_env: TEAM_A_TOKEN, requests_per_minute: 60 }\n";
  ServeProcess serve(tree_, {"--socket", socket_});
  EXPECT_EQ(serve.Wait(20s), 2);
  EXPECT_NE(serve.Stderr().find("skillrunner serve: " + tree_.Path("skillrunner.yaml").string() +
                                ": /tenants/team-a/token_env: TEAM_A_TOKEN is not set (the tenant's token)\n"),
            std::string::npos)
      << serve.Stderr();
  EXPECT_FALSE(std::filesystem::exists(socket_));
}

TEST_F(ServeCliTest, SighupReloadsTheSkills) {
  ServeProcess serve(tree_, {"--socket", socket_});
  auto client = ConnectWhenReady(socket_);
  ASSERT_TRUE(client.has_value()) << serve.Stderr();
  EXPECT_EQ(client->Call(R"({"jsonrpc":"2.0","id":1,"method":"skills.list"})").at("result").as_array().size(), 4u);
  tree_.Write("skills/echo2/skill.yaml",
              "id: echo2\nhandler: echo\ninput_schema: { type: object }\noutput_schema: { type: object }\n");
  serve.Signal(SIGHUP);
  auto deadline = std::chrono::steady_clock::now() + 10s;
  std::size_t skills = 0;
  while (skills != 5 && std::chrono::steady_clock::now() < deadline) {
    skills = client->Call(R"({"jsonrpc":"2.0","id":2,"method":"skills.list"})").at("result").as_array().size();
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(skills, 5u);
  EXPECT_EQ(client->Call(R"({"jsonrpc":"2.0","id":3,"method":"health"})").at("result").at("reloads"), 1);
}

TEST_F(ServeCliTest, TheAccessLogIsOneJsonObjectPerInvocationWithoutTheInput) {
  ServeProcess serve(tree_, {"--socket", socket_, "--log-format", "json"});
  auto client = ConnectWhenReady(socket_);
  ASSERT_TRUE(client.has_value()) << serve.Stderr();
  auto answer = client->Call(InvokeLine(7, "contact", R"({"text":"private words of Ada"})"));
  ASSERT_TRUE(answer.as_object().contains("result"));
  client->Close();
  serve.Signal(SIGTERM);
  ASSERT_EQ(serve.Wait(10s), 0);
  std::string log = serve.Stderr();
  EXPECT_EQ(log.find("private words"), std::string::npos) << log;
  std::istringstream lines(log);
  std::string line;
  int invokes = 0;
  while (std::getline(lines, line)) {
    if (line.find("\"event\":\"invoke\"") == std::string::npos) continue;
    ++invokes;
    json::object entry = json::parse(line).as_object();
    EXPECT_EQ(entry.at("level"), "info");
    EXPECT_EQ(entry.at("id"), 7);
    EXPECT_EQ(entry.at("skill"), "contact");
    EXPECT_EQ(entry.at("outcome"), "ok");
    EXPECT_EQ(entry.at("attempts"), 1);
    EXPECT_GT(entry.at("input_tokens").as_int64(), 0);
    EXPECT_GE(entry.at("duration_ms").as_int64(), 50);  // the provider's latency
    EXPECT_TRUE(entry.contains("ts"));
  }
  EXPECT_EQ(invokes, 1) << log;
}

// A Unix socket that listens (the kernel accepts into its backlog) but never answers.
int ListenOn(const std::string& path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 || ::listen(fd, 4) != 0) return -1;
  return fd;
}

TEST_F(ServeCliTest, CallSaysWhenTheServerDoesNotAnswer) {
  std::string mute_path = tree_.Path("mute.sock").string();
  int mute = ListenOn(mute_path);
  ASSERT_GE(mute, 0);
  auto silent = RunCall("health --socket " + mute_path + " --timeout-ms 200");
  EXPECT_EQ(silent.status, 3);
  EXPECT_EQ(silent.out, "skillrunner call: no answer within 200 ms\n");
  ::close(mute);

  std::string rude_path = tree_.Path("rude.sock").string();
  int rude = ListenOn(rude_path);
  ASSERT_GE(rude, 0);
  std::thread closer([rude] { ::close(::accept(rude, nullptr, nullptr)); });
  auto hung_up = RunCall("health --socket " + rude_path + " --timeout-ms 5000");
  closer.join();
  ::close(rude);
  EXPECT_EQ(hung_up.status, 3);
  EXPECT_EQ(hung_up.out, "skillrunner call: the server closed the connection without an answer\n");
}

}  // namespace
}  // namespace skillrunner
