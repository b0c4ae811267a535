#pragma once

// A SkillRunner whose LLM skills run on a real openai- or anthropic-kind
// provider that talks over loopback to a scripted LoopbackServer (or another
// test server with a base_url(), such as SseServer); the
// transient backoff's sleeper records the delays asked of it instead of
// sleeping. Skills and the config are real YAML in a temporary tree.

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <memory>
#include <string>
#include <vector>

#include "runner/skill_runner.h"
#include "runner/skill_services.h"
#include "services/common/clock.h"
#include "services/handler/process_runner.h"
#include "services/providers/set/provider_set.h"
#include "tests/support/loopback_server.h"
#include "tests/support/temp_tree.h"

namespace skillrunner::test_support {

inline constexpr const char* kTestApiKey = "sk-test-SECRET-4f9a8b7c6d5e";

// Real time, but waits are recorded instead of slept. With `advance`, a wait
// moves the clock on by its length at once, as if it had been slept.
class RecordingSleeper : public Clock {
 public:
  std::vector<std::int64_t> delays;
  bool advance = false;
  TimePoint Now() const override { return RealClock().Now() + slept_; }
  boost::asio::awaitable<bool> Sleep(std::chrono::milliseconds delay) override {
    delays.push_back(delay.count());
    if (advance) slept_ += delay;
    co_return true;
  }

 private:
  std::chrono::milliseconds slept_{0};
};

// A chat.completion body (valid against OpenAI's response schema).
inline std::string OpenAiAnswer(const std::string& content, const std::string& finish = "stop", int prompt_tokens = 20,
                                int completion_tokens = 10) {
  boost::json::object message{{"role", "assistant"}, {"content", content}, {"refusal", nullptr}};
  boost::json::object body{
      {"id", "chatcmpl-test"},
      {"object", "chat.completion"},
      {"created", 1767225600},
      {"model", "test-model"},
      {"choices", boost::json::array{boost::json::object{
                      {"index", 0}, {"message", message}, {"logprobs", nullptr}, {"finish_reason", finish}}}},
      {"usage", boost::json::object{{"prompt_tokens", prompt_tokens},
                                    {"completion_tokens", completion_tokens},
                                    {"total_tokens", prompt_tokens + completion_tokens}}}};
  return boost::json::serialize(body);
}

inline std::string OpenAiRefusal(const std::string& refusal) {
  boost::json::value body = boost::json::parse(OpenAiAnswer("", "stop"));
  auto& message = body.at("choices").at(0).at("message").as_object();
  message["content"] = nullptr;
  message["refusal"] = refusal;
  return boost::json::serialize(body);
}

inline std::string OpenAiError(const std::string& message, const std::string& type, const std::string& param = "") {
  boost::json::object error{{"message", message},
                            {"type", type},
                            {"param", param.empty() ? boost::json::value(nullptr) : boost::json::value(param)},
                            {"code", nullptr}};
  return boost::json::serialize(boost::json::object{{"error", error}});
}

template <typename Server>
class BasicLlmTestBed {
 public:
  BasicLlmTestBed() = default;

  Server& server() { return server_; }
  RecordingSleeper& sleeper() { return sleeper_; }
  testing::TempTree& tree() { return tree_; }

  void AddSkill(const std::string& id, const std::string& yaml) { tree_.Write("skills/" + id + "/skill.yaml", yaml); }

  // Loads the tree with a config whose models m-loop, m-json, m-native and m-tool
  // run on one provider of `kind` at the loopback server.
  // `more_models`: further lines of the models table.
  void Start(const std::string& kind = "openai", const std::string& more_models = "") {
    tree_.Write("skillrunner.yaml", "providers:\n  llm: { kind: " + kind + ", base_url: \"" + server_.base_url() +
                                        (kind == "openai" ? "/v1" : "") +
                                        "\" }\nmodels:\n  m-loop: { provider: llm, structured_output: none }\n"
                                        "  m-json: { provider: llm, structured_output: json_object }\n"
                                        "  m-native: { provider: llm, structured_output: native }\n"
                                        "  m-tool: { provider: llm, structured_output: tool }\n" +
                                        more_models);
    auto env = [](std::string_view name) -> std::optional<std::string> {
      if (name == "OPENAI_API_KEY" || name == "ANTHROPIC_API_KEY" || name == "GEMINI_API_KEY") {
        return std::string(kTestApiKey);
      }
      return std::nullopt;
    };
    auto config = LoadConfig(tree_.Path("skillrunner.yaml").string(), env);
    ASSERT_TRUE(config) << config.error()[0].ToString();
    RegistryOptions options;
    options.skills_dir = tree_.Path("skills");
    options.rubrics_dir = tree_.Path("rubrics");
    auto loaded = SkillRegistry::Load(options, *config);
    for (const auto& d : loaded.diagnostics) {
      if (d.severity == Diagnostic::Severity::kError) ADD_FAILURE() << d.ToString();
    }
    auto set = providers::ProviderSet::Create(config->providers, io_.get_executor(), env);
    ASSERT_TRUE(set) << set.error().message;
    providers_ = std::move(*set);
    runner_ = std::make_unique<SkillRunner>(loaded.registry, sleeper_);
    auto lookup = [set = providers_.get()](std::string_view name) { return set->Find(name); };
    InstallServices(*runner_, ServiceDeps{lookup, process_runner_, downgrades_, sessions_});
  }

  SkillRunner& runner() { return *runner_; }

  InvocationOutcome Invoke(const std::string& skill, const std::string& input, InvocationOptions options = {}) {
    auto future = boost::asio::co_spawn(io_, runner_->Invoke(skill, boost::json::parse(input), std::move(options)),
                                        boost::asio::use_future);
    io_.restart();
    io_.run();
    return future.get();
  }

  // The JSON bodies the server received, in order.
  std::vector<boost::json::value> Bodies() const {
    std::vector<boost::json::value> out;
    for (const auto& r : server_.requests()) out.push_back(boost::json::parse(r.body));
    return out;
  }

 private:
  Server server_;
  testing::TempTree tree_;
  boost::asio::io_context io_;
  RecordingSleeper sleeper_;
  handler::AsioProcessRunner process_runner_;
  generation::ModelDowngrades downgrades_;
  generation::SessionMemory sessions_;
  std::unique_ptr<providers::ProviderSet> providers_;
  std::unique_ptr<SkillRunner> runner_;
};

using LlmTestBed = BasicLlmTestBed<LoopbackServer>;

}  // namespace skillrunner::test_support
