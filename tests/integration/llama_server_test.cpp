// The integration suite against a real OpenAI-compatible server nobody on the
// project wrote: llama.cpp's llama-server with a tiny random-weight model
// (tests/support/llama_server.h; scripts/realllm/setup.sh builds it). Every test
// skips, saying why, where the server has not been built.
#include "tests/support/llama_server.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <fstream>
#include <sstream>
#include <thread>

#include "runner/tree/config.h"
#include "runner/tree/skill_registry.h"
#include "tests/support/cli_runner.h"
#include "tests/support/temp_tree.h"

namespace skillrunner {
namespace {
namespace json = boost::json;
using test_support::LlamaServer;
using test_support::Skillrunner;

// One provider, `llama`, at the server; every model of the shipped tree and
// the suite's own run on it in the mode its name says.
std::string Config(const LlamaServer& server) {
  return "providers:\n  llama: { kind: openai, base_url: \"" + server.base_url() +
         "\", max_tokens_field: max_tokens }\n"
         "models:\n"
         "  gpt-4o-mini: { provider: llama, structured_output: native }\n"
         "  claude-sonnet-4-5: { provider: llama, structured_output: native }\n"
         "  llama3.1:8b: { provider: llama, structured_output: none }\n"
         "  tiny-native: { provider: llama, structured_output: native }\n"
         "  tiny-json: { provider: llama, structured_output: json_object }\n"
         "  tiny-loop: { provider: llama, structured_output: none }\n";
}

// Every value an enum: the server's grammar then yields only valid answers
// (it does not enforce numeric bounds), so native runs succeed every time.
constexpr const char* kTicketSchema =
    "{ type: object, required: [priority, category], additionalProperties: false,"
    "  properties: { priority: { enum: [1, 2, 3, 4] }, category: { enum: [bug, billing] } } }";

std::string TicketSkill(const std::string& model, int max_output_tokens = 48, const std::string& extra = "",
                        double temperature = 0.7) {
  return "id: ticket\ntemplate_type: LLM_JSON_GENERATION\nmodel: " + model +
         "\ntemperature: " + std::to_string(temperature) + "\nmax_output_tokens: " + std::to_string(max_output_tokens) +
         "\nprompt: { system: \"You triage tickets.\", user: \"Ticket: {{input.text}}\" }\n"
         "input_schema: { type: object, required: [text], properties: { text: { type: string } } }\n"
         "output_schema: " +
         std::string(kTicketSchema) + "\n" + extra;
}

class LlamaServerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!LlamaServer::Missing().empty()) return;
    logs_ = new testing::TempTree();
    server_ = new LlamaServer(logs_->Path("shared"), 4096);
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
    delete logs_;
    logs_ = nullptr;
  }
  void SetUp() override {
    if (std::string missing = LlamaServer::Missing(); !missing.empty())
      GTEST_SKIP() << "llama-server suite skipped: " << missing;
    ASSERT_TRUE(server_->started()) << server_->why();
    tree_.Write("skillrunner.yaml", Config(*server_));
  }
  // `skillrunner ARGS` in the tree, its JSON answer; `ok`: whether it should succeed.
  json::value Run(const std::string& args, bool ok) {
    auto result = Skillrunner(tree_.root(), args);
    EXPECT_EQ(result.status == 0, ok) << result.status << ": " << result.out;
    boost::system::error_code ec;
    json::value answer = json::parse(result.out, ec);
    EXPECT_FALSE(ec) << result.out;
    return answer;
  }

  static testing::TempTree* logs_;
  static LlamaServer* server_;
  testing::TempTree tree_;
};
testing::TempTree* LlamaServerTest::logs_ = nullptr;
LlamaServer* LlamaServerTest::server_ = nullptr;

// Every strict wire schema skillrunner makes for the shipped skills, their
// judges and the test schemas below compiles to a grammar on the server: a
// 400 would be a schema we send that a real server cannot take.
TEST_F(LlamaServerTest, EveryStrictSchemaWeSendCompilesOnTheServer) {
  tree_.Write("skills/listed/skill.yaml",
              "id: listed\ntemplate_type: LLM_JSON_GENERATION\nmodel: tiny-native\nprompt: { user: x }\n"
              "input_schema: {}\noutput_schema: { type: array, minItems: 1, uniqueItems: true, "
              "items: { enum: [bug, billing] } }\n");
  tree_.Write("skills/contact/skill.yaml", R"(id: contact
template_type: LLM_JSON_GENERATION
model: tiny-native
prompt: { user: x }
input_schema: {}
output_schema:
  type: object
  definitions:
    phone: { type: string, pattern: "^[+0-9 ]{5,20}$" }
  required: [name]
  properties:
    name: { type: string, maxLength: 200 }
    phones: { type: array, items: { $ref: "#/definitions/phone" } }
    kind: { anyOf: [{ enum: [person, company] }, { type: "null" }] }
    when: { type: string, format: date }
    tags: { type: array, items: { type: string }, maxItems: 3 }
)");
  auto config = LoadConfig(tree_.Path("skillrunner.yaml").string(), [](std::string_view) { return std::nullopt; });
  ASSERT_TRUE(config) << config.error()[0].ToString();
  std::vector<json::value> wires;
  for (const auto& skills_dir : {std::filesystem::path(SKILLRUNNER_SOURCE_DIR) / "skills", tree_.Path("skills")}) {
    RegistryOptions options;
    options.skills_dir = skills_dir;
    options.rubrics_dir = std::filesystem::path(SKILLRUNNER_SOURCE_DIR) / "rubrics";
    options.is_known_handler = [](std::string_view name) { return name == "exec" || name == "echo"; };
    auto loaded = SkillRegistry::Load(options, *config);
    for (const auto& d : loaded.diagnostics) {
      if (d.severity == Diagnostic::Severity::kError) ADD_FAILURE() << d.ToString();
    }
    for (const auto& skill : loaded.registry->skills()) {
      if (skill->generation && !skill->generation->schema->strict_wire.is_null()) {
        wires.push_back(skill->generation->schema->strict_wire);
      }
      if (skill->judge && !skill->judge->generation.schema->strict_wire.is_null()) {
        wires.push_back(skill->judge->generation.schema->strict_wire);
      }
    }
  }
  ASSERT_GE(wires.size(), 5u);
  for (const json::value& wire : wires) {
    json::object body{{"model", "tiny"},
                      {"messages", json::array{json::object{{"role", "user"}, {"content", "Answer."}}}},
                      {"max_tokens", 4},
                      {"response_format",
                       json::object{{"type", "json_schema"},
                                    {"json_schema", json::object{{"name", "t"}, {"schema", wire}, {"strict", true}}}}}};
    auto answer = test_support::PlainHttp(server_->port(), "POST", "/v1/chat/completions", json::serialize(body));
    EXPECT_EQ(answer.status, 200) << json::serialize(wire) << "\n" << answer.body;
  }
}

// Native strict output: the grammar makes the answer JSON of the schema's
// shape; usage comes from the server, not estimated.
TEST_F(LlamaServerTest, NativeStrictOutputRunsAndReportsTheServersUsage) {
  // 400 tokens: the grammar lets a random-weight model pad the object with whitespace, and
  // its answers varied between runs even with a seed (once 48 tokens were not enough).
  tree_.Write("skills/ticket/skill.yaml", TicketSkill("tiny-native", 400));
  json::value answer = Run("run ticket --seed 7 --input '{\"text\": \"login broken\"}'", true);
  const json::value& output = answer.at("output");
  ASSERT_TRUE(output.is_object());
  EXPECT_GE(output.at("priority").as_int64(), 1);
  EXPECT_LE(output.at("priority").as_int64(), 4);
  EXPECT_EQ(answer.at("metrics").at("mode"), "native_strict");
  const json::value& attempt = answer.at("attempts").at(0);
  EXPECT_EQ(attempt.at("kind"), "ok");
  EXPECT_GT(attempt.at("input_tokens").as_int64(), 0);
  EXPECT_GT(attempt.at("output_tokens").as_int64(), 0);
  EXPECT_FALSE(attempt.as_object().contains("tokens_estimated"));
  // The same request again: the server serves its prompt from the cache and says so.
  json::value again = Run("run ticket --seed 7 --input '{\"text\": \"login broken\"}'", true);
  const json::value& cached = again.at("attempts").at(0);
  ASSERT_TRUE(cached.as_object().contains("cached_input_tokens")) << json::serialize(cached);
  EXPECT_GT(cached.at("cached_input_tokens").as_int64(), 0);
  EXPECT_LE(cached.at("cached_input_tokens").as_int64(), cached.at("input_tokens").as_int64());
  EXPECT_EQ(again.at("metrics").at("cached_input_tokens"), cached.at("cached_input_tokens"));
}

// JSON mode: any JSON object; whatever the model says of the schema is
// checked and fed back, never a parse failure.
TEST_F(LlamaServerTest, JsonModeAlwaysAnswersJson) {
  tree_.Write("skills/ticket/skill.yaml", TicketSkill("tiny-json"));
  auto result = Skillrunner(tree_.root(), "run ticket --input '{\"text\": \"refund\"}'");
  json::value answer = json::parse(result.out);
  const json::value& attempts = answer.is_object() && answer.as_object().contains("error")
                                    ? answer.at("error").at("attempts")
                                    : answer.at("attempts");
  for (const auto& attempt : attempts.as_array()) {
    EXPECT_NE(attempt.at("kind"), "parse") << json::serialize(attempt);
    EXPECT_NE(attempt.at("kind"), "provider_error") << json::serialize(attempt);
  }
}

// The validation loop on a model that answers word salad: two requests,
// then MAX_RETRIES_EXCEEDED with both attempts, the second colder.
TEST_F(LlamaServerTest, TheLoopRetriesOnceColderThenGivesUp) {
  tree_.Write("skills/ticket/skill.yaml", TicketSkill("tiny-loop", 200));
  json::value answer = Run("run ticket --input '{\"text\": \"refund\"}'", false);
  const json::value& error = answer.at("error");
  const std::string code(error.at("code").as_string());
  EXPECT_TRUE(code == "MAX_RETRIES_EXCEEDED" || code == "TRUNCATED") << json::serialize(error);
  if (code == "MAX_RETRIES_EXCEEDED") {
    ASSERT_EQ(error.at("attempts").as_array().size(), 2u);
    EXPECT_EQ(error.at("attempts").at(1).at("temperature"), 0.2);
  }
}

// A budget too small: TRUNCATED, saying how many tokens came.
TEST_F(LlamaServerTest, ASmallBudgetIsTruncatedWithTheTokensThatCame) {
  tree_.Write("skills/ticket/skill.yaml", TicketSkill("tiny-native", 3));
  json::value answer = Run("run ticket --input '{\"text\": \"refund\"}'", false);
  EXPECT_EQ(answer.at("error").at("code"), "TRUNCATED");
  EXPECT_EQ(answer.at("error").at("message"), "the answer was cut off after 3 output tokens (max_output_tokens 3)");
}

// A context window the prompt and answer fill before the budget: `length`
// after fewer tokens than the budget, and the message says what may have
// happened. (The grammar of 300 numbers cannot end within 256 tokens.)
TEST_F(LlamaServerTest, AFullContextWindowIsTruncatedBeforeTheBudgetAndSaysSo) {
  LlamaServer small(tree_.Path("small"), 256);
  ASSERT_TRUE(small.started()) << small.why();
  tree_.Write("skillrunner.yaml", Config(small));
  tree_.Write("skills/numbers/skill.yaml",
              "id: numbers\ntemplate_type: LLM_JSON_GENERATION\nmodel: tiny-native\nmax_output_tokens: 1024\n"
              "prompt: { user: \"Count.\" }\ninput_schema: {}\n"
              "output_schema: { type: array, minItems: 300, items: { type: integer } }\n");
  json::value answer = Run("run numbers --input '{}'", false);
  const std::string message(answer.at("error").at("message").as_string());
  EXPECT_EQ(answer.at("error").at("code"), "TRUNCATED") << message;
  EXPECT_NE(message.find("(max_output_tokens 1024); the prompt and answer may have filled the model's context window"),
            std::string::npos)
      << message;
}

// A timed-out invocation hangs up, and the server frees the slot: its log
// says "cancel task". (The grammar of 300 numbers keeps it busy for seconds.)
TEST_F(LlamaServerTest, ATimedOutInvocationFreesTheServersSlot) {
  tree_.Write("skills/numbers/skill.yaml",
              "id: numbers\ntemplate_type: LLM_JSON_GENERATION\nmodel: tiny-native\nmax_output_tokens: 4000\n"
              "timeout_ms: 300\nprompt: { user: \"Count.\" }\ninput_schema: {}\n"
              "output_schema: { type: array, minItems: 300, items: { type: integer } }\n");
  json::value answer = Run("run numbers --input '{}'", false);
  EXPECT_EQ(answer.at("error").at("code"), "TIMEOUT") << json::serialize(answer);
  bool cancelled = false;
  for (int i = 0; i < 100 && !cancelled; ++i) {
    cancelled = server_->Log().find("cancel task") != std::string::npos;
    if (!cancelled) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const std::string log = server_->Log();
  EXPECT_TRUE(cancelled) << log.substr(log.size() > 3000 ? log.size() - 3000 : 0);
  // The slot is free: the next invocation is answered.
  tree_.Write("skills/ticket/skill.yaml", TicketSkill("tiny-native"));
  Run("run ticket --input '{\"text\": \"refund\"}'", true);
}

// `run --stream` of each line: the notifications before the last line, and
// the last line (the result or the error).
std::pair<std::vector<json::value>, json::value> StreamLines(const std::string& out) {
  std::vector<json::value> lines;
  std::stringstream in(out);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(json::parse(line));
  }
  if (lines.empty()) return {};
  json::value last = lines.back();
  lines.pop_back();
  return {lines, last};
}

// Streaming with native json_schema: the server's SSE chunks grow the answer
// token by token; the last partial is the output, usage is the server's.
TEST_F(LlamaServerTest, StreamingNativeStrictOutputGrowsToTheResult) {
  tree_.Write("skills/ticket/skill.yaml", TicketSkill("tiny-native", 400));
  auto result = Skillrunner(tree_.root(), "run ticket --seed 7 --stream --input '{\"text\": \"login broken\"}'");
  ASSERT_EQ(result.status, 0) << result.out;
  auto [events, answer] = StreamLines(result.out);
  ASSERT_GE(events.size(), 2u) << result.out;  // more than one piece: it streamed
  for (const json::value& event : events) {
    EXPECT_EQ(event.at("method"), "skills.partial") << json::serialize(event);
    EXPECT_EQ(event.at("params").at("id"), json::value(nullptr));
    EXPECT_EQ(event.at("params").at("attempt"), json::value(1));
  }
  EXPECT_EQ(events.back().at("params").at("value"), answer.at("output"));
  EXPECT_EQ(events.back().at("params").at("complete").as_array().back(), "");
  const json::value& attempt = answer.at("attempts").at(0);
  EXPECT_GT(attempt.at("output_tokens").as_int64(), 0);
  EXPECT_FALSE(attempt.as_object().contains("tokens_estimated")) << json::serialize(attempt);
}

// Streaming the validation loop: whatever the model writes, each attempt's
// partials come before its reset, and the retry's after it.
TEST_F(LlamaServerTest, StreamingTheLoopResetsBeforeTheRetrysPartials) {
  tree_.Write("skills/ticket/skill.yaml", TicketSkill("tiny-loop", 200));
  auto result = Skillrunner(tree_.root(), "run ticket --stream --input '{\"text\": \"refund\"}'");
  auto [events, answer] = StreamLines(result.out);
  ASSERT_TRUE(answer.is_object()) << result.out;
  int shown = 0;
  for (const json::value& event : events) {
    const std::int64_t attempt = event.at("params").at("attempt").as_int64();
    if (event.at("method") == "skills.reset") {
      EXPECT_EQ(attempt, shown) << result.out;
      shown = 0;
    } else {
      EXPECT_TRUE(shown == 0 || shown == attempt) << result.out;
      shown = static_cast<int>(attempt);
    }
  }
  if (result.status != 0) {
    EXPECT_TRUE(answer.as_object().contains("error")) << result.out;
  }
}

// A small eval run end to end: every case recorded, no run error.
TEST_F(LlamaServerTest, ASmallEvalRunRecordsEveryCase) {
  tree_.Write("skills/ticket/skill.yaml", TicketSkill("tiny-native"));
  tree_.Write("skills/ticket/cases.jsonl",
              "{\"id\": \"a\", \"input\": {\"text\": \"login broken\"}}\n"
              "{\"id\": \"b\", \"input\": {\"text\": \"refund please\"}}\n"
              "{\"id\": \"c\", \"input\": {\"text\": \"app crashes\"}}\n");
  tree_.Write("suite.yaml", "id: small\nconcurrency: 2\nskills:\n  - skill: ticket\n");
  auto result = Skillrunner(tree_.root(), "eval suite.yaml --out out", "2>&1");
  EXPECT_NE(result.status, 2) << result.out;
  std::ifstream results(tree_.Path("out/results.jsonl"));
  int records = 0;
  for (std::string line; std::getline(results, line);) {
    if (line.empty()) continue;
    ++records;
    json::value record = json::parse(line);
    EXPECT_FALSE(record.as_object().contains("judge_error")) << line;
  }
  EXPECT_EQ(records, 3);
}

}  // namespace
}  // namespace skillrunner
