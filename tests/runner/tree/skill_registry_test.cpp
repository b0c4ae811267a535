#include "runner/tree/skill_registry.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <filesystem>

#include "tests/support/temp_tree.h"

namespace skillrunner {
namespace {
namespace json = boost::json;

class SkillRegistryTest : public ::testing::Test {
 protected:
  // Loads the tree and returns every diagnostic as "skills/x/skill.yaml:L:C: msg".
  std::vector<std::string> Load(Config config = BuiltinConfig()) {
    RegistryOptions options;
    options.skills_dir = tree_.Path("skills");
    options.rubrics_dir = tree_.Path("rubrics");
    options.is_known_handler = [](std::string_view name) { return name == "echo"; };
    auto loaded = SkillRegistry::Load(options, std::move(config));
    registry_ = loaded.registry;
    std::vector<std::string> out;
    std::string prefix = tree_.root().string() + "/";
    for (const auto& d : loaded.diagnostics) {
      std::string text = d.ToString();
      for (std::size_t at; (at = text.find(prefix)) != std::string::npos;) text.erase(at, prefix.size());
      out.push_back(text);
    }
    return out;
  }

  void WriteGoodSkill() {
    tree_.Write("skills/good/skill.yaml",
                "id: good\nhandler: echo\ninput_schema: { type: object }\noutput_schema: { type: object }\n");
  }

  testing::TempTree tree_;
  std::shared_ptr<const SkillRegistry> registry_;
};

TEST_F(SkillRegistryTest, BrokenFilesAreAllReportedWhileGoodSkillsLoad) {
  WriteGoodSkill();
  tree_.Write("skills/broken_yaml/skill.yaml",
              "id: broken_yaml\nhandler: echo\ninput_schema: { type: object\noutput_schema: { type: object }\n");
  tree_.Write("skills/magic/skill.yaml", "id: magic\nmodel: gpt-4o-mini\ntemplate_type: LLM_MAGIC\n");
  tree_.Write("skills/bad_schema/skill.yaml", R"(id: bad_schema
handler: echo
input_schema: { type: object }
output_schema:
  type: object
  properties:
    name: { type: strin }
    age: { minimum: "zero" }
)");
  tree_.Write("skills/typo/skill.yaml", R"(id: typo
template_type: LLM_JSON_GENERATION
modle: gpt-4o-mini
)");

  EXPECT_EQ(
      Load(),
      (std::vector<std::string>{
          "skills/bad_schema/skill.yaml:7:19: output_schema at /properties/name/type is not a valid "
          "JSON Schema: unknown type \"strin\" (expected array, boolean, integer, null, number, object or string)",
          "skills/bad_schema/skill.yaml:8:21: output_schema at /properties/age/minimum is not a valid "
          "JSON Schema: expected number, found string \"zero\"",
          "skills/broken_yaml/skill.yaml:4:14: YAML syntax error: end of map flow not found",
          "skills/magic/skill.yaml:3:16: /template_type: expected one of "
          "[\"LLM_JSON_GENERATION\",\"LLM_REVIEW\"], found \"LLM_MAGIC\"",
          "skills/typo/skill.yaml:3:1: /modle: unexpected property \"modle\" (did you mean \"model\"?)",
      }));
  ASSERT_EQ(registry_->skills().size(), 1u);
  EXPECT_EQ(registry_->skills()[0]->id, "good");
  EXPECT_NE(registry_->FindSkill("good"), nullptr);
  EXPECT_EQ(registry_->FindSkill("magic"), nullptr);
}

TEST_F(SkillRegistryTest, SchemaFilesResolveRelativeToTheSkillFolderWithPositions) {
  tree_.Write("skills/s/skill.yaml",
              "id: s\nhandler: echo\ninput_schema: schemas/in.json\noutput_schema: schemas/missing.json\n");
  tree_.Write("skills/s/schemas/in.json", "{\n  \"type\": \"object\",\n  \"required\": \"name\"\n}\n");
  auto diagnostics = Load();
  ASSERT_EQ(diagnostics.size(), 2u);
  EXPECT_EQ(diagnostics[0],
            "skills/s/schemas/in.json:3:15: input_schema at /required is not a valid JSON Schema: "
            "expected array, found string \"name\"");
  EXPECT_EQ(diagnostics[1],
            "skills/s/skill.yaml:4:16: /output_schema: cannot load schema file "
            "skills/s/schemas/missing.json: cannot read file");
}

// Found by the skill_yaml fuzzer: `$ref: object` (for `type: object`) as the
// whole output schema made `validate` overflow its stack.
TEST_F(SkillRegistryTest, ARootRefToARelativeDocumentIsAnErrorAndTheOtherSkillsLoad) {
  tree_.Write("skills/ref/skill.yaml",
              "id: ref\nhandler: echo\ninput_schema: { type: object }\n"
              "output_schema:\n  $ref: object\n");
  tree_.Write("skills/good/skill.yaml",
              "id: good\nhandler: echo\ninput_schema: { type: object }\n"
              "output_schema: { type: object }\n");
  EXPECT_EQ(Load(),
            (std::vector<std::string>{
                "skills/ref/skill.yaml:5:3: output_schema is not a valid JSON Schema: unresolvable $ref \"object\" at "
                "the root: a relative URI names no document here (a place in this schema is \"#/...\")"}));
  ASSERT_EQ(registry_->skills().size(), 1u);
  EXPECT_EQ(registry_->skills()[0]->id, "good");
}

TEST_F(SkillRegistryTest, ASchemaFileThatIsADeviceOrADirectoryIsAnErrorNotAnEndlessRead) {
  tree_.Write("skills/s/skill.yaml", "id: s\nhandler: echo\ninput_schema: /dev/zero\noutput_schema: schemas\n");
  tree_.Write("skills/s/schemas/out.json", "{}\n");
  auto diagnostics = Load();
  ASSERT_EQ(diagnostics.size(), 2u);
  EXPECT_EQ(diagnostics[0],
            "skills/s/skill.yaml:3:15: /input_schema: cannot load schema file "
            "/dev/zero: not a regular file");
  EXPECT_EQ(diagnostics[1],
            "skills/s/skill.yaml:4:16: /output_schema: cannot load schema file "
            "skills/s/schemas: not a regular file");
}

TEST_F(SkillRegistryTest, ASchemaFileOverSixteenMebibytesIsRefusedUnread) {
  tree_.Write("skills/s/skill.yaml", "id: s\nhandler: echo\ninput_schema: {}\noutput_schema: big.json\n");
  tree_.Write("skills/s/big.json", "{}");
  std::filesystem::resize_file(tree_.Path("skills/s/big.json"), (16u << 20) + 1);  // sparse: nothing written
  EXPECT_EQ(Load(), (std::vector<std::string>{"skills/s/skill.yaml:4:16: /output_schema: cannot load schema file "
                                              "skills/s/big.json: larger than 16 MiB"}));
}

TEST_F(SkillRegistryTest, EachKindOfSkillNeedsItsKeys) {
  tree_.Write("skills/a/skill.yaml", "id: a\ninput_schema: {}\noutput_schema: {}\n");
  tree_.Write("skills/b/skill.yaml", "id: b\nhandler: exec\ninput_schema: {}\noutput_schema: {}\n");
  tree_.Write("skills/c/skill.yaml", "id: c\nhandler: magic\ninput_schema: {}\noutput_schema: {}\n");
  tree_.Write("skills/d/skill.yaml", "id: d\ntemplate_type: LLM_REVIEW\nmodel: m\nrubric: r\ninput_schema: {}\n");
  tree_.Write("skills/e/skill.yaml", "id: e\nhandler: echo\nmodel: m\ninput_schema: {}\noutput_schema: {}\n");
  tree_.Write("skills/f/skill.yaml", "id: f\ntemplate_type: LLM_JSON_GENERATION\nmodel: m\n");
  tree_.Write("rubrics/r.yaml", "id: r\ncriteria:\n  - { id: ok, description: fine }\n");
  EXPECT_EQ(Load(), (std::vector<std::string>{
                        "skills/a/skill.yaml:1:1: a skill without template_type needs a \"handler\" (or set "
                        "template_type to LLM_JSON_GENERATION or LLM_REVIEW)",
                        "skills/b/skill.yaml:1:1: /command: exec handler skills need \"command\"",
                        "skills/c/skill.yaml:2:10: /handler: unknown handler \"magic\"",
                        "skills/d/skill.yaml:5:15: /input_schema: LLM_REVIEW skills take no \"input_schema\" (their "
                        "input is {subject, context?} and their output the verdict)",
                        "skills/e/skill.yaml:3:8: /model: handler skills take no \"model\"",
                        "skills/f/skill.yaml:1:1: /prompt: LLM_JSON_GENERATION skills need \"prompt\"",
                        "skills/f/skill.yaml:1:1: /input_schema: LLM_JSON_GENERATION skills need \"input_schema\"",
                        "skills/f/skill.yaml:1:1: /output_schema: LLM_JSON_GENERATION skills need \"output_schema\"",
                    }));
  EXPECT_TRUE(registry_->skills().empty());
}

TEST_F(SkillRegistryTest, CrossFileRulesUniqueIdsRubricsAndModels) {
  WriteGoodSkill();
  tree_.Write("skills/good_copy/skill.yaml", "id: good\nhandler: echo\ninput_schema: {}\noutput_schema: {}\n");
  tree_.Write("skills/gated/skill.yaml", R"(id: gated
template_type: LLM_JSON_GENERATION
model: m
prompt: { user: "Hello {{input.name}}" }
input_schema: { type: object, properties: { name: { type: string } } }
output_schema: { type: object }
review: { rubric: nope }
)");
  tree_.Write("rubrics/quality.yaml", R"(id: quality
criteria:
  - { id: a, description: first }
  - { id: a, description: again }
)");
  tree_.Write("rubrics/fine.yaml", "id: fine\ncriteria:\n  - { id: ok, description: fine }\n");
  EXPECT_EQ(Load(),
            (std::vector<std::string>{
                "rubrics/quality.yaml:4:11: /criteria/1/id: duplicate criterion id \"a\"",
                "skills/gated/skill.yaml:7:19: /review/rubric: unknown rubric \"nope\" (rubrics in " +
                    tree_.Path("rubrics").string().substr(tree_.root().string().size() + 1) + ": fine)",
                "skills/good_copy/skill.yaml:1:5: /id: duplicate skill id \"good\" (also in skills/good/skill.yaml)",
            }));
  EXPECT_EQ(registry_->skills().size(), 1u);
  EXPECT_EQ(registry_->rubrics().size(), 1u);
}

TEST_F(SkillRegistryTest, ModelsNeedATableEntryOrADefaultProvider) {
  tree_.Write("skills/g/skill.yaml", R"(id: g
template_type: LLM_JSON_GENERATION
model: unknown-model
prompt: { user: "x" }
input_schema: {}
output_schema: {}
)");
  Config config;
  config.source = "skillrunner.yaml";
  config.providers["openai"] = ProviderConfig{"openai", "openai", "", "", {}};
  config.models["unknown-model-2"] = ModelConfig{"unknown-model-2", "openai", OutputMode::kNone, {}, {}, {}};
  EXPECT_EQ(Load(config),
            (std::vector<std::string>{
                "skills/g/skill.yaml:3:8: /model: model \"unknown-model\" is not in the models table of "
                "skillrunner.yaml (did you mean \"unknown-model-2\"?); add it there (or set default_provider)"}));
  // With a default_provider the model falls back to it, and validate says so.
  config.default_provider = "openai";
  EXPECT_EQ(Load(config),
            (std::vector<std::string>{
                "skills/g/skill.yaml:3:8: warning: /model: model \"unknown-model\" is not in the models table of "
                "skillrunner.yaml (did you mean \"unknown-model-2\"?), so it runs on the default_provider \"openai\" "
                "[model-unlisted]"}));
  EXPECT_EQ(registry_->FindSkill("g")->provider, "openai");
  // Without a config file every model runs on the simulator, by design.
  EXPECT_EQ(Load(BuiltinConfig()), std::vector<std::string>{});
  EXPECT_EQ(registry_->FindSkill("g")->provider, "simulated");
}

TEST_F(SkillRegistryTest, PlaceholdersAreCheckedAgainstTheInputSchema) {
  tree_.Write("skills/p/skill.yaml", R"(id: p
template_type: LLM_JSON_GENERATION
model: m
prompt:
  system: "Be brief about {{input.topic}}"
  user: "Hello {{input.nme}} and {{ input.topic }}"
input_schema: { type: object, properties: { topic: { type: string } }, additionalProperties: false }
output_schema: {}
)");
  tree_.Write("skills/q/skill.yaml", R"(id: q
template_type: LLM_JSON_GENERATION
model: m
prompt: { user: "Hello {{name}}" }
input_schema: {}
output_schema: {}
)");
  EXPECT_EQ(Load(), (std::vector<std::string>{
                        "skills/p/skill.yaml:6:9: /prompt/user: placeholder {{input.nme}} names a property "
                        "input_schema does not declare",
                        "skills/q/skill.yaml:4:17: /prompt/user: malformed placeholder \"{{name}}\": expected "
                        "{{input}} or {{input.field.path}}",
                    }));
}

// design.md §9.3: tool mode is for openai and anthropic kinds; a fallback whose
// strict mode cannot take the schema runs the loop there, with a warning.
TEST_F(SkillRegistryTest, ToolModeNeedsAToolProviderAndAFallbackStrictModeThatCannotTakeTheSchemaWarns) {
  tree_.Write("skills/tool/skill.yaml", R"(id: tool
template_type: LLM_JSON_GENERATION
model: gem
structured_output: tool
prompt: { user: "x" }
input_schema: {}
output_schema: { type: object, properties: { a: { type: string } } }
)");
  tree_.Write("skills/fb/skill.yaml", R"(id: fb
template_type: LLM_JSON_GENERATION
model: primary
prompt: { user: "x" }
input_schema: {}
output_schema: { type: object, properties: { tags: { type: array } } }
)");
  Config config = BuiltinConfig();
  config.providers["gemini"] = ProviderConfig{"gemini", "gemini", "", "", {}};
  config.providers["openai"] = ProviderConfig{"openai", "openai", "", "", {}};
  config.models["gem"] = ModelConfig{"gem", "gemini", OutputMode::kNative, {}, {}, {}};
  config.models["primary"] = ModelConfig{"primary", "openai", OutputMode::kNone, {"strict"}, {}, {}};
  config.models["strict"] = ModelConfig{"strict", "openai", OutputMode::kNative, {}, {}, {}};
  EXPECT_EQ(
      Load(config),
      (std::vector<std::string>{
          "skills/fb/skill.yaml:3:8: warning: /model: fallback or escalation model \"strict\" cannot take this schema "
          "in "
          "openai strict mode (/properties/tags: array has no items schema; openai strict mode needs typed items); it "
          "runs the validation loop [fallback-unstrict]",
          "skills/tool/skill.yaml:4:20: /structured_output: tool mode needs an openai, anthropic or bedrock "
          "provider or a Claude model on vertex; model \"gem\" runs on a gemini one",
      }));
  const Skill* fb = registry_->FindSkill("fb");
  ASSERT_NE(fb, nullptr);
  ASSERT_EQ(fb->generation->fallbacks.size(), 1u);
  EXPECT_EQ(fb->generation->fallbacks[0].mode, OutputMode::kNone);
}

// Four skills on a strict model: an array without items, an array root, the
// validation loop asked for, and a maxLength strict mode cannot enforce.
void WriteStrictModelSkills(testing::TempTree& tree) {
  tree.Write("skills/list/skill.yaml", R"(id: list
template_type: LLM_JSON_GENERATION
model: strict-model
prompt: { user: "x" }
input_schema: {}
output_schema: { type: object, properties: { tags: { type: array } } }
)");
  tree.Write("skills/listed/skill.yaml", R"(id: listed
template_type: LLM_JSON_GENERATION
model: strict-model
prompt: { user: "x" }
input_schema: {}
output_schema: { type: array, items: { type: string } }
)");
  tree.Write("skills/loop/skill.yaml", R"(id: loop
template_type: LLM_JSON_GENERATION
model: strict-model
structured_output: none
prompt: { user: "x" }
input_schema: {}
output_schema: { type: array, items: { type: string } }
)");
  tree.Write("skills/named/skill.yaml", R"(id: named
template_type: LLM_JSON_GENERATION
model: strict-model
prompt: { user: "x" }
input_schema: {}
output_schema:
  type: object
  required: [name]
  properties: { name: { type: string, maxLength: 20 } }
)");
}

TEST_F(SkillRegistryTest, StrictModelsRefuseSchemasTheProviderCannotTakeAndWarnAboutTheRest) {
  WriteStrictModelSkills(tree_);
  Config config = BuiltinConfig();
  config.providers["openai"] = ProviderConfig{"openai", "openai", "", "", {}};
  config.models["strict-model"] = ModelConfig{"strict-model", "openai", OutputMode::kNative, {}, {}, {}};
  EXPECT_EQ(Load(config),
            (std::vector<std::string>{
                "skills/list/skill.yaml:6:16: /output_schema: the openai strict mode of model \"strict-model\" "
                "cannot take this schema: /properties/tags: array has no items schema; openai strict mode needs typed "
                "items (set `structured_output: none` to use the validation loop)",
                "skills/named/skill.yaml:9:23: warning: /output_schema: /properties/name: maxLength 20 is enforced "
                "only by client-side validation (openai strict mode) [strict-unenforced]",
            }));
  EXPECT_EQ(registry_->FindSkill("list"), nullptr);
  // Any root runs on the strict model too, wrapped as {"value": ...} on the wire.
  const Skill* listed = registry_->FindSkill("listed");
  ASSERT_NE(listed, nullptr);
  EXPECT_EQ(listed->output_mode, OutputMode::kNative);
  EXPECT_TRUE(listed->generation->schema->wrapped);
  EXPECT_EQ(listed->generation->schema->strict_wire, json::parse(R"({"type":"object","properties":{"value":
      {"type":"array","items":{"type":"string"}}},"required":["value"],"additionalProperties":false})"));
  // Made once at load: every request of the skill points at it.
  ASSERT_NE(listed->generation->schema->wire, nullptr);
  EXPECT_EQ(*listed->generation->schema->wire, listed->generation->schema->strict_wire);
  ASSERT_NE(registry_->FindSkill("loop"), nullptr);
  EXPECT_EQ(registry_->FindSkill("loop")->output_mode, OutputMode::kNone);
  ASSERT_NE(registry_->FindSkill("named"), nullptr);
  EXPECT_EQ(registry_->FindSkill("named")->output_mode, OutputMode::kNative);
  EXPECT_FALSE(registry_->FindSkill("named")->generation->schema->strict_wire.is_null());
}

TEST_F(SkillRegistryTest, FaultScriptsAreCheckedAtLoadWithTheirPointer) {
  tree_.Write("skills/sim/skill.yaml", R"(id: sim
template_type: LLM_JSON_GENERATION
model: m
prompt: { user: "x" }
input_schema: {}
output_schema: {}
simulation:
  faults:
    - { attempt: 1, fault: wrng_type }
)");
  EXPECT_EQ(Load(), (std::vector<std::string>{
                        "skills/sim/skill.yaml:9:28: /simulation/faults/0/fault: unknown fault \"wrng_type\" "
                        "(did you mean \"wrong_type\"?)"}));
}

TEST_F(SkillRegistryTest, ARetryStrategyIsContinuationOrFresh) {
  tree_.Write("skills/typo/skill.yaml", R"(id: typo
template_type: LLM_JSON_GENERATION
model: m
prompt: { user: "x" }
input_schema: {}
output_schema: {}
retry: { strategy: frseh }
)");
  tree_.Write("skills/fresh/skill.yaml", R"(id: fresh
template_type: LLM_JSON_GENERATION
model: m
prompt: { user: "x" }
input_schema: {}
output_schema: {}
retry: { strategy: fresh }
)");
  EXPECT_EQ(Load(), (std::vector<std::string>{"skills/typo/skill.yaml:7:20: /retry/strategy: expected one of "
                                              "[\"continuation\",\"fresh\"], found \"frseh\""}));
  ASSERT_NE(registry_->FindSkill("fresh"), nullptr);
  EXPECT_EQ(registry_->FindSkill("fresh")->generation->retry.strategy, generation::RetryStrategy::kFresh);
}

// Found by tests/fuzz/suite_yaml_fuzz.cpp (the same reading in the skill
// loader): the schema takes 2.0 as an integer, and as_int64 threw on it; a
// number past int64 is its largest.
TEST_F(SkillRegistryTest, ADelayLongerThanADayIsAnErrorAtItsKey) {
  tree_.Write("skills/slow/skill.yaml",
              "id: slow\ntemplate_type: LLM_JSON_GENERATION\nmodel: m\nprompt: { user: x }\n"
              "input_schema: {}\noutput_schema: {}\nretry: { transient: { max_delay_ms: 1.0e30 } }\n");
  EXPECT_EQ(Load(), (std::vector<std::string>{
                        "skills/slow/skill.yaml:7:37: /retry/transient/max_delay_ms: expected at most 86400000, "
                        "found 1e+30"}));
}

TEST_F(SkillRegistryTest, IntegersWrittenWithAFractionOfZeroAreThoseIntegers) {
  tree_.Write("skills/floats/skill.yaml", R"(id: floats
template_type: LLM_JSON_GENERATION
model: m
max_output_tokens: 512.0
prompt: { user: "x" }
input_schema: {}
output_schema: {}
retry: { validation_retries: 2.0, transient: { max_retries: 3.0, initial_delay_ms: 250.0, max_delay_ms: 8.64e7 } }
review: { rubric: quality, samples: 3.0 }
validators:
  - exec: [python3, rules.py]
    timeout_ms: 1500.0
)");
  tree_.Write("rubrics/quality.yaml", "id: quality\ncriteria:\n  - { id: a, description: first }\n");
  EXPECT_EQ(Load(), (std::vector<std::string>{}));
  const Skill* skill = registry_->FindSkill("floats");
  ASSERT_NE(skill, nullptr);
  EXPECT_EQ(skill->max_output_tokens, 512);
  EXPECT_EQ(skill->retry.validation_retries, 2);
  EXPECT_EQ(skill->retry.transient.max_retries, 3);
  EXPECT_EQ(skill->retry.transient.initial_delay, std::chrono::milliseconds(250));
  EXPECT_EQ(skill->retry.transient.max_delay, std::chrono::milliseconds(86'400'000));
  EXPECT_EQ(skill->review->samples, 3);
  ASSERT_EQ(skill->rules.size(), 1u);
  EXPECT_EQ(skill->rules[0].exec->timeout, std::chrono::milliseconds(1500));
}

TEST_F(SkillRegistryTest, ValidatorsAreCheckedAtLoadWithTheirPositions) {
  tree_.Write("skills/rules/skill.yaml", R"(id: rules
template_type: LLM_JSON_GENERATION
model: m
prompt: { user: "x" }
input_schema: {}
output_schema: {}
validators:
  - non_empty: [/wines, intro]
  - when: { path: response_type, equals: recommendation }
    non_empty: [/wines]
  - non_emtpy: [/x]
  - exec: []
  - exec: [python3, rules.py]
    non_empty: [/x]
  - non_empty: [/x]
    timeout_ms: 100
  - exec: [python3, rules.py]
    timeout_ms: 0
  - when: { path: /x, equals: 1 }
)");
  EXPECT_EQ(Load(), (std::vector<std::string>{
                        "skills/rules/skill.yaml:8:25: /validators/0/non_empty/1: \"intro\" is not a JSON pointer "
                        "(\"\" for the whole answer, else /key/...)",
                        "skills/rules/skill.yaml:9:19: /validators/1/when/path: \"response_type\" is not a JSON "
                        "pointer (\"\" for the whole answer, else /key/...)",
                        "skills/rules/skill.yaml:11:5: /validators/2/non_emtpy: unexpected property \"non_emtpy\" (did "
                        "you mean \"non_empty\"?)",
                        "skills/rules/skill.yaml:12:11: /validators/3/exec: expected at least 1 item, found 0",
                        "skills/rules/skill.yaml:13:5: /validators/4: a validator is one rule: give non_empty and exec "
                        "separate entries",
                        "skills/rules/skill.yaml:16:17: /validators/5/timeout_ms: only exec validators take a timeout",
                        "skills/rules/skill.yaml:18:17: /validators/6/timeout_ms: expected at least 1, found 0",
                        "skills/rules/skill.yaml:19:5: /validators/7: a validator needs a rule: non_empty: [pointers] "
                        "or exec: [program, args...]",
                    }));
}

TEST_F(SkillRegistryTest, AnExecValidatorRunsInTheSkillFolderWithItsTimeout) {
  tree_.Write("skills/rules/skill.yaml", R"(id: rules
template_type: LLM_JSON_GENERATION
model: m
prompt: { user: "x" }
input_schema: {}
output_schema: {}
validators:
  - when: { path: /kind, equals: wine }
    exec: [python3, checks/rules.py, --strict]
    timeout_ms: 500
  - exec: [./rules.sh]
)");
  EXPECT_EQ(Load(), std::vector<std::string>{});
  const Skill* skill = registry_->FindSkill("rules");
  ASSERT_NE(skill, nullptr);
  const auto& rules = skill->generation->rules;
  ASSERT_EQ(rules.size(), 2u);
  ASSERT_TRUE(rules[0].exec.has_value());
  EXPECT_EQ(rules[0].exec->argv, (std::vector<std::string>{"python3", "checks/rules.py", "--strict"}));
  EXPECT_EQ(rules[0].exec->name, "python3 checks/rules.py --strict");
  EXPECT_EQ(rules[0].exec->dir, tree_.Path("skills/rules"));
  EXPECT_EQ(rules[0].exec->timeout, std::chrono::milliseconds(500));
  ASSERT_TRUE(rules[0].when.has_value());
  EXPECT_EQ(rules[0].when->path, "/kind");
  EXPECT_TRUE(rules[0].non_empty.empty());
  EXPECT_EQ(rules[1].exec->timeout, std::chrono::milliseconds(2000));
  EXPECT_FALSE(rules[1].when.has_value());
}

TEST_F(SkillRegistryTest, CoercionIsStrictOrLaxAndOnlyGenerationSkillsTakeItOrValidators) {
  tree_.Write("skills/lax/skill.yaml", R"(id: lax
template_type: LLM_JSON_GENERATION
model: m
prompt: { user: "x" }
input_schema: {}
output_schema: {}
coercion: lxa
)");
  tree_.Write("skills/judge/skill.yaml", R"(id: judge
template_type: LLM_REVIEW
model: m
rubric: r
coercion: lax
validators: [{ non_empty: [/pass] }]
)");
  tree_.Write("skills/tool/skill.yaml", R"(id: tool
handler: echo
input_schema: {}
output_schema: {}
coercion: lax
validators: [{ non_empty: [/x] }]
)");
  tree_.Write("rubrics/r.yaml", "id: r\ncriteria:\n  - { id: c, description: d }\n");
  EXPECT_EQ(Load(), (std::vector<std::string>{
                        "skills/judge/skill.yaml:5:11: /coercion: LLM_REVIEW skills take no \"coercion\"",
                        "skills/judge/skill.yaml:6:13: /validators: LLM_REVIEW skills take no \"validators\"",
                        "skills/lax/skill.yaml:7:11: /coercion: expected one of [\"strict\",\"lax\"], found \"lxa\"",
                        "skills/tool/skill.yaml:5:11: /coercion: handler skills take no \"coercion\"",
                        "skills/tool/skill.yaml:6:13: /validators: handler skills take no \"validators\"",
                    }));
}

TEST_F(SkillRegistryTest, ShippedTreeLoadsCleanly) {
  RegistryOptions options;
  options.skills_dir = SKILLRUNNER_SOURCE_DIR "/skills";
  options.rubrics_dir = SKILLRUNNER_SOURCE_DIR "/rubrics";
  options.is_known_handler = [](std::string_view name) { return name == "echo"; };
  auto config = LoadConfig(SKILLRUNNER_SOURCE_DIR "/skillrunner.yaml", [](std::string_view) { return std::nullopt; });
  ASSERT_TRUE(config);
  auto loaded = SkillRegistry::Load(options, *config);
  std::vector<std::string> warnings;
  for (const auto& d : loaded.diagnostics) {
    if (d.severity == Diagnostic::Severity::kError) ADD_FAILURE() << d.ToString();
    warnings.push_back(d.message);
  }
  // extract_contact runs on OpenAI strict mode, which cannot enforce these.
  EXPECT_EQ(warnings, (std::vector<std::string>{
                          "/output_schema: /properties/name: minLength 1 is enforced only by client-side validation "
                          "(openai strict mode)",
                          "/output_schema: /properties/name: maxLength 200 is enforced only by client-side validation "
                          "(openai strict mode)",
                      }));
  EXPECT_GE(loaded.registry->skills().size(), 4u);
  const Skill* extract = loaded.registry->FindSkill("extract_contact");
  ASSERT_NE(extract, nullptr);
  EXPECT_EQ(extract->provider, "openai");
  EXPECT_EQ(extract->review->rubric, "contact_quality");
  ASSERT_EQ(extract->prompt.user_placeholders.size(), 1u);
  EXPECT_EQ(PlaceholderName(extract->prompt.user_placeholders[0]), "input.text");
}

}  // namespace
}  // namespace skillrunner
