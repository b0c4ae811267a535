#include "runner/tree/config.h"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>

#include "services/providers/limited_provider.h"
#include "services/providers/set/provider_set.h"
#include "services/state/redis.h"
#include "services/state/request_limiter.h"
#include "tests/support/temp_tree.h"

namespace skillrunner {
namespace {

std::optional<std::string> NoEnv(std::string_view) { return std::nullopt; }

TEST(ConfigTest, LoadsProvidersModelsAndDefaults) {
  testing::TempTree tree;
  auto path = tree.Write("skillrunner.yaml", R"(providers:
  openai: { kind: openai }
  local: { kind: simulated }
models:
  gpt-4o-mini: { provider: openai, structured_output: native }
default_provider: local
)");
  auto config = LoadConfig(path.string(), NoEnv);
  ASSERT_TRUE(config) << config.error()[0].ToString();
  EXPECT_EQ(config->providers.at("openai").base_url, "https://api.openai.com/v1");
  EXPECT_EQ(config->providers.at("openai").api_key_env, "OPENAI_API_KEY");
  EXPECT_EQ(config->ProviderFor("gpt-4o-mini"), "openai");
  EXPECT_EQ(config->StructuredOutputFor("gpt-4o-mini"), OutputMode::kNative);
  EXPECT_EQ(config->ProviderFor("unknown-model"), "local");
  EXPECT_EQ(config->StructuredOutputFor("unknown-model"), OutputMode::kNone);
}

TEST(ConfigTest, RateLimitsSetEachProvidersCeilingAndItsLimiterStartsThere) {
  testing::TempTree tree;
  auto path = tree.Write("skillrunner.yaml", R"(providers:
  openai: { kind: openai }
  other: { kind: openai, base_url: "http://127.0.0.1:9/v1" }
rate_limits:
  openai: { requests_per_minute: 120, tokens_per_minute: 90000 }
)");
  auto config = LoadConfig(path.string(), NoEnv);
  ASSERT_TRUE(config) << config.error()[0].ToString();
  EXPECT_EQ(config->rate_limits.at("openai"), (state::RateLimit{120, 90000}));
  EXPECT_FALSE(config->rate_limits.contains("other"));
  boost::asio::io_context io;
  auto set = providers::ProviderSet::Create(config->providers, io.get_executor(), NoEnv, RealClock(),
                                            [&](const std::vector<std::string>& entries) {
                                              return std::make_shared<state::RequestLimiter>(
                                                  providers::AccountLimit(config->rate_limits, entries), RealClock());
                                            });
  ASSERT_TRUE(set) << set.error().message;
  auto* limited = dynamic_cast<providers::LimitedProvider*>((*set)->Find("openai"));
  ASSERT_NE(limited, nullptr);
  EXPECT_EQ(limited->limiter().rate_per_minute(), 120);
  auto* learned = dynamic_cast<providers::LimitedProvider*>((*set)->Find("other"));
  ASSERT_NE(learned, nullptr);
  EXPECT_FALSE(learned->limiter().rate_per_minute().has_value());

  auto bad = LoadConfig(tree.Write("bad.yaml",
                                   "providers:\n  openai: { kind: openai }\nrate_limits:\n"
                                   "  opena: { requests_per_minute: 60 }\n")
                            .string(),
                        NoEnv);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error()[0].ToString(),
            tree.Path("bad.yaml").string() + ":4:3: /rate_limits/opena: unknown provider \"opena\"");
}

TEST(ConfigTest, StateAndTenantsAreReadAndABadRedisUrlIsPlaced) {
  testing::TempTree tree;
  auto path = tree.Write("skillrunner.yaml", R"(providers:
  openai: { kind: openai }
state:
  redis: redis://:secret@127.0.0.1:6390/2
  replicas_hint: 3
  namespace: team-x
  timeout_ms: 40
tenants:
  team-a: { token_env: TEAM_A_TOKEN, requests_per_minute: 600, max_in_flight: 64 }
  team-b: { token_env: TEAM_B_TOKEN }
)");
  auto config = LoadConfig(path.string(), NoEnv);
  ASSERT_TRUE(config) << config.error()[0].ToString();
  EXPECT_EQ(config->state.redis, "redis://:secret@127.0.0.1:6390/2");
  EXPECT_EQ(config->state.replicas_hint, 3);
  EXPECT_EQ(config->state.key_namespace, "team-x");
  EXPECT_EQ(config->state.timeout, std::chrono::milliseconds(40));
  EXPECT_EQ(config->tenants.at("team-a").token_env, "TEAM_A_TOKEN");
  EXPECT_EQ(config->tenants.at("team-a").quota, (state::Quota{600, 64}));
  EXPECT_EQ(config->tenants.at("team-b").quota, (state::Quota{}));
  auto url = state::ParseRedisUrl(config->state.redis);
  ASSERT_TRUE(url) << url.error().message;
  EXPECT_EQ(url->Display(), "redis://127.0.0.1:6390/2");  // never the password
  EXPECT_EQ(url->password, "secret");

  auto bad = LoadConfig(tree.Write("bad.yaml",
                                   "providers:\n  openai: { kind: openai }\nstate:\n"
                                   "  redis: redis://127.0.0.1:6379/zero\n")
                            .string(),
                        NoEnv);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error()[0].ToString(), tree.Path("bad.yaml").string() +
                                           ":4:10: /state/redis: the redis URL's path must be a database number, "
                                           "not \"/zero\"");
  auto tls = LoadConfig(tree.Write("tls.yaml",
                                   "providers:\n  openai: { kind: openai }\nstate:\n"
                                   "  redis: rediss://cache.internal:6380\n")
                            .string(),
                        NoEnv);
  ASSERT_FALSE(tls);
  EXPECT_EQ(tls.error()[0].ToString(),
            tree.Path("tls.yaml").string() +
                ":4:10: /state/redis: rediss:// (Redis over TLS) is not supported: Debian 12's hiredis has no TLS; run "
                "a TLS sidecar such as stunnel next to each replica and give its local redis:// address "
                "(docs/operations.md)");
}

TEST(ConfigTest, BaseUrlEnvironmentOverridesEveryProviderOfThatKind) {
  testing::TempTree tree;
  auto path = tree.Write("c.yaml", "providers:\n  a: { kind: openai, base_url: 'https://x.example/v1' }\n");
  auto env = [](std::string_view name) -> std::optional<std::string> {
    if (name == "OPENAI_BASE_URL") return "http://127.0.0.1:9/v1";
    return std::nullopt;
  };
  auto config = LoadConfig(path.string(), env);
  ASSERT_TRUE(config);
  EXPECT_EQ(config->providers.at("a").base_url, "http://127.0.0.1:9/v1");
}

TEST(ConfigTest, ErrorsNameFileLineAndColumn) {
  testing::TempTree tree;
  auto path = tree.Write("c.yaml", R"(providers:
  openai: { kind: opnai }
models:
  m: { provider: nowhere }
default_provider: missing
)");
  auto config = LoadConfig(path.string(), NoEnv);
  ASSERT_FALSE(config);
  ASSERT_EQ(config.error().size(), 1u);
  EXPECT_EQ(config.error()[0].ToString(),
            path.string() +
                ":2:19: /providers/openai/kind: expected one of "
                "[\"openai\",\"anthropic\",\"gemini\",\"bedrock\",\"vertex\",\"simulated\"], found \"opnai\"");
}

TEST(ConfigTest, AzureSettingsAreOpenAiKindOnlyAndEachMisplacedKeyIsPlaced) {
  testing::TempTree tree;
  auto good = tree.Write("good.yaml", R"(providers:
  azure: { kind: openai, base_url: "https://res.openai.azure.com/openai/deployments/dep",
           auth_header: api-key, query: { api-version: "2024-10-21" }, api_key_env: AZURE_OPENAI_API_KEY }
)");
  auto config = LoadConfig(good.string(), NoEnv);
  ASSERT_TRUE(config) << config.error()[0].ToString();
  EXPECT_EQ(config->providers.at("azure").settings.at("auth_header"), "api-key");
  auto bad = tree.Write("bad.yaml", R"(providers:
  claude: { kind: anthropic, auth_header: api-key }
  sim: { kind: simulated, query: { a: b } }
  gw: { kind: openai, auth_header: x-key }
)");
  auto refused = LoadConfig(bad.string(), NoEnv);
  ASSERT_FALSE(refused);
  std::vector<std::string> lines;
  for (const auto& d : refused.error()) lines.push_back(d.ToString());
  EXPECT_EQ(lines, (std::vector<std::string>{bad.string() + ":4:36: /providers/gw/auth_header: expected one of "
                                                            "[\"authorization\",\"api-key\"], found \"x-key\""}));
  auto misplaced = tree.Write("misplaced.yaml", R"(providers:
  claude: { kind: anthropic, auth_header: api-key }
  sim: { kind: simulated, query: { a: b } }
)");
  refused = LoadConfig(misplaced.string(), NoEnv);
  ASSERT_FALSE(refused);
  lines.clear();
  for (const auto& d : refused.error()) lines.push_back(d.ToString());
  EXPECT_EQ(lines, (std::vector<std::string>{
                       misplaced.string() + ":2:30: /providers/claude/auth_header: only openai providers take "
                                            "\"auth_header\" (this one is anthropic)",
                       misplaced.string() + ":3:27: /providers/sim/query: only openai providers take \"query\" "
                                            "(this one is simulated)"}));
}

TEST(ConfigTest, GeminiHasItsDefaultsAndItsBaseUrlVariable) {
  testing::TempTree tree;
  auto path = tree.Write("skillrunner.yaml", "providers:\n  gemini: { kind: gemini }\n");
  auto config = LoadConfig(path.string(), NoEnv);
  ASSERT_TRUE(config) << config.error()[0].ToString();
  EXPECT_EQ(config->providers.at("gemini").base_url, "https://generativelanguage.googleapis.com");
  EXPECT_EQ(config->providers.at("gemini").api_key_env, "GEMINI_API_KEY");
  auto env = [](std::string_view name) -> std::optional<std::string> {
    if (name == "GEMINI_BASE_URL") return std::string("http://127.0.0.1:9999");
    return std::nullopt;
  };
  auto overridden = LoadConfig(path.string(), env);
  ASSERT_TRUE(overridden);
  EXPECT_EQ(overridden->providers.at("gemini").base_url, "http://127.0.0.1:9999");
}

TEST(ConfigTest, FallbacksAndEscalationsNameOtherModelsOfTheTable) {
  testing::TempTree tree;
  auto good = tree.Write("good.yaml", R"(providers:
  openai: { kind: openai }
models:
  small: { provider: openai, fallbacks: [backup], escalate_to: large }
  backup: { provider: openai }
  large: { provider: openai, structured_output: native }
)");
  auto config = LoadConfig(good.string(), NoEnv);
  ASSERT_TRUE(config) << config.error()[0].ToString();
  EXPECT_EQ(config->models.at("small").fallbacks, std::vector<std::string>{"backup"});
  EXPECT_EQ(config->models.at("small").escalate_to, "large");
  auto bad = tree.Write("bad.yaml", R"(providers:
  openai: { kind: openai }
models:
  small: { provider: openai, fallbacks: [small, bakcup], escalate_to: huge }
)");
  auto refused = LoadConfig(bad.string(), NoEnv);
  ASSERT_FALSE(refused);
  std::vector<std::string> lines;
  for (const auto& d : refused.error()) lines.push_back(d.ToString());
  EXPECT_EQ(lines,
            (std::vector<std::string>{
                bad.string() + ":4:42: /models/small/fallbacks/0: a model cannot fall back or escalate to itself",
                bad.string() + ":4:49: /models/small/fallbacks/1: unknown model \"bakcup\" (not in the models table)",
                bad.string() + ":4:71: /models/small/escalate_to: unknown model \"huge\" (not in the models table)"}));
}

// design.md §11.5: on_refusal names other models of the table, checked like fallbacks.
TEST(ConfigTest, OnRefusalNamesOtherModelsOfTheTable) {
  testing::TempTree tree;
  auto config = LoadConfig(tree.Write("good.yaml", R"(providers:
  openai: { kind: openai }
models:
  small: { provider: openai, on_refusal: [other, third] }
  other: { provider: openai }
  third: { provider: openai }
)")
                               .string(),
                           NoEnv);
  ASSERT_TRUE(config) << config.error()[0].ToString();
  EXPECT_EQ(config->models.at("small").on_refusal, (std::vector<std::string>{"other", "third"}));
  EXPECT_TRUE(config->models.at("other").on_refusal.empty());
  auto bad = tree.Write("bad.yaml", R"(providers:
  openai: { kind: openai }
models:
  small: { provider: openai, on_refusal: [small, nope] }
)");
  auto refused = LoadConfig(bad.string(), NoEnv);
  ASSERT_FALSE(refused);
  std::vector<std::string> lines;
  for (const auto& d : refused.error()) lines.push_back(d.ToString());
  EXPECT_EQ(lines,
            (std::vector<std::string>{
                bad.string() + ":4:43: /models/small/on_refusal/0: a model cannot fall back or escalate to itself",
                bad.string() + ":4:50: /models/small/on_refusal/1: unknown model \"nope\" (not in the models table)"}));
}

TEST(ConfigTest, UnknownProviderReferencesAreErrors) {
  testing::TempTree tree;
  auto path = tree.Write("c.yaml", R"(providers:
  openai: { kind: openai }
models:
  m: { provider: nowhere }
default_provider: missing
)");
  auto config = LoadConfig(path.string(), NoEnv);
  ASSERT_FALSE(config);
  ASSERT_EQ(config.error().size(), 2u);
  EXPECT_EQ(config.error()[0].ToString(), path.string() + ":4:18: /models/m/provider: unknown provider \"nowhere\"");
  EXPECT_EQ(config.error()[1].ToString(), path.string() + ":5:19: /default_provider: unknown provider \"missing\"");
}

TEST(ConfigTest, SimulatedFaultScriptsAreCheckedWithTheirPointer) {
  testing::TempTree tree;
  auto path = tree.Write("c.yaml", R"(providers:
  sim:
    kind: simulated
    faults:
      - { skill: a, attempt: 1, fault: rate_limit, status: 404 }
)");
  auto config = LoadConfig(path.string(), NoEnv);
  ASSERT_FALSE(config);
  ASSERT_EQ(config.error().size(), 1u);
  EXPECT_EQ(config.error()[0].ToString().substr(path.string().size()),
            ":5:60: /providers/sim/faults/0/status: not used by fault \"rate_limit\"");
}

TEST(ConfigTest, ProviderOverrideRoutesEveryModel) {
  Config config = BuiltinConfig();
  config.providers["openai"] = ProviderConfig{"openai", "openai", "", "", {}};
  config.models["gpt"] = ModelConfig{"gpt", "openai", OutputMode::kNative, {}, {}, {}};
  ASSERT_TRUE(ApplyProviderOverride(config, "simulated"));
  EXPECT_EQ(config.ProviderFor("gpt"), "simulated");
  EXPECT_EQ(config.StructuredOutputFor("gpt"), OutputMode::kNative);
  auto bad = ApplyProviderOverride(config, "nope");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ErrorCode::kConfigInvalid);
  EXPECT_EQ(bad.error().message,
            "--provider: unknown provider \"nope\" (the config (built-in) defines none by that name)");
}

}  // namespace
}  // namespace skillrunner
