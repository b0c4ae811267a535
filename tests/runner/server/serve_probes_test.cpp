// `serve` starts only on a tree that loads (or, with --allow-broken, says it
// is degraded), and answers HTTP probes on its metrics listener: a real serve
// process, real sockets.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <thread>

#include "services/common/iso_time.h"
#include "tests/runner/server/serve_process.h"
#include "tests/runner/server/server_fixture.h"
#include "tests/support/child_process.h"
#include "tests/support/cli_runner.h"
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

// A generation skill whose `temperature` is not a number (line 3, column 14).
constexpr const char* kHotSkill = R"(id: hot
model: sim-model
temperature: hot
template_type: LLM_JSON_GENERATION
input_schema: { type: object }
output_schema: { type: object }
prompt: { user: "Say something." }
)";

struct HttpAnswer {
  int status = 0;
  std::string body;  // the lines after the headers
};

// A TCP connection to 127.0.0.1:`port`, retried for a while (a listener opens a moment after the
// Unix socket takes connections).
std::optional<SocketClient> ConnectTcpWhenReady(std::uint16_t port) {
  for (auto deadline = std::chrono::steady_clock::now() + 10s; std::chrono::steady_clock::now() < deadline;) {
    if (auto client = SocketClient::ConnectTcp(port)) return client;
    std::this_thread::sleep_for(20ms);
  }
  return std::nullopt;
}

// GET `path` on 127.0.0.1:`port` as a probe would (no token, no keep-alive). Status 0: no answer.
HttpAnswer HttpGet(std::uint16_t port, const std::string& path) {
  auto client = ConnectTcpWhenReady(port);
  HttpAnswer answer;
  if (!client || !client->Send("GET " + path + " HTTP/1.1\r\nHost: probe\r\nConnection: close\r\n\r\n")) return answer;
  auto status_line = client->ReadLine(5s);
  if (!status_line || status_line->size() < 12) return answer;
  answer.status = std::stoi(status_line->substr(9, 3));
  while (auto header = client->ReadLine(5s)) {
    if (*header == "\r") break;
  }
  while (auto line = client->ReadLine(5s)) answer.body += *line;
  return answer;
}

class ServeProbesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::WriteServerTree(tree_);
    socket_ = tree_.Path("s.sock").string();
    metrics_port_ = test_support::FreeLoopbackPort();
    hot_file_ = tree_.Path("skills/hot/skill.yaml").string();
  }
  std::vector<std::string> Args(std::vector<std::string> more = {}) const {
    std::vector<std::string> args = {"--socket", socket_, "--metrics-listen",
                                     "127.0.0.1:" + std::to_string(metrics_port_)};
    args.insert(args.end(), more.begin(), more.end());
    return args;
  }
  json::value HotFailed() const {
    return json::array{json::object{{"file", hot_file_},
                                    {"line", 3},
                                    {"col", 14},
                                    {"message", "/temperature: expected number, found string \"hot\""}}};
  }
  // health's last_reload once it says `ok` (or whatever it says after 10 s).
  static json::value WaitForLastReload(SocketClient& client, bool ok) {
    json::value last;
    for (auto deadline = std::chrono::steady_clock::now() + 10s; std::chrono::steady_clock::now() < deadline;) {
      last = client.Call(R"({"jsonrpc":"2.0","id":9,"method":"health"})").at("result").at("last_reload");
      if (last.is_object() && last.at("ok") == ok) break;
      std::this_thread::sleep_for(20ms);
    }
    return last;
  }
  TempTree tree_;
  std::string socket_;
  std::uint16_t metrics_port_ = 0;
  std::string hot_file_;
};

TEST_F(ServeProbesTest, ABrokenSkillStopsServeBeforeListeningWithExitTwoNamingFileLineAndColumn) {
  tree_.Write("skills/hot/skill.yaml", kHotSkill);
  ServeProcess serve(tree_, Args());
  ASSERT_EQ(serve.Wait(20s), 2) << serve.Stderr();
  const std::string err = serve.Stderr();
  EXPECT_EQ(err, hot_file_ +
                     ":3:14: /temperature: expected number, found string \"hot\"\n"
                     "skillrunner serve: 1 file does not load (every problem above); fix it, or start with "
                     "--allow-broken to serve the rest\n");
  EXPECT_EQ(err.find("listening"), std::string::npos) << err;
  EXPECT_FALSE(std::filesystem::exists(socket_));
}

TEST_F(ServeProbesTest, AllowBrokenServesTheGoodSkillsAndHealthAndReadyzSayDegradedNamingTheFile) {
  tree_.Write("skills/hot/skill.yaml", kHotSkill);
  ServeProcess serve(tree_, Args({"--allow-broken"}));
  auto client = ConnectWhenReady(socket_);
  ASSERT_TRUE(client) << serve.Stderr();
  auto health = client->Call(R"({"jsonrpc":"2.0","id":1,"method":"health"})").at("result");
  EXPECT_EQ(health.at("status"), "degraded") << json::serialize(health);
  EXPECT_EQ(health.at("failed"), HotFailed()) << json::serialize(health);
  EXPECT_EQ(health.at("skills"), 3);
  EXPECT_EQ(client->Call(InvokeLine(2, "echo", R"({"a":1})")).at("result").at("output"), json::parse(R"({"a":1})"));
  auto hot = client->Call(InvokeLine(3, "hot", "{}"));
  EXPECT_EQ(hot.at("error").at("data").at("code"), "CONFIG_INVALID") << json::serialize(hot);

  const json::value degraded{
      {"status", "degraded"}, {"state", "local"}, {"failed", HotFailed()}, {"last_reload", nullptr}};
  auto ready = HttpGet(metrics_port_, "/readyz");
  EXPECT_EQ(ready.status, 200);
  EXPECT_EQ(json::parse(ready.body), degraded) << ready.body;
  auto live = HttpGet(metrics_port_, "/healthz");
  EXPECT_EQ(live.status, 200);
  EXPECT_EQ(json::parse(live.body), degraded) << live.body;
  const std::string readyz = "http://127.0.0.1:" + std::to_string(metrics_port_) + "/readyz";
  auto probe = test_support::Skillrunner(tree_.root(), "probe " + readyz, "2>&1");
  EXPECT_EQ(probe.status, 0) << probe.out;
  EXPECT_EQ(probe.out, readyz + ": HTTP 200\n");
  serve.Signal(SIGTERM);
  EXPECT_EQ(serve.Wait(10s), 0) << serve.Stderr();
}

TEST_F(ServeProbesTest, ReadyzIs503WhenNoSkillLoaded) {
  TempTree only_broken;
  only_broken.Write("skillrunner.yaml",
                    "providers:\n  sim: { kind: simulated }\nmodels:\n"
                    "  sim-model: { provider: sim, structured_output: native }\ndefault_provider: sim\n");
  only_broken.Write("skills/hot/skill.yaml", kHotSkill);
  ServeProcess serve(only_broken, Args({"--allow-broken"}));
  ASSERT_TRUE(ConnectWhenReady(socket_)) << serve.Stderr();
  auto ready = HttpGet(metrics_port_, "/readyz");
  EXPECT_EQ(ready.status, 503);
  EXPECT_EQ(json::parse(ready.body).at("status"), "degraded") << ready.body;
  EXPECT_EQ(HttpGet(metrics_port_, "/healthz").status, 200);
  const std::string readyz = "http://127.0.0.1:" + std::to_string(metrics_port_) + "/readyz";
  auto probe = test_support::Skillrunner(tree_.root(), "probe " + readyz, "2>&1");
  EXPECT_EQ(probe.status, 1) << probe.out;
  EXPECT_EQ(probe.out, "skillrunner probe: " + readyz + ": HTTP 503\n");
  serve.Signal(SIGTERM);
  EXPECT_EQ(serve.Wait(10s), 0) << serve.Stderr();
}

TEST_F(ServeProbesTest, UnderAllowBrokenAReloadTakesABrokenTreeAndReportsItButNeverABrokenConfig) {
  ServeProcess serve(tree_, Args({"--allow-broken"}));
  auto client = ConnectWhenReady(socket_);
  ASSERT_TRUE(client) << serve.Stderr();
  EXPECT_EQ(client->Call(R"({"jsonrpc":"2.0","id":1,"method":"health"})").at("result").at("status"), "ok");
  tree_.Write("skills/hot/skill.yaml", kHotSkill);
  tree_.Write("skills/echo2/skill.yaml",
              "id: echo2\nhandler: echo\ninput_schema: { type: object }\noutput_schema: { type: object }\n");
  auto reload = client->Call(R"({"jsonrpc":"2.0","id":2,"method":"skills.reload"})");
  EXPECT_EQ(reload.at("result").at("ok"), true) << json::serialize(reload);
  EXPECT_EQ(reload.at("result").at("skills"), 4);
  EXPECT_EQ(reload.at("result").at("failed"), HotFailed());
  EXPECT_EQ(client->Call(InvokeLine(3, "echo2", "{}")).at("result").at("skill"), "echo2");
  auto health = client->Call(R"({"jsonrpc":"2.0","id":4,"method":"health"})").at("result");
  EXPECT_EQ(health.at("status"), "degraded");
  EXPECT_EQ(health.at("failed"), HotFailed());
  const std::string broken = HttpGet(metrics_port_, "/metrics").body;  // (HttpGet joins the lines)
  EXPECT_NE(broken.find("skillrunner_tree_degraded 1"), std::string::npos) << broken;
  EXPECT_NE(broken.find("skillrunner_tree_failed_files 1"), std::string::npos) << broken;

  std::filesystem::remove_all(tree_.Path("skills/hot"));  // fixed: SIGHUP takes the whole tree again
  serve.Signal(SIGHUP);
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (client->Call(R"({"jsonrpc":"2.0","id":5,"method":"health"})").at("result").at("status") != "ok" &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
  }
  json::value ready = json::parse(HttpGet(metrics_port_, "/readyz").body);
  EXPECT_EQ(ready.at("status"), "ok") << json::serialize(ready);
  EXPECT_EQ(ready.at("failed"), json::array{});
  EXPECT_EQ(ready.at("last_reload").at("ok"), true);
  EXPECT_EQ(ready.at("last_reload").at("failed"), json::array{});
  const std::string whole = HttpGet(metrics_port_, "/metrics").body;
  EXPECT_NE(whole.find("skillrunner_tree_degraded 0"), std::string::npos) << whole;
  EXPECT_NE(whole.find("skillrunner_tree_failed_files 0"), std::string::npos) << whole;

  tree_.Write("skillrunner.yaml", "providers: [not, a, map]\n");
  auto refused = client->Call(R"({"jsonrpc":"2.0","id":6,"method":"skills.reload"})");
  EXPECT_EQ(refused.at("error").at("code"), -32002) << json::serialize(refused);
  EXPECT_EQ(client->Call(InvokeLine(7, "echo2", "{}")).at("result").at("skill"), "echo2");
  serve.Signal(SIGTERM);
  EXPECT_EQ(serve.Wait(10s), 0) << serve.Stderr();
}

// A SIGHUP reload that fails is seen: each error logged at its file:line:col, health and /readyz
// carry last_reload (still ready: the old tree serves), health's `reloads` counts only reloads
// that put a tree in service, and the metrics count the failure apart.
TEST_F(ServeProbesTest, AFailedReloadIsLoggedAtItsPlaceAndHealthReadyzAndMetricsSaySo) {
  ServeProcess serve(tree_, Args());
  auto client = ConnectWhenReady(socket_);
  ASSERT_TRUE(client) << serve.Stderr();
  auto health = [&client] { return client->Call(R"({"jsonrpc":"2.0","id":1,"method":"health"})").at("result"); };
  auto metrics = [&client] { return client->Call(R"({"jsonrpc":"2.0","id":2,"method":"metrics"})").at("result"); };
  EXPECT_EQ(health().at("last_reload"), nullptr);
  const double started = metrics().at("tree_loaded_at").to_number<double>();
  tree_.Write("skills/hot/skill.yaml", kHotSkill);
  serve.Signal(SIGHUP);
  const json::value failed = WaitForLastReload(*client, false);
  ASSERT_TRUE(failed.is_object()) << json::serialize(failed);
  EXPECT_TRUE(ParseIsoUtc(failed.at("at").as_string()).has_value()) << json::serialize(failed);
  ASSERT_EQ(failed.at("failed").as_array().size(), 1u) << json::serialize(failed);
  const json::object& problem = failed.at("failed").at(0).as_object();
  EXPECT_EQ(problem.at("file"), json::value(hot_file_));
  EXPECT_EQ(problem.at("line"), 3);
  EXPECT_EQ(problem.at("col"), 14);
  EXPECT_EQ(problem.at("pointer"), "/temperature");
  EXPECT_EQ(problem.at("message"), "expected number, found string \"hot\"");
  EXPECT_EQ(health().at("status"), "ok");  // the old tree serves on
  EXPECT_EQ(health().at("reloads"), 0);
  auto ready = HttpGet(metrics_port_, "/readyz");
  EXPECT_EQ(ready.status, 200);
  EXPECT_EQ(json::parse(ready.body).at("last_reload"), failed) << ready.body;
  json::value figures = metrics();
  EXPECT_EQ(figures.at("reloads"), json::parse(R"({"ok":0,"failed":1})"));
  EXPECT_EQ(figures.at("tree_loaded_at").to_number<double>(), started);
  const std::string prometheus(figures.at("prometheus").as_string());
  EXPECT_NE(prometheus.find("\nskillrunner_reloads_total{kind=\"tree\",result=\"ok\"} 0\n"
                            "skillrunner_reloads_total{kind=\"tree\",result=\"failed\"} 1\n"
                            "skillrunner_reloads_total{kind=\"tls\",result=\"ok\"} 0\n"
                            "skillrunner_reloads_total{kind=\"tls\",result=\"failed\"} 0\n"),
            std::string::npos)
      << prometheus;
  EXPECT_EQ(client->Call(InvokeLine(3, "echo", R"({"a":1})")).at("result").at("output"), json::parse(R"({"a":1})"));

  std::filesystem::remove_all(tree_.Path("skills/hot"));
  serve.Signal(SIGHUP);
  const json::value fixed = WaitForLastReload(*client, true);
  ASSERT_TRUE(fixed.is_object()) << json::serialize(fixed);
  EXPECT_EQ(fixed.at("failed"), json::array{});
  EXPECT_EQ(health().at("reloads"), 1);
  figures = metrics();
  EXPECT_EQ(figures.at("reloads"), json::parse(R"({"ok":1,"failed":1})"));
  EXPECT_GT(figures.at("tree_loaded_at").to_number<double>(), started);
  serve.Signal(SIGTERM);
  EXPECT_EQ(serve.Wait(10s), 0);
  const std::string log = serve.Stderr();
  EXPECT_NE(log.find("reload refused: " + hot_file_ + ":3:14: /temperature: expected number, found string \"hot\"\n"),
            std::string::npos)
      << log;
}

// contact's descriptor at `version` with `output` as its output schema's properties and required list.
std::string ContactSkill(int version, const std::string& output) {
  return "id: contact\nversion: " + std::to_string(version) +
         "\nmodel: sim-model\ntemplate_type: LLM_JSON_GENERATION\n"
         "input_schema: { type: object, required: [text], properties: { text: { type: string } } }\n"
         "output_schema: { type: object, " +
         output + " }\nprompt: { user: \"Extract the name from: {{input.text}}\" }\n";
}

// A reload that changes a skill's schemas is announced to every open connection (skills.changed, with
// whether it breaks callers); a breaking one whose version did not rise is refused (breaking-change).
TEST_F(ServeProbesTest, ASchemaChangeIsAnnouncedAndABreakingOneNeedsAHigherVersion) {
  ServeProcess serve(tree_, Args());
  auto client = ConnectWhenReady(socket_);
  auto watcher = ConnectWhenReady(socket_);
  ASSERT_TRUE(client && watcher) << serve.Stderr();
  // Each answered once: the server has taken both connections before the reload (a slow build did not).
  for (auto* connection : {&*client, &*watcher}) {
    ASSERT_TRUE(connection->Call(R"({"jsonrpc":"2.0","id":0,"method":"health"})").as_object().contains("result"));
  }
  tree_.Write("skills/contact/skill.yaml",
              ContactSkill(1, "required: [name], properties: { name: { type: string }, email: { type: string } }"));
  serve.Signal(SIGHUP);
  auto added = watcher->ReadJson(10s);
  ASSERT_TRUE(added) << serve.Stderr();
  auto heard = client->ReadJson(10s);  // every open connection hears it
  ASSERT_TRUE(heard);
  EXPECT_EQ(*heard, *added);
  EXPECT_EQ(added->at("method"), "skills.changed");
  auto listed = client->Call(R"({"jsonrpc":"2.0","id":1,"method":"skills.list"})").at("result").as_array();
  auto contact =
      std::find_if(listed.begin(), listed.end(), [](const json::value& s) { return s.at("id") == "contact"; });
  ASSERT_NE(contact, listed.end());
  EXPECT_EQ(
      added->at("params"),
      (json::value{
          {"skill", "contact"}, {"version", 1}, {"schema_hash", contact->at("schema_hash")}, {"breaking", false}}));

  tree_.Write("skills/contact/skill.yaml", ContactSkill(1, "properties: { email: { type: string } }"));
  auto refused = client->Call(R"({"jsonrpc":"2.0","id":2,"method":"skills.reload"})");
  ASSERT_EQ(refused.at("error").at("code"), -32002) << json::serialize(refused);
  const json::array& diagnostics = refused.at("error").at("data").at("diagnostics").as_array();
  ASSERT_EQ(diagnostics.size(), 1u) << json::serialize(refused);
  EXPECT_EQ(diagnostics[0].at("code"), "breaking-change");
  EXPECT_EQ(diagnostics[0].at("pointer"), "/version");
  EXPECT_EQ(diagnostics[0].at("message"),
            "the schemas changed in a way that breaks callers, and version is still 1 (raise it): output /name: the "
            "member \"name\" was removed");

  tree_.Write("skills/contact/skill.yaml", ContactSkill(2, "properties: { email: { type: string } }"));
  serve.Signal(SIGHUP);
  auto removed = watcher->ReadJson(10s);  // the refused reload announced nothing
  ASSERT_TRUE(removed) << serve.Stderr();
  EXPECT_EQ(removed->at("params").at("version"), 2);
  EXPECT_EQ(removed->at("params").at("breaking"), true);
  serve.Signal(SIGTERM);
  EXPECT_EQ(serve.Wait(10s), 0);
}

TEST_F(ServeProbesTest, ProbesNeedNoTokenAndReadyzIs503WhileADrainWaitsForACallInFlight) {
  const std::uint16_t tcp_port = test_support::FreeLoopbackPort();
  ServeProcess serve(tree_, Args({"--listen", "127.0.0.1:" + std::to_string(tcp_port), "--drain-timeout-ms", "3000"}),
                     {"SKILLRUNNER_TOKEN=s3cret-token"});
  auto client = ConnectWhenReady(socket_);
  ASSERT_TRUE(client) << serve.Stderr();
  auto tcp = ConnectTcpWhenReady(tcp_port);
  ASSERT_TRUE(tcp) << serve.Stderr();
  EXPECT_EQ(tcp->Call(R"({"jsonrpc":"2.0","id":1,"method":"health"})").at("error").at("code"), -32001);
  auto live = HttpGet(metrics_port_, "/healthz");
  EXPECT_EQ(live.status, 200);
  EXPECT_EQ(live.body, R"({"status":"ok","state":"local","failed":[],"last_reload":null})");
  EXPECT_EQ(HttpGet(metrics_port_, "/readyz").status, 200);

  ASSERT_TRUE(client->Send(InvokeLine(2, "stuck", R"({"text":"x"})")));
  SocketClient watcher = *ConnectWhenReady(socket_);
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (watcher.Call(R"({"jsonrpc":"2.0","id":0,"method":"health"})").at("result").at("in_flight") != 1 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  watcher.Close();
  tcp->Close();
  serve.Signal(SIGTERM);
  HttpAnswer draining;
  for (deadline = std::chrono::steady_clock::now() + 2s; std::chrono::steady_clock::now() < deadline;) {
    if ((draining = HttpGet(metrics_port_, "/readyz")).status == 503) break;
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_EQ(draining.status, 503);
  EXPECT_EQ(draining.body, R"({"status":"draining","state":"local","failed":[],"last_reload":null})");
  EXPECT_EQ(HttpGet(metrics_port_, "/healthz").status, 200);  // alive: do not kill it mid-drain
  auto cancelled = client->ReadJson(10s);
  ASSERT_TRUE(cancelled);
  EXPECT_EQ(cancelled->at("error").at("data").at("code"), "CANCELLED") << json::serialize(*cancelled);
  EXPECT_EQ(serve.Wait(10s), 0) << serve.Stderr();
  EXPECT_EQ(test_support::ConnectToLoopback(metrics_port_), -1);  // closed once the drain is over
}

TEST(ProbeCommandTest, ExitsZeroOnA2xxAndOneOnAnythingElseWithOneLine) {
  TempTree dir;
  test_support::LoopbackServer server;
  server.SetDefault({.status = 204});
  const std::string url = server.base_url() + "/healthz";
  auto ok = test_support::Skillrunner(dir.root(), "probe " + url, "2>&1");
  EXPECT_EQ(ok.status, 0) << ok.out;
  EXPECT_EQ(ok.out, url + ": HTTP 204\n");
  server.SetDefault({.status = 500, .body = "{}"});
  auto failing = test_support::Skillrunner(dir.root(), "probe " + url, "2>&1");
  EXPECT_EQ(failing.status, 1);
  EXPECT_EQ(failing.out, "skillrunner probe: " + url + ": HTTP 500\n");
  const std::string nobody = "http://127.0.0.1:" + std::to_string(test_support::FreeLoopbackPort()) + "/readyz";
  auto refused = test_support::Skillrunner(dir.root(), "probe " + nobody + " --timeout-ms 2000", "2>&1");
  EXPECT_EQ(refused.status, 1);
  EXPECT_EQ(refused.out.rfind("skillrunner probe: " + nobody + ": ", 0), 0u) << refused.out;
  EXPECT_EQ(std::count(refused.out.begin(), refused.out.end(), '\n'), 1) << refused.out;
}

}  // namespace
}  // namespace skillrunner
