#include "tests/docs/protocol_tree.h"

namespace skillrunner::testing {

namespace {

constexpr const char* kGeneration = R"(template_type: LLM_JSON_GENERATION
input_schema: { type: object, required: [text], properties: { text: { type: string } } }
output_schema: { type: object, required: [name], additionalProperties: false, properties: { name: { type: string } } }
prompt: { user: "Extract the name from: {{input.text}}" }
)";

void Generation(const TempTree& tree, const std::string& id, const std::string& model, const std::string& extra) {
  tree.Write("skills/" + id + "/skill.yaml", "id: " + id + "\nmodel: " + model + "\n" + extra + kGeneration);
}

}  // namespace

void WriteProtocolTree(const TempTree& tree, const std::string& llm_base_url) {
  std::string providers =
      "providers:\n  sim: { kind: simulated, latency_ms: 5 }\n  slow: { kind: simulated, latency_ms: 5000 }\n";
  std::string models = R"(models:
  sim-model: { provider: sim, structured_output: native }
  slow-model: { provider: slow, structured_output: native }
  priced: { provider: sim, structured_output: native, price: { input: 1000, output: 1000 } }
)";
  if (!llm_base_url.empty()) {
    providers += "  http: { kind: openai, base_url: \"" + llm_base_url + "\" }\n";
    models += "  http-model: { provider: http, structured_output: native }\n";
    Generation(tree, "remote", "http-model", "");
  }
  tree.Write("skillrunner.yaml", providers + models + "default_provider: sim\n");
  Generation(tree, "contact", "sim-model", "");
  Generation(tree, "slow", "slow-model", "");
  Generation(tree, "invalid", "sim-model",
             "retry: { validation_retries: 1 }\n"
             "simulation: { faults: [ { attempt: [1, 2], fault: wrong_type, path: /name } ] }\n");
  Generation(tree, "unavailable", "sim-model",
             "retry: { transient: { max_retries: 0 } }\n"
             "simulation: { faults: [ { attempt: 1, fault: unavailable, status: 503 } ] }\n");
  Generation(tree, "refused", "sim-model", "simulation: { faults: [ { attempt: 1, fault: refusal } ] }\n");
  Generation(tree, "filtered", "sim-model", "simulation: { faults: [ { attempt: 1, fault: content_filter } ] }\n");
  Generation(tree, "truncated", "sim-model", "simulation: { faults: [ { attempt: 1, fault: truncate } ] }\n");
  Generation(tree, "budget", "priced", "max_cost_usd: 0.000001\n");
  Generation(tree, "limited", "sim-model",
             "timeout_ms: 1000\n"
             "simulation: { faults: [ { attempt: [1, 2, 3], fault: rate_limit, retry_after_ms: 5000 } ] }\n");
  tree.Write("skills/failing/skill.yaml", R"(id: failing
handler: exec
command: [sh, -c, "echo broken >&2; exit 3"]
input_schema: { type: object }
output_schema: { type: object }
)");
  tree.Write("skills/echo/skill.yaml",
             "id: echo\nhandler: echo\ninput_schema: { type: object }\noutput_schema: { type: object }\n");
  tree.Write("skills/judged/skill.yaml", R"(id: judged
template_type: LLM_REVIEW
rubric: quality
model: sim-model
retry: { transient: { max_retries: 0 } }
simulation: { faults: [ { attempt: 1, fault: unavailable } ] }
)");
  tree.Write("rubrics/quality.yaml", R"(id: quality
description: Is the name right?
criteria:
  - { id: faithful, description: The name is in the text., required: true }
)");
  tree.Write("skills/broken/skill.yaml",
             "id: broken\nmodel: sim-model\nretry: { max_retries: 1 }\n" + std::string(kGeneration));
}

}  // namespace skillrunner::testing
