// What a real `skillrunner serve` answers over a real socket holds to
// schemas/: each method's result, every error the server gives with its
// data, batch arrays, `$/cancel` as a request and as a notification.
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <map>

#include "tests/docs/protocol_schemas.h"
#include "tests/docs/protocol_tree.h"
#include "tests/runner/server/serve_process.h"
#include "tests/runner/server/server_fixture.h"
#include "tests/support/child_process.h"
#include "tests/support/llm_test_bed.h"
#include "tests/support/loopback_server.h"

namespace skillrunner {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;
using testing::InvokeLine;
using testing::SchemaViolations;
using testing::SocketClient;

constexpr const char* kToken = "protocol-test-token";

std::string Line(int id, const std::string& method, const std::string& params = "") {
  std::string line = R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":")" + method + "\"";
  if (!params.empty()) line += R"(,"params":)" + params;
  return line + "}";
}

// The file stem of a method's schemas.
std::string Stem(const std::string& method) { return method == "$/cancel" ? "cancel" : method; }

// An answer's violations of the schemas: a result against METHOD's result
// schema, an error's data against error-data (and the error's own members).
std::string Violations(const std::string& method, const json::value& answer) {
  if (!answer.is_object()) return "not an answer: " + json::serialize(answer);
  const json::object& object = answer.as_object();
  if (object.at("jsonrpc") != "2.0" || !object.contains("id")) return "not JSON-RPC 2.0: " + json::serialize(answer);
  if (const json::value* result = object.if_contains("result")) {
    return SchemaViolations(Stem(method) + ".result.schema.json", *result);
  }
  const json::object& error = object.at("error").as_object();
  for (const auto& [key, value] : error) {
    if (key != "code" && key != "message" && key != "data") return "error member " + std::string(key);
  }
  if (!error.at("code").is_int64() || !error.at("message").is_string()) return "error: " + json::serialize(error);
  const json::value* data = error.if_contains("data");
  if (data == nullptr) return "";
  if (const json::value* message = data->as_object().if_contains("message");
      message && *message != error.at("message")) {
    return "data.message differs from message: " + json::serialize(error);
  }
  return SchemaViolations("error-data.schema.json", *data);
}

class ProtocolSocketAnswersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    llm_.SetDefault({.status = 400,
                     .body = test_support::OpenAiError("Unsupported value: 'temperature'", "invalid_request_error",
                                                       "temperature")});
    testing::WriteProtocolTree(tree_, llm_.base_url());
    socket_ = tree_.Path("s.sock").string();
    port_ = test_support::FreeLoopbackPort();
    serve_.emplace(tree_,
                   std::vector<std::string>{"--socket", socket_, "--listen", "127.0.0.1:" + std::to_string(port_),
                                            "--allow-broken", "--max-in-flight-per-connection", "2", "--max-batch", "5",
                                            "--max-line-bytes", "65536"},
                   std::vector<std::string>{std::string("SKILLRUNNER_TOKEN=") + kToken});
    auto client = testing::ConnectWhenReady(socket_);
    ASSERT_TRUE(client) << serve_->Stderr();
    client_.emplace(std::move(*client));
  }

  // Reads answers until every id of `ids` has one (10 s at most).
  std::map<std::int64_t, json::value> AnswersFor(std::vector<std::int64_t> ids) {
    std::map<std::int64_t, json::value> answers;
    while (answers.size() < ids.size()) {
      auto answer = client_->ReadJson(10s);
      if (!answer) break;
      answers[answer->at("id").as_int64()] = *answer;
    }
    return answers;
  }

  test_support::LoopbackServer llm_;
  testing::TempTree tree_;
  std::string socket_;
  std::uint16_t port_ = 0;
  std::optional<testing::ServeProcess> serve_;
  std::optional<SocketClient> client_;
};

TEST_F(ProtocolSocketAnswersTest, InvokeResultsAndEachInvocationErrorHoldToTheSchemas) {
  json::value ok = client_->Call(InvokeLine(1, "contact", R"({"text":"Ann"})", R"({"show_request":true,"seed":7})"));
  EXPECT_EQ(Violations("skills.invoke", ok), "");
  EXPECT_TRUE(ok.at_pointer("/result/attempts/0").as_object().contains("request")) << json::serialize(ok);
  struct Case {
    std::string skill, input, options, code;
    int jsonrpc;
  };
  const std::vector<Case> cases = {
      {"contact", R"({"text":1})", "", "INPUT_INVALID", -32002},
      {"nobody", "{}", "", "SKILL_NOT_FOUND", -32002},
      {"broken", R"({"text":"x"})", "", "CONFIG_INVALID", -32002},
      {"invalid", R"({"text":"x"})", "", "MAX_RETRIES_EXCEEDED", -32004},
      {"remote", R"({"text":"x"})", "", "PROVIDER_ERROR", -32003},
      {"failing", "{}", "", "HANDLER_FAILED", -32003},
      {"slow", R"({"text":"x"})", R"({"timeout_ms":100})", "TIMEOUT", -32003},
      {"limited", R"({"text":"x"})", "", "OVERLOADED", -32000},
  };
  for (const auto& c : cases) {
    std::string line = InvokeLine(2, c.skill, c.input, c.options);
    line.pop_back();
    json::value answer = client_->Call(line);
    EXPECT_EQ(Violations("skills.invoke", answer), "") << c.skill;
    EXPECT_EQ(answer.at_pointer("/error/code"), c.jsonrpc) << json::serialize(answer);
    EXPECT_EQ(answer.at_pointer("/error/data/code"), c.code.c_str()) << json::serialize(answer);
  }
  // PROVIDER_ERROR carries what the provider said.
  json::value remote = client_->Call(Line(3, "skills.invoke", R"({"skill":"remote","input":{"text":"x"}})"));
  EXPECT_EQ(
      remote.at_pointer("/error/data/details"),
      json::parse(R"({"http_status":400,"provider_type":"invalid_request_error","provider_param":"temperature"})"))
      << json::serialize(remote);
}

TEST_F(ProtocolSocketAnswersTest, CancelAsARequestAndAsANotificationAndTheRefusalPastTheLimit) {
  ASSERT_TRUE(client_->Send(InvokeLine(1, "slow", R"({"text":"x"})")));
  ASSERT_TRUE(client_->Send(InvokeLine(2, "slow", R"({"text":"x"})")));
  json::value refused = client_->Call(Line(3, "skills.invoke", R"({"skill":"slow","input":{"text":"x"}})"));
  EXPECT_EQ(Violations("skills.invoke", refused), "");
  EXPECT_EQ(refused.at_pointer("/error/data/code"), "OVERLOADED") << json::serialize(refused);
  EXPECT_EQ(refused.at_pointer("/error/data/retry_after_ms"), 1000) << json::serialize(refused);

  json::value cancel = client_->Call(Line(10, "$/cancel", R"({"id":1})"));
  EXPECT_EQ(Violations("$/cancel", cancel), "");
  EXPECT_EQ(cancel.at("result"), json::parse(R"({"cancelled":true})"));
  ASSERT_TRUE(client_->Send(R"({"jsonrpc":"2.0","method":"$/cancel","params":{"id":2}})"
                            "\n"));
  ASSERT_TRUE(client_->Send(Line(11, "$/cancel", R"({"id":99})") + "\n"));
  auto answers = AnswersFor({1, 2, 11});
  ASSERT_EQ(answers.size(), 3u);  // nothing for the notification
  for (std::int64_t id : {1, 2}) {
    EXPECT_EQ(Violations("skills.invoke", answers[id]), "") << id;
    EXPECT_EQ(answers[id].at_pointer("/error/data/code"), "CANCELLED") << json::serialize(answers[id]);
    EXPECT_EQ(answers[id].at_pointer("/error/data/attempts/0/kind"), "cancelled") << json::serialize(answers[id]);
  }
  EXPECT_EQ(Violations("$/cancel", answers[11]), "");
  EXPECT_EQ(answers[11].at("result"), json::parse(R"({"cancelled":false})"));
}

TEST_F(ProtocolSocketAnswersTest, BatchArraysAndProtocolErrorsHoldToTheSchemas) {
  json::value batch =
      client_->Call("[" + Line(1, "skills.invoke", R"({"skill":"echo","input":{"a":1}})") + "," +
                    Line(2, "skills.invoke", R"({"skill":"nobody","input":{}})") + R"(,{"jsonrpc":"1.0","id":3},)" +
                    R"({"jsonrpc":"2.0","method":"health"},)" + Line(4, "skills.list") + "]");
  ASSERT_TRUE(batch.is_array()) << json::serialize(batch);
  ASSERT_EQ(batch.as_array().size(), 4u) << json::serialize(batch);
  const std::vector<std::string> methods = {"skills.invoke", "skills.invoke", "", "skills.list"};
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(Violations(methods[i], batch.as_array()[i]), "") << i;
  EXPECT_EQ(batch.at_pointer("/2/error/code"), -32600);

  const std::vector<std::pair<std::string, int>> errors = {
      {R"({"jsonrpc":"2.0","id":5,"method":)", -32700},
      {"[" + Line(1, "health") + "," + Line(2, "health") + "," + Line(3, "health") + "," + Line(4, "health") + "," +
           Line(5, "health") + "," + Line(6, "health") + "]",
       -32600},
      {Line(6, "skills.explode"), -32601},
      {Line(7, "skills.invoke", R"({"skill":"echo","input":{},"options":{"timeout_ms":0,"colour":1}})"), -32602},
      {Line(8, "skills.describe", R"({"skill":"nobody"})"), -32002},
      {std::string(70000, ' ') + Line(9, "health"), -32600},
  };
  for (const auto& [line, code] : errors) {
    json::value answer = client_->Call(line);
    EXPECT_EQ(Violations("", answer), "") << line.substr(0, 120);
    EXPECT_EQ(answer.at_pointer("/error/code"), code) << json::serialize(answer);
  }
}

TEST_F(ProtocolSocketAnswersTest, EveryOtherMethodsResultHoldsToItsSchema) {
  json::value discover = client_->Call(Line(1, "rpc.discover"));
  EXPECT_EQ(Violations("rpc.discover", discover), "");
  std::vector<std::string> files = testing::SchemaFiles();
  for (const auto& method : discover.at_pointer("/result/methods").as_array()) {
    for (const char* part : {".params.schema.json", ".result.schema.json"}) {
      std::string file = Stem(std::string(method.as_string())) + part;
      EXPECT_NE(std::find(files.begin(), files.end(), file), files.end()) << file;
    }
  }
  client_->Call(InvokeLine(2, "echo", "{}").substr(0, InvokeLine(2, "echo", "{}").size() - 1));
  for (const std::string method : {"skills.list", "health", "metrics"}) {
    EXPECT_EQ(Violations(method, client_->Call(Line(3, method))), "") << method;
  }
  json::value described = client_->Call(Line(4, "skills.describe", R"({"skill":"contact"})"));
  EXPECT_EQ(Violations("skills.describe", described), "");
  EXPECT_EQ(Violations("skills.describe", client_->Call(Line(4, "skills.describe", R"({"skill":"echo"})"))), "");
  json::value health = client_->Call(Line(5, "health"));
  EXPECT_EQ(health.at_pointer("/result/status"), "degraded");  // `broken` did not load

  auto tcp = SocketClient::ConnectTcp(port_);
  ASSERT_TRUE(tcp);
  json::value refused = tcp->Call(Line(6, "health"));
  EXPECT_EQ(Violations("health", refused), "");
  EXPECT_EQ(refused.at_pointer("/error/data/code"), "UNAUTHORIZED") << json::serialize(refused);
  json::value auth = tcp->Call(Line(7, "auth", std::string(R"({"token":")") + kToken + "\"}"));
  EXPECT_EQ(Violations("auth", auth), "");
  EXPECT_EQ(Violations("health", tcp->Call(Line(8, "health"))), "");

  json::value reloaded = client_->Call(Line(9, "skills.reload"));
  EXPECT_EQ(Violations("skills.reload", reloaded), "");
  EXPECT_EQ(reloaded.at_pointer("/result/failed").as_array().size(), 1u) << json::serialize(reloaded);
  tree_.Write("skillrunner.yaml", "providers: [not, a, map]\n");
  json::value failed = client_->Call(Line(10, "skills.reload"));
  EXPECT_EQ(Violations("skills.reload", failed), "");
  EXPECT_EQ(failed.at_pointer("/error/data/code"), "CONFIG_INVALID") << json::serialize(failed);
}

}  // namespace
}  // namespace skillrunner
