// The socket server, really started on a temp Unix socket, driven by plain
// socket clients as a user's script would.
#include <grp.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <cstring>
#include <map>
#include <thread>

#include "runner/net/address.h"
#include "tests/runner/server/server_fixture.h"
#include "tests/support/llm_test_bed.h"
#include "tests/support/loopback_server.h"

namespace skillrunner {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;
using testing::InvokeLine;
using testing::ServerFixture;
using testing::SocketClient;
using testing::TempTree;

std::string Str(const json::value& v) { return json::serialize(v); }

class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override { testing::WriteServerTree(tree_); }

  std::unique_ptr<ServerFixture> StartServer(server::ServerOptions options = {}) {
    auto fixture = std::make_unique<ServerFixture>(tree_, std::move(options));
    auto failure = fixture->Start();
    EXPECT_FALSE(failure.has_value()) << *failure;
    return fixture;
  }

  TempTree tree_;
};

TEST_F(ServerTest, FortyPipelinedInvokesRunConcurrentlyAndBadLinesHarmNoneOfThem) {
  // `contact` on a loopback OpenAI server that holds each answer 2 s: the
  // server must have all 40 in flight at once.
  test_support::LoopbackServer llm;
  llm.SetDefault({.body = test_support::OpenAiAnswer(R"({"name":"Ada"})"), .delay = 2000ms});
  tree_.Write("skillrunner.yaml", "providers:\n  llm: { kind: openai, base_url: \"" + llm.base_url() +
                                      "/v1\" }\n  stuck: { kind: simulated, latency_ms: 20000 }\nmodels:\n"
                                      "  sim-model: { provider: llm, structured_output: native }\n"
                                      "  stuck-model: { provider: stuck, structured_output: native }\n");
  auto server = StartServer();
  SocketClient client = server->Connect();
  std::string batch;
  for (int id = 1; id <= 40; ++id) {
    batch += InvokeLine(id, "contact", R"({"text":"Ada Lovelace wrote to us"})");
    if (id == 10) batch += "{\"jsonrpc\":\"2.0\",\"id\":\n";  // malformed
    if (id == 20)
      batch += R"({"jsonrpc":"2.0","id":"u","method":"skills.explode"})"
               "\n";
    if (id == 30) batch += std::string(3 << 20, 'x') + "\n";  // 3 MiB line
  }
  std::thread writer([&] { ASSERT_TRUE(client.Send(batch)); });
  std::map<std::string, int> results;
  std::vector<json::value> errors;
  for (int i = 0; i < 43; ++i) {
    auto answer = client.ReadJson();
    ASSERT_TRUE(answer.has_value()) << "only " << i << " answers";
    ASSERT_TRUE(answer->is_object()) << Str(*answer);
    const auto& object = answer->as_object();
    EXPECT_EQ(object.at("jsonrpc"), "2.0");
    if (object.contains("result")) {
      ++results[Str(object.at("id"))];
      EXPECT_EQ(object.at("result").at("skill"), "contact");
      EXPECT_TRUE(object.at("result").at("output").at("name").is_string());
    } else {
      errors.push_back(*answer);
    }
  }
  writer.join();
  ASSERT_EQ(results.size(), 40u);
  for (int id = 1; id <= 40; ++id) EXPECT_EQ(results[std::to_string(id)], 1) << "id " << id;
  EXPECT_EQ(llm.max_in_flight(), 40);

  ASSERT_EQ(errors.size(), 3u);
  std::map<std::int64_t, json::value> by_code;
  for (auto& e : errors) by_code[e.at("error").at("code").as_int64()] = e;
  ASSERT_TRUE(by_code.contains(-32700));
  EXPECT_TRUE(by_code[-32700].at("id").is_null());
  EXPECT_EQ(by_code[-32700].at("error").at("message"), "Parse error at byte 23: incomplete JSON");
  ASSERT_TRUE(by_code.contains(-32601));
  EXPECT_EQ(by_code[-32601].at("id"), "u");
  EXPECT_EQ(by_code[-32601].at("error").at("message"), "Method not found: \"skills.explode\"");
  ASSERT_TRUE(by_code.contains(-32600));
  EXPECT_EQ(by_code[-32600].at("error").at("message"),
            "Invalid Request: line longer than the 1048576-byte limit; it was skipped up to the next newline");
  // The connection lives on.
  auto health = client.Call(R"({"jsonrpc":"2.0","id":99,"method":"health"})");
  EXPECT_EQ(health.at("result").at("status"), "ok");
}

TEST_F(ServerTest, ApplicationErrorsCarryTheInvocationErrorAsData) {
  auto server = StartServer();
  SocketClient client = server->Connect();
  auto unknown = client.Call(InvokeLine(1, "contakt", "{}"));
  EXPECT_EQ(unknown.at("id"), 1);
  EXPECT_EQ(unknown.at("error").at("code"), -32002);
  EXPECT_EQ(unknown.at("error").at("data").at("code"), "SKILL_NOT_FOUND");
  EXPECT_EQ(unknown.at("error").at("message"), "unknown skill \"contakt\" (did you mean \"contact\"?)");

  auto invalid = client.Call(InvokeLine(2, "contact", R"({"text": 5})"));
  EXPECT_EQ(invalid.at("error").at("code"), -32002);
  const auto& data = invalid.at("error").at("data").as_object();
  EXPECT_EQ(data.at("code"), "INPUT_INVALID");
  EXPECT_EQ(data.at("errors").at(0).at("path"), "/text");
  EXPECT_TRUE(data.contains("attempts"));
  EXPECT_TRUE(data.contains("metrics"));
}

TEST_F(ServerTest, BadParamsNameThePointer) {
  auto server = StartServer();
  SocketClient client = server->Connect();
  auto answer = client.Call(InvokeLine(7, "echo", "{}", R"({"timeout_ms": -5, "colour": 1})"));
  EXPECT_EQ(answer.at("id"), 7);
  EXPECT_EQ(answer.at("error").at("code"), -32602);
  EXPECT_EQ(answer.at("error").at("message"),
            "Invalid params: /options/timeout_ms: expected an integer from 1 to 86400000");
  EXPECT_EQ(answer.at("error").at("data").at("errors").as_array().size(), 2u);
  EXPECT_EQ(
      answer.at("error").at("data").at("errors").at(1),
      json::parse(
          R"J({"path": "/options/colour", "message": "unknown option (expected timeout_ms, seed, session, show_request, max_cost_usd, traceparent, stream, partial_interval_ms, routing_key, version)"})J"));
  auto bad_show = client.Call(InvokeLine(9, "echo", "{}", R"({"show_request": "yes"})"));
  EXPECT_EQ(bad_show.at("error").at("message"), "Invalid params: /options/show_request: expected true or false");
  auto bad_trace = client.Call(InvokeLine(10, "echo", "{}", R"({"traceparent": "00-abc-def-01"})"));
  EXPECT_EQ(bad_trace.at("error").at("message"),
            "Invalid params: /options/traceparent: not a W3C traceparent: expected 00-<32 hex digits>-<16 hex "
            "digits>-<2 hex digits>");
  auto bad_key = client.Call(InvokeLine(12, "echo", "{}", R"({"routing_key": ""})"));
  EXPECT_EQ(bad_key.at("error").at("message"),
            "Invalid params: /options/routing_key: expected a string of 1 to 1024 characters");
  auto bad_version = client.Call(InvokeLine(13, "echo", "{}", R"({"version": 0})"));
  EXPECT_EQ(bad_version.at("error").at("message"),
            "Invalid params: /options/version: expected a version number (an integer from 1)");
  auto good_trace = client.Call(
      InvokeLine(11, "echo", "{}", R"({"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"})"));
  EXPECT_FALSE(good_trace.as_object().contains("error")) << Str(good_trace);
  auto missing = client.Call(R"({"jsonrpc":"2.0","id":8,"method":"skills.invoke","params":{"skill":"echo"}})");
  EXPECT_EQ(missing.at("error").at("message"),
            "Invalid params: /input: missing: the skill's input (any JSON value its input_schema accepts)");
  auto not_request = client.Call(R"([1])");
  EXPECT_EQ(
      Str(not_request),
      R"([{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: expected a request object"}}])");
  auto version = client.Call(R"({"jsonrpc":"1.0","id":3,"method":"health"})");
  EXPECT_EQ(version.at("error").at("code"), -32600);
  EXPECT_EQ(version.at("id"), 3);
}

TEST_F(ServerTest, BatchesAnswerEveryRequestMemberInOneArrayAndNotificationsNever) {
  auto server = StartServer();
  SocketClient client = server->Connect();
  ASSERT_TRUE(client.Send(
      R"([{"jsonrpc":"2.0","id":1,"method":"skills.invoke","params":{"skill":"contact","input":{"text":"x"}}},)"
      R"({"jsonrpc":"2.0","method":"skills.invoke","params":{"skill":"echo","input":{}}},)"
      R"({"jsonrpc":"2.0","id":2,"method":"skills.list"},)"
      R"(42])"
      "\n"));
  auto answer = client.ReadJson();
  ASSERT_TRUE(answer && answer->is_array()) << (answer ? Str(*answer) : "nothing");
  const auto& items = answer->as_array();
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[0].at("id"), 1);
  EXPECT_EQ(items[0].at("result").at("skill"), "contact");
  EXPECT_EQ(items[1].at("id"), 2);
  EXPECT_EQ(items[1].at("result").as_array().size(), 3u);
  EXPECT_EQ(items[2].at("error").at("code"), -32600);
  // A notification alone is never answered: the next answer is the health's.
  ASSERT_TRUE(client.Send(R"({"jsonrpc":"2.0","method":"health"})"
                          "\n"));
  auto next = client.Call(R"({"jsonrpc":"2.0","id":"h","method":"health"})");
  EXPECT_EQ(next.at("id"), "h");
  auto empty = client.Call("[]");
  EXPECT_EQ(empty.at("error").at("message"), "Invalid Request: empty batch");
}

TEST_F(ServerTest, ShowRequestOptionPutsEachRequestOnItsAttempt) {
  auto server = StartServer();
  SocketClient client = server->Connect();
  auto shown =
      client.Call(InvokeLine(1, "contact", R"({"text":"Ada Lovelace wrote to us"})", R"({"show_request": true})"));
  const json::object& attempt = shown.at("result").at("attempts").at(0).as_object();
  ASSERT_TRUE(attempt.contains("request")) << Str(shown);
  EXPECT_EQ(attempt.at("request").at("messages").as_array().back().at("role"), "user");
  EXPECT_EQ(attempt.at("request").at("response_format").at("type"), "json_schema");
  auto plain = client.Call(InvokeLine(2, "contact", R"({"text":"Ada Lovelace wrote to us"})"));
  EXPECT_FALSE(plain.at("result").at("attempts").at(0).as_object().contains("request"));
}

TEST_F(ServerTest, CancelAnswersTheInvocationCancelled) {
  auto server = StartServer();
  SocketClient client = server->Connect();
  ASSERT_TRUE(client.Send(InvokeLine(5, "stuck", R"({"text":"x"})")));
  std::this_thread::sleep_for(100ms);
  ASSERT_TRUE(client.Send(R"({"jsonrpc":"2.0","method":"$/cancel","params":{"id":5}})"
                          "\n"));
  auto answer = client.ReadJson(5s);
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->at("id"), 5);
  EXPECT_EQ(answer->at("error").at("code"), -32003);
  EXPECT_EQ(answer->at("error").at("data").at("code"), "CANCELLED");
  // The request that was in flight stays on record.
  const json::array& attempts = answer->at("error").at("data").at("attempts").as_array();
  ASSERT_EQ(attempts.size(), 1u) << Str(*answer);
  EXPECT_EQ(attempts[0].at("kind"), "cancelled");
  EXPECT_EQ(attempts[0].at("model"), "stuck-model");
  EXPECT_EQ(attempts[0].at("provider"), "stuck");
  EXPECT_GE(attempts[0].at("duration_ms").as_int64(), 50);
  EXPECT_EQ(answer->at("error").at("data").at("metrics").at("attempts"), 1);
  auto health = client.Call(R"({"jsonrpc":"2.0","id":1,"method":"health"})");
  EXPECT_EQ(health.at("result").at("in_flight"), 0);
}

TEST_F(ServerTest, BeyondTheInFlightLimitRequestsAreRefusedWithARetryHint) {
  server::ServerOptions options;
  options.limits.max_in_flight_per_connection = 2;
  auto server = StartServer(options);
  SocketClient client = server->Connect();
  for (int id = 1; id <= 3; ++id) ASSERT_TRUE(client.Send(InvokeLine(id, "stuck", R"({"text":"x"})")));
  auto refused = client.ReadJson();
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->at("id"), 3);
  EXPECT_EQ(refused->at("error").at("code"), -32000);
  EXPECT_EQ(refused->at("error").at("data").at("code"), "OVERLOADED");
  // Nothing has finished yet: about a second.
  EXPECT_EQ(refused->at("error").at("data").at("retry_after_ms"), 1000);
  auto health = client.Call(R"({"jsonrpc":"2.0","id":"h","method":"health"})");
  EXPECT_EQ(health.at("result").at("in_flight"), 2);
  EXPECT_EQ(health.at("result").at("limits").at("max_in_flight_per_connection"), 2);
}

TEST_F(ServerTest, AClientThatHangsUpCancelsItsInvocations) {
  auto server = StartServer();
  {
    SocketClient client = server->Connect();
    ASSERT_TRUE(client.Send(InvokeLine(1, "stuck", R"({"text":"x"})")));
    ASSERT_TRUE(client.Send(InvokeLine(2, "stuck", R"({"text":"y"})")));
    std::this_thread::sleep_for(100ms);
    EXPECT_EQ(server->server().metrics().in_flight(), 2);
  }
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (server->server().metrics().in_flight() != 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(server->server().metrics().in_flight(), 0);
  auto metrics = server->server().metrics().ToJson();
  EXPECT_EQ(metrics.at("skills").at("stuck").at("invocations").at("CANCELLED"), 2);
}

TEST_F(ServerTest, AClientThatDoesNotReadIsCutOffNotBuffered) {
  server::ServerOptions options;
  options.limits.max_write_queue_bytes = 256 * 1024;
  auto server = StartServer(options);
  SocketClient client = server->Connect();
  std::string big = R"({"blob":")" + std::string(32 * 1024, 'a') + R"("})";
  std::string lines;
  for (int id = 1; id <= 400; ++id) lines += InvokeLine(id, "echo", big);
  client.Send(lines);  // may fail part-way once the server hangs up
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (server->server().metrics().connections() != 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(server->server().metrics().connections(), 0);
  EXPECT_EQ(server->server().metrics().ToJson().at("rejected").at("slow_reader"), 1);
  // Others are unaffected.
  SocketClient other = server->Connect();
  EXPECT_EQ(other.Call(InvokeLine(1, "echo", R"({"a":1})")).at("result").at("output"), json::parse(R"({"a":1})"));
}

TEST_F(ServerTest, TheSocketIsForItsOwnerOnlyAndAStaleOneIsReplaced) {
  // A socket file left by a server that died: bound, never unlinked.
  auto path = tree_.Path("skillrunner.sock");
  {
    int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
    ::close(fd);
    ASSERT_TRUE(std::filesystem::exists(path));
  }
  auto server = StartServer();
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  // A second server on the same path is refused while the first lives.
  ServerFixture second(tree_);
  auto failure = second.Start();
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(*failure, "another server is listening on " + path.string() + "; stop it first or pick another --socket");
  server->Stop();
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST_F(ServerTest, ListDescribeHealthAndMetrics) {
  auto server = StartServer();
  SocketClient client = server->Connect();
  auto list = client.Call(R"({"jsonrpc":"2.0","id":1,"method":"skills.list"})");
  ASSERT_EQ(list.at("result").as_array().size(), 3u);
  EXPECT_EQ(list.at("result").at(0).at("id"), "contact");
  // sha256 of {"input":...,"output":...} with sorted members and no whitespace, as generated
  // clients compute it (Python: json.dumps(sort_keys=True, separators=(",", ":"))).
  EXPECT_EQ(list.at("result").at(0).at("schema_hash"),
            "sha256:4705deb498ed92d333eb1a9040d10ba6bcd719658427adea4b3c67c535399330");
  auto describe = client.Call(R"({"jsonrpc":"2.0","id":2,"method":"skills.describe","params":{"skill":"contact"}})");
  const auto& d = describe.at("result").as_object();
  EXPECT_EQ(d.at("output_schema").at("required").at(0), "name");
  EXPECT_EQ(d.at("input_schema").at("properties").at("text").at("type"), "string");
  EXPECT_EQ(d.at("output_mode"), "native");
  EXPECT_EQ(d.at("model"), "sim-model");
  client.Call(InvokeLine(3, "echo", R"({"a":1})"));
  auto metrics = client.Call(R"({"jsonrpc":"2.0","id":4,"method":"metrics"})");
  EXPECT_EQ(metrics.at("result").at("skills").at("echo").at("invocations").at("ok"), 1);
  std::string text(metrics.at("result").at("prometheus").as_string());
  EXPECT_NE(text.find("skillrunner_invocations_total{skill=\"echo\",outcome=\"ok\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("skillrunner_invocation_duration_seconds_count{skill=\"echo\"} 1\n"), std::string::npos);
  auto health = client.Call(R"({"jsonrpc":"2.0","id":5,"method":"health"})");
  EXPECT_EQ(health.at("result").at("skills"), 3);
  EXPECT_EQ(health.at("result").at("limits").at("max_line_bytes"), 1048576);
}

TEST_F(ServerTest, ReloadSwapsTheRegistryAndABrokenTreeKeepsTheOldOne) {
  auto server = StartServer();
  SocketClient client = server->Connect();
  tree_.Write("skills/echo2/skill.yaml",
              "id: echo2\nhandler: echo\ninput_schema: { type: object }\noutput_schema: { type: object }\n");
  auto reload = client.Call(R"({"jsonrpc":"2.0","id":1,"method":"skills.reload"})");
  EXPECT_EQ(reload.at("result").at("ok"), true);
  EXPECT_EQ(reload.at("result").at("skills"), 4);
  EXPECT_EQ(client.Call(InvokeLine(2, "echo2", "{}")).at("result").at("skill"), "echo2");

  tree_.Write("skills/broken/skill.yaml", "id: broken\nhandler: echo\ninput_schema: { type: object\n");
  auto failed = client.Call(R"({"jsonrpc":"2.0","id":3,"method":"skills.reload"})");
  EXPECT_EQ(failed.at("error").at("code"), -32002);
  EXPECT_EQ(failed.at("error").at("data").at("code"), "CONFIG_INVALID");
  const auto& diagnostic = failed.at("error").at("data").at("diagnostics").at(0).as_object();
  EXPECT_NE(std::string(diagnostic.at("file").as_string()).find("skills/broken/skill.yaml"), std::string::npos);
  EXPECT_EQ(client.Call(InvokeLine(4, "echo2", "{}")).at("result").at("skill"), "echo2");
}

TEST_F(ServerTest, TcpNeedsTheTokenWhenTheServerHasOne) {
  server::ServerOptions options;
  options.listen = {"127.0.0.1:0"};
  options.identity.admin_token = "s3cret-token";
  auto server = StartServer(options);
  auto client = SocketClient::ConnectTcp(server->server().tcp_ports().at(0));
  ASSERT_TRUE(client.has_value());
  auto refused = client->Call(R"({"jsonrpc":"2.0","id":1,"method":"skills.list"})");
  EXPECT_EQ(refused.at("error").at("code"), -32001);
  EXPECT_EQ(refused.at("error").at("data").at("code"), "UNAUTHORIZED");
  auto per_request = client->Call(R"({"jsonrpc":"2.0","id":2,"method":"skills.list","auth":"s3cret-token"})");
  EXPECT_TRUE(per_request.as_object().contains("result"));
  auto wrong = client->Call(R"({"jsonrpc":"2.0","id":3,"method":"auth","params":{"token":"guess"}})");
  EXPECT_EQ(wrong.at("error").at("code"), -32001);
  auto right = client->Call(R"({"jsonrpc":"2.0","id":4,"method":"auth","params":{"token":"s3cret-token"}})");
  // Three wrong guesses on one connection end it.
  auto guesser = SocketClient::ConnectTcp(server->server().tcp_ports().at(0));
  for (int i = 0; i < 3; ++i) guesser->Call(R"({"jsonrpc":"2.0","id":1,"method":"auth","params":{"token":"x"}})");
  EXPECT_TRUE(guesser->WaitForClose(5s));
  EXPECT_EQ(right.at("result").at("authenticated"), true);
  EXPECT_TRUE(client->Call(R"({"jsonrpc":"2.0","id":5,"method":"health"})").as_object().contains("result"));
  // The Unix socket's file mode is its access control: no token there.
  SocketClient local = server->Connect();
  EXPECT_TRUE(local.Call(R"({"jsonrpc":"2.0","id":6,"method":"health"})").as_object().contains("result"));
}

TEST_F(ServerTest, ANonLoopbackListenerRefusesToStartWithoutAllowRemoteAndAToken) {
  server::ServerOptions options;
  options.listen = {"0.0.0.0:0"};
  ServerFixture no_flag(tree_, options);
  EXPECT_EQ(no_flag.Start().value_or(""),
            "--listen 0.0.0.0:0 is not a loopback address; add --allow-remote to accept other hosts "
            "(clients then need SKILLRUNNER_TOKEN)");
  options.allow_remote = true;
  ServerFixture no_token(tree_, options);
  EXPECT_EQ(no_token.Start().value_or(""),
            "--listen 0.0.0.0:0 accepts other hosts, so it needs a token: set SKILLRUNNER_TOKEN in the "
            "server's environment (or give the config tenants)");
  EXPECT_FALSE(std::filesystem::exists(tree_.Path("skillrunner.sock")));
}

TEST_F(ServerTest, PrometheusEndpointServesMetricsOverHttp) {
  server::ServerOptions options;
  options.metrics_listen = "127.0.0.1:0";
  auto server = StartServer(options);
  SocketClient client = server->Connect();
  client.Call(InvokeLine(1, "echo", "{}"));
  auto http = SocketClient::ConnectTcp(server->server().metrics_port());
  ASSERT_TRUE(http.has_value());
  ASSERT_TRUE(http->Send("GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
  std::string response;
  while (auto line = http->ReadLine(5s)) response += *line + "\n";
  EXPECT_EQ(response.rfind("HTTP/1.1 200 OK", 0), 0u) << response;
  EXPECT_NE(response.find("Content-Type: text/plain; version=0.0.4"), std::string::npos);
  EXPECT_NE(response.find("skillrunner_invocations_total{skill=\"echo\",outcome=\"ok\"} 1"), std::string::npos);
  EXPECT_NE(response.find("skillrunner_in_flight 0"), std::string::npos);
}

TEST_F(ServerTest, ShutdownWaitsForInFlightInvocationsAndAnswersEachOnce) {
  auto server = StartServer();
  SocketClient client = server->Connect();
  for (int id = 1; id <= 5; ++id) ASSERT_TRUE(client.Send(InvokeLine(id, "contact", R"({"text":"x"})")));
  // All five in flight (each answers after 50 ms) before the stop: a fixed 20 ms was not enough for a
  // server under the sanitizers on a busy machine, which had not read them yet.
  for (auto deadline = std::chrono::steady_clock::now() + 5s;
       server->server().metrics().in_flight() < 5 && std::chrono::steady_clock::now() < deadline;) {
    std::this_thread::sleep_for(1ms);
  }
  ASSERT_EQ(server->server().metrics().in_flight(), 5);
  std::thread stopper([&] { server->Stop(); });
  std::map<std::string, int> answered;
  while (auto answer = client.ReadJson(5s)) {
    ++answered[Str(answer->at("id"))];
    EXPECT_TRUE(answer->as_object().contains("result")) << Str(*answer);
  }
  stopper.join();
  EXPECT_EQ(answered.size(), 5u);
  for (auto& [id, n] : answered) EXPECT_EQ(n, 1) << id;
  EXPECT_FALSE(std::filesystem::exists(tree_.Path("skillrunner.sock")));
}

TEST_F(ServerTest, AHangUpCancelsDownToTheProvidersHttpRequest) {
  test_support::LoopbackServer llm;
  test_support::ScriptedResponse slow;
  slow.delay = std::chrono::milliseconds(20000);
  slow.body = "{}";
  llm.SetDefault(slow);
  testing::WriteServerTree(tree_, "  http: { kind: openai, base_url: \"" + llm.base_url() + "\" }\n");
  std::string config = R"(providers:
  http: { kind: openai, base_url: ")" +
                       llm.base_url() + R"(" }
models:
  http-model: { provider: http, structured_output: native }
default_provider: http
)";
  tree_.Write("skillrunner.yaml", config);
  tree_.Write("skills/remote/skill.yaml", R"(id: remote
model: http-model
template_type: LLM_JSON_GENERATION
input_schema: { type: object }
output_schema: { type: object, required: [name], properties: { name: { type: string } } }
prompt: { user: "Say a name." }
)");
  auto server = StartServer();
  {
    SocketClient client = server->Connect();
    ASSERT_TRUE(client.Send(InvokeLine(1, "remote", "{}")));
    auto deadline = std::chrono::steady_clock::now() + 5s;
    while (llm.request_count() == 0 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(5ms);
    ASSERT_EQ(llm.request_count(), 1u);
  }
  // The provider's connection is closed long before its 20 s answer.
  EXPECT_TRUE(llm.WaitForClosedConnections(1, std::chrono::milliseconds(5000)));
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (server->server().metrics().in_flight() != 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(server->server().metrics().ToJson().at("skills").at("remote").at("invocations").at("CANCELLED"), 1);
}

TEST_F(ServerTest, IdleConnectionsAreClosed) {
  server::ServerOptions options;
  options.limits.idle_timeout = std::chrono::milliseconds(100);
  auto server = StartServer(options);
  SocketClient client = server->Connect();
  EXPECT_TRUE(client.Call(R"({"jsonrpc":"2.0","id":1,"method":"health"})").as_object().contains("result"));
  EXPECT_TRUE(client.WaitForClose(5s));
}

TEST_F(ServerTest, HostileRequestsGetErrorsAndTheOthersOnTheConnectionStillSucceed) {
  auto server = StartServer();
  SocketClient client = server->Connect();
  ASSERT_TRUE(client.Send(InvokeLine(1, "contact", R"({"text":"x"})")));
  ASSERT_TRUE(client.Send(InvokeLine(2, "echo", "{}", R"({"timeout_ms": 18446744073709551615})")));
  ASSERT_TRUE(client.Send(InvokeLine(3, "echo", "{}", R"({"seed": -1})")));
  ASSERT_TRUE(client.Send(std::string(200, '[') + std::string(200, ']') + "\n"));
  ASSERT_TRUE(client.Send("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"h\xff\"}\n"));
  ASSERT_TRUE(client.Send(InvokeLine(1, "contact", R"({"text":"dup"})")));
  std::map<std::string, std::string> by_id;
  std::vector<std::string> anonymous;
  for (int i = 0; i < 6; ++i) {
    auto answer = client.ReadJson();
    ASSERT_TRUE(answer.has_value()) << i;
    std::string text = Str(*answer);
    if (answer->at("id").is_null()) {
      anonymous.push_back(text);
    } else {
      by_id[Str(answer->at("id"))] += text;
    }
  }
  EXPECT_NE(by_id["2"].find("/options/timeout_ms: expected an integer from 1 to 86400000"), std::string::npos)
      << by_id["2"];
  EXPECT_NE(by_id["3"].find("/options/seed: expected a non-negative integer"), std::string::npos) << by_id["3"];
  // id 1: the duplicate is refused, the original answered once with its result.
  EXPECT_NE(by_id["1"].find("Invalid Request: id 1 is already in flight on this connection"), std::string::npos);
  EXPECT_NE(by_id["1"].find(R"("result":{"skill":"contact")"), std::string::npos) << by_id["1"];
  ASSERT_EQ(anonymous.size(), 2u);  // too deep; invalid UTF-8
  for (const auto& text : anonymous) EXPECT_NE(text.find("-32700"), std::string::npos) << text;
  EXPECT_TRUE(client.Call(R"({"jsonrpc":"2.0","id":9,"method":"health"})").as_object().contains("result"));
}

TEST_F(ServerTest, OverLongBatchesAndExtraConnectionsAreRefused) {
  server::ServerOptions options;
  options.limits.max_batch = 3;
  options.limits.max_connections = 1;
  auto server = StartServer(options);
  SocketClient client = server->Connect();
  auto answer =
      client.Call(R"([{"jsonrpc":"2.0","id":1,"method":"health"},{"jsonrpc":"2.0","id":2,"method":"health"},)"
                  R"({"jsonrpc":"2.0","id":3,"method":"health"},{"jsonrpc":"2.0","id":4,"method":"health"}])");
  EXPECT_EQ(answer.at("error").at("message"), "Invalid Request: a batch of 4 requests is over the limit of 3");
  SocketClient second = server->Connect();
  EXPECT_TRUE(second.WaitForClose(5s));
  EXPECT_TRUE(client.Call(R"({"jsonrpc":"2.0","id":5,"method":"health"})").as_object().contains("result"));
  EXPECT_EQ(server->server().metrics().ToJson().at("rejected").at("max_connections"), 1);
}

TEST_F(ServerTest, AnInvocationInFlightFinishesOnTheRegistryItStartedWith) {
  auto server = StartServer();
  SocketClient client = server->Connect();
  std::filesystem::remove_all(tree_.Path("skills/contact"));
  ASSERT_TRUE(client.Send(InvokeLine(1, "contact", R"({"text":"x"})") +
                          R"({"jsonrpc":"2.0","id":2,"method":"skills.reload"})"
                          "\n"));
  std::map<std::string, json::value> answers;
  for (int i = 0; i < 2; ++i) {
    auto answer = client.ReadJson();
    ASSERT_TRUE(answer.has_value());
    answers[Str(answer->at("id"))] = *answer;
  }
  EXPECT_EQ(answers["2"].at("result").at("skills"), 2);
  EXPECT_EQ(answers["1"].at("result").at("skill"), "contact");
  auto after = client.Call(InvokeLine(3, "contact", R"({"text":"x"})"));
  EXPECT_EQ(after.at("error").at("data").at("code"), "SKILL_NOT_FOUND");
}

TEST_F(ServerTest, ATcpClientThatClosesCancelsItsInvocations) {
  server::ServerOptions options;
  options.listen = {"127.0.0.1:0"};
  auto server = StartServer(options);
  {
    auto client = SocketClient::ConnectTcp(server->server().tcp_ports().at(0));
    ASSERT_TRUE(client.has_value());
    ASSERT_TRUE(client->Send(InvokeLine(1, "stuck", R"({"text":"x"})")));
    auto deadline = std::chrono::steady_clock::now() + 5s;
    while (server->server().metrics().in_flight() != 1 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(5ms);
    }
    ASSERT_EQ(server->server().metrics().in_flight(), 1);
  }
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (server->server().metrics().in_flight() != 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(server->server().metrics().ToJson().at("skills").at("stuck").at("invocations").at("CANCELLED"), 1);
}

TEST_F(ServerTest, UnknownSkillsShareOneMetricsLabel) {
  auto server = StartServer();
  SocketClient client = server->Connect();
  client.Call(InvokeLine(1, "no-such-skill-1", "{}"));
  client.Call(InvokeLine(2, "no-such-skill-2", "{}"));
  auto skills = server->server().metrics().ToJson().at("skills").as_object();
  EXPECT_EQ(skills.size(), 1u);
  EXPECT_EQ(skills.at("_unknown").at("invocations").at("SKILL_NOT_FOUND"), 2);
}

TEST_F(ServerTest, AKeepAliveMetricsScraperDoesNotHoldUpShutdown) {
  server::ServerOptions options;
  options.metrics_listen = "127.0.0.1:0";
  auto server = StartServer(options);
  auto scraper = SocketClient::ConnectTcp(server->server().metrics_port());
  ASSERT_TRUE(scraper.has_value());
  ASSERT_TRUE(scraper->Send("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"));
  ASSERT_TRUE(scraper->ReadLine(5s).has_value());  // the status line: the connection is open and kept alive
  auto start = std::chrono::steady_clock::now();
  server->Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
  EXPECT_TRUE(scraper->WaitForClose(1s));
}

TEST_F(ServerTest, ASocketGroupMakesTheSocketGroupAccessible) {
  struct group* own = ::getgrgid(::getegid());
  ASSERT_NE(own, nullptr);
  server::ServerOptions options;
  options.socket_group = own->gr_name;
  auto server = StartServer(options);
  struct stat st {};
  ASSERT_EQ(::stat(tree_.Path("skillrunner.sock").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0660u);
  EXPECT_EQ(st.st_gid, own->gr_gid);
  server::ServerOptions unknown;
  unknown.socket_path = tree_.Path("other.sock").string();
  unknown.socket_group = "no-such-group-xyz";
  ServerFixture bad(tree_, unknown);
  EXPECT_EQ(bad.Start().value_or(""), "--socket-group: no group named \"no-such-group-xyz\"");
}

TEST_F(ServerTest, ListenerMistakesAreNamedAndNothingIsLeftOpen) {
  tree_.Write("not-a-socket", "x");
  auto start_error = [&](server::ServerOptions options) {
    ServerFixture fixture(tree_, std::move(options));
    return fixture.Start().value_or("(started)");
  };
  server::ServerOptions o;
  o.socket_path = tree_.Path("not-a-socket").string();
  EXPECT_EQ(start_error(o), o.socket_path + " exists and is not a socket; refusing to replace it");
  o.socket_path = tree_.Path(std::string(120, 'a')).string();
  EXPECT_EQ(start_error(o),
            "--socket path is too long for a Unix socket (" + std::to_string(o.socket_path.size()) + " bytes)");
  o.socket_path = tree_.Path("no-such-folder/s.sock").string();
  EXPECT_EQ(start_error(o), "cannot bind " + o.socket_path + ": No such file or directory");
  for (auto [listen, message] : std::vector<std::pair<std::string, std::string>>{
           {"8080", "--listen 8080: expected HOST:PORT, got \"8080\""},
           {"[::1]8080", "--listen [::1]8080: expected [IPv6]:PORT, got \"[::1]8080\""},
           {"127.0.0.1:99999", "--listen 127.0.0.1:99999: bad port in \"127.0.0.1:99999\" (0-65535)"},
           {"example.com:80",
            "--listen example.com:80: \"example.com\" is not an IP address (give a numeric address)"}}) {
    server::ServerOptions bad;
    bad.socket_path = tree_.Path("s.sock").string();
    bad.listen = {listen};
    EXPECT_EQ(start_error(bad), message);
    EXPECT_FALSE(std::filesystem::exists(bad.socket_path)) << listen;
  }
  server::ServerOptions metrics;
  metrics.socket_path = tree_.Path("s.sock").string();
  metrics.metrics_listen = "0.0.0.0:0";
  EXPECT_EQ(start_error(metrics),
            "--metrics-listen 0.0.0.0:0 is not a loopback address; add --allow-remote to "
            "expose metrics to other hosts");
  boost::asio::io_context io;
  cli::ReloadingHost host(cli::CommonOptions{}, io.get_executor());
  server::Server bare(io, server::ServerOptions{}, host);
  auto started = bare.Start();
  ASSERT_FALSE(started);
  EXPECT_EQ(started.error().code, ErrorCode::kConfigInvalid);
  EXPECT_EQ(started.error().message, "nothing to listen on: give --socket PATH and/or --listen HOST:PORT");
}

// Options that cannot work are CONFIG_INVALID; what the system refuses is
// INTERNAL. `serve` exits 2 for both.
TEST_F(ServerTest, AStartFailureSaysWhetherTheOptionsOrTheSystemRefused) {
  boost::asio::io_context io;
  cli::ReloadingHost host(cli::CommonOptions{}, io.get_executor());
  auto start = [&](server::ServerOptions options) -> std::optional<ErrorCode> {
    server::Server server(io, std::move(options), host);
    auto started = server.Start();
    if (started) return std::nullopt;
    return started.error().code;
  };
  server::ServerOptions bad_listen;
  bad_listen.listen = {"8080"};
  EXPECT_EQ(start(bad_listen), ErrorCode::kConfigInvalid);
  server::ServerOptions no_folder;
  no_folder.socket_path = tree_.Path("no-such-folder/s.sock").string();
  EXPECT_EQ(start(no_folder), ErrorCode::kInternal);
  EXPECT_EQ(net::ParseListenAddress("127.0.0.1:x").error().code, ErrorCode::kConfigInvalid);
}

TEST_F(ServerTest, TheTotalInFlightLimitAndADrainRefuseNewInvocations) {
  server::ServerOptions options;
  options.limits.max_in_flight_total = 1;
  options.limits.drain_timeout = std::chrono::milliseconds(300);
  auto server = StartServer(options);
  SocketClient first = server->Connect();
  SocketClient second = server->Connect();
  ASSERT_TRUE(first.Send(InvokeLine(1, "stuck", R"({"text":"x"})")));
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (server->server().metrics().in_flight() != 1 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(5ms);
  }
  const char* const at_the_limit = "overloaded: the server has 1 invocations in flight (max_in_flight_total)";
  auto refused = second.Call(InvokeLine(2, "echo", "{}"));
  EXPECT_EQ(refused.at("error").at("message"), at_the_limit);
  server->server().Shutdown();
  // Shutdown() posts the drain to the server's strand (and the drain closes idle
  // connections): until it has begun, an invoke is refused by the in-flight limit.
  deadline = std::chrono::steady_clock::now() + 5s;
  int id = 3;
  json::value draining = first.Call(InvokeLine(id, "echo", "{}"));
  while (draining.at("error").at("message") == at_the_limit && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(1ms);
    draining = first.Call(InvokeLine(++id, "echo", "{}"));
  }
  EXPECT_EQ(draining.at("error").at("message"), "the server is shutting down and takes no new invocations");
  EXPECT_EQ(draining.at("error").at("data").at("code"), "OVERLOADED");
  auto cancelled = first.ReadJson(5s);
  ASSERT_TRUE(cancelled.has_value());
  EXPECT_EQ(cancelled->at("id"), 1);
  EXPECT_EQ(cancelled->at("error").at("data").at("code"), "CANCELLED");
}

}  // namespace
}  // namespace skillrunner
