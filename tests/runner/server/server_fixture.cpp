#include "tests/runner/server/server_fixture.h"

#include <gtest/gtest.h>

namespace skillrunner::testing {

void WriteServerTree(const TempTree& tree, const std::string& extra_providers) {
  tree.Write("skillrunner.yaml", R"(providers:
  sim: { kind: simulated, latency_ms: 50 }
  stuck: { kind: simulated, latency_ms: 20000 }
)" + extra_providers + R"(models:
  sim-model: { provider: sim, structured_output: native }
  stuck-model: { provider: stuck, structured_output: native }
default_provider: sim
)");
  tree.Write("skills/echo/skill.yaml",
             "id: echo\nhandler: echo\ninput_schema: { type: object }\noutput_schema: { type: object }\n");
  const std::string generation = R"(template_type: LLM_JSON_GENERATION
input_schema: { type: object, required: [text], properties: { text: { type: string } } }
output_schema:
  type: object
  required: [name]
  additionalProperties: false
  properties: { name: { type: string } }
prompt:
  user: "Extract the name from: {{input.text}}"
)";
  tree.Write("skills/contact/skill.yaml", "id: contact\nmodel: sim-model\n" + generation);
  tree.Write("skills/stuck/skill.yaml", "id: stuck\nmodel: stuck-model\ntimeout_ms: 60000\n" + generation);
}

ServerFixture::ServerFixture(const TempTree& tree, server::ServerOptions options, bool allow_broken)
    : options_(std::move(options)) {
  if (options_.socket_path.empty()) options_.socket_path = tree.Path("skillrunner.sock").string();
  cli::CommonOptions common;
  common.skills_dir = tree.Path("skills").string();
  common.rubrics_dir = tree.Path("rubrics").string();
  common.config_file = tree.Path("skillrunner.yaml").string();
  host_ = std::make_unique<cli::ReloadingHost>(common, io_.get_executor(), allow_broken);
}

ServerFixture::~ServerFixture() { Stop(); }

std::optional<std::string> ServerFixture::Start() {
  if (auto loaded = host_->LoadInitial(); !loaded) return loaded.error().message;
  server_ = std::make_unique<server::Server>(io_, options_, *host_);
  if (auto started = server_->Start(); !started) return started.error().message;
  for (int i = 0; i < 2; ++i) threads_.emplace_back([this] { io_.run(); });
  return std::nullopt;
}

void ServerFixture::Stop() {
  if (stopped_ || threads_.empty()) return;
  stopped_ = true;
  server_->Shutdown();
  for (auto& thread : threads_) thread.join();
}

SocketClient ServerFixture::Connect() {
  auto client = SocketClient::ConnectUnix(options_.socket_path);
  EXPECT_TRUE(client.has_value()) << "cannot connect to " << options_.socket_path;
  if (!client) std::abort();
  return std::move(*client);
}

std::string InvokeLine(int id, const std::string& skill, const std::string& input_json,
                       const std::string& options_json) {
  std::string line = R"({"jsonrpc":"2.0","id":)" + std::to_string(id) +
                     R"(,"method":"skills.invoke","params":{"skill":")" + skill + R"(","input":)" + input_json;
  if (!options_json.empty()) line += R"(,"options":)" + options_json;
  return line + "}}\n";
}

}  // namespace skillrunner::testing
