// `skillrunner view` as a user runs it: a real process on a loopback port,
// real HTTP; the token rules; `--export` (design.md §11.3).
#include <gtest/gtest.h>
#include <signal.h>

#include <boost/json/parse.hpp>
#include <fstream>
#include <sstream>

#include "runner/eval/history/history.h"
#include "tests/runner/eval/report_test_records.h"
#include "tests/support/child_process.h"
#include "tests/support/cli_runner.h"
#include "tests/support/http_fetch.h"
#include "tests/support/temp_tree.h"
#include "tests/support/test_pki.h"

namespace skillrunner {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;
using test_support::ChildProcess;
using test_support::CleanEnvironment;
using test_support::HttpReply;
using test_support::Skillrunner;

HttpReply Http(std::uint16_t port, const std::string& target, const std::string& headers = "Host: 127.0.0.1\r\n") {
  return test_support::HttpFetch(port, target, headers);
}

std::string ReadFile(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

class ViewCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto history = eval::History::Open(file_);
    ASSERT_TRUE(history.has_value()) << history.error().message;
    for (int night = 1; night <= 2; ++night) {
      const std::string run = "r" + std::to_string(night);
      json::object summary{{"run_id", run},
                           {"suite", "nightly"},
                           {"started_at", "2025-01-0" + std::to_string(night)},
                           {"status", "pass"},
                           {"breaches", json::array()}};
      json::object record = night == 1 ? testing::PassRecord("extract", "c1") : testing::FailRecord("extract", "c1");
      record["result"].as_object()["output"] = json::object{{"name", "<script>alert(1)</script>"}};
      ASSERT_TRUE((*history)->RecordRun(eval::RunSummary::FromJson(summary), {record}).has_value());
    }
  }

  // Starts `view ARGS` and waits (at most 10 s) for its "view: http://HOST:PORT/" line; 0 when it never came.
  std::uint16_t Start(const std::vector<std::string>& args, const std::vector<std::string>& env = {}) {
    std::vector<std::string> argv{"view", "--history", file_.string(), "--listen", "127.0.0.1:0"};
    argv.insert(argv.end(), args.begin(), args.end());
    child_ = std::make_unique<ChildProcess>(SKILLRUNNER_BINARY, argv, CleanEnvironment(env), tree_.root(),
                                            std::filesystem::path(), stderr_);
    return test_support::WaitForViewPort(stderr_, 10s);
  }

  testing::TempTree tree_;
  std::filesystem::path file_ = tree_.Path("eval-history.sqlite");
  std::filesystem::path stderr_ = tree_.Path("view.stderr");
  std::unique_ptr<ChildProcess> child_;
};

TEST_F(ViewCliTest, ServesPagesAssetsAndTheApiOnLoopbackThenStopsOnSigterm) {
  const std::uint16_t port = Start({});
  ASSERT_NE(port, 0) << ReadFile(stderr_);
  HttpReply page = Http(port, "/runs/r2");
  EXPECT_EQ(page.status, 200);
  EXPECT_NE(page.head.find("Content-Security-Policy: default-src 'self'"), std::string::npos) << page.head;
  EXPECT_NE(page.body.find("<script src=\"/assets/app.js\"></script>"), std::string::npos) << page.body;
  HttpReply script = Http(port, "/assets/app.js");
  EXPECT_EQ(script.status, 200);
  EXPECT_NE(script.head.find("Content-Type: text/javascript; charset=utf-8"), std::string::npos);
  HttpReply api = Http(port, "/api/runs/r2");
  ASSERT_EQ(api.status, 200) << api.body;
  EXPECT_EQ(json::parse(api.body).at("run").at("baseline_run_id"), "r1");
  HttpReply missing = Http(port, "/api/runs/r%2F9");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(json::parse(missing.body).at("error").at("message"),
            json::value("run r/9 is not in the history " + file_.string()));
  EXPECT_EQ(Http(port, "/nothing/here").status, 404);
  // A name that is not loopback in Host: a page elsewhere reaching us through a rebound DNS name.
  HttpReply rebound = Http(port, "/api/suites", "Host: attacker.example:8321\r\n");
  EXPECT_EQ(rebound.status, 403);
  child_->Signal(SIGTERM);
  EXPECT_EQ(child_->Wait(10s), 0);
}

TEST_F(ViewCliTest, WithATokenEveryRequestNeedsItAndALinkSetsACookie) {
  std::ofstream(tree_.Path("token")) << "s3cret-token\n";
  const std::uint16_t port = Start({"--token-file", tree_.Path("token").string()});
  ASSERT_NE(port, 0) << ReadFile(stderr_);
  HttpReply none = Http(port, "/api/suites");
  EXPECT_EQ(none.status, 401);
  EXPECT_EQ(json::parse(none.body).at("error").at("code"), "UNAUTHORIZED");
  EXPECT_EQ(Http(port, "/api/suites", "Host: 127.0.0.1\r\nAuthorization: Bearer wrong\r\n").status, 401);
  EXPECT_EQ(Http(port, "/api/suites", "Host: 127.0.0.1\r\nAuthorization: Bearer s3cret-token\r\n").status, 200);
  HttpReply link = Http(port, "/runs/r2?token=s3cret-token&x=1");
  EXPECT_EQ(link.status, 303);
  EXPECT_NE(link.head.find("Location: /runs/r2?x=1"), std::string::npos) << link.head;
  EXPECT_NE(link.head.find("Set-Cookie: skillrunner_view_token=s3cret-token; Path=/; HttpOnly; SameSite=Strict"),
            std::string::npos)
      << link.head;
  EXPECT_EQ(
      Http(port, "/api/runs/r2", "Host: 127.0.0.1\r\nCookie: a=b; skillrunner_view_token=s3cret-token\r\n").status,
      200);
  EXPECT_EQ(ReadFile(stderr_).find("s3cret"), std::string::npos);
}

TEST_F(ViewCliTest, AnAddressOthersCanReachNeedsAllowRemoteAndAToken) {
  auto refused = Skillrunner(tree_.root(), "view --history " + file_.string() + " --listen 0.0.0.0:0", "2>&1");
  EXPECT_EQ(refused.status, 2);
  EXPECT_EQ(refused.out,
            "skillrunner view: --listen 0.0.0.0:0 is not a loopback address: add --allow-remote (with a token) to "
            "serve the history to other machines\n");
  auto tokenless =
      Skillrunner(tree_.root(), "view --history " + file_.string() + " --listen 0.0.0.0:0 --allow-remote", "2>&1");
  EXPECT_EQ(tokenless.status, 2);
  EXPECT_EQ(tokenless.out,
            "skillrunner view: --listen 0.0.0.0:0 with --allow-remote needs a token: --token-file FILE, or "
            "SKILLRUNNER_TOKEN\n");
  auto no_history = Skillrunner(tree_.root(), "view --history missing.sqlite", "2>&1");
  EXPECT_EQ(no_history.status, 2);
  EXPECT_EQ(no_history.out, "skillrunner view: cannot open eval history missing.sqlite: no such file\n");
}

TEST_F(ViewCliTest, WrongOptionsAreRefusedWithWhatIsWrong) {
  auto refused = [this](const std::string& args) { return Skillrunner(tree_.root(), "view " + args, "2>&1"); };
  auto no_history = refused("");
  EXPECT_EQ(no_history.status, 2);
  EXPECT_EQ(no_history.out,
            "skillrunner view: give the history: --history FILE|URL, or history: in skillrunner.yaml (eval writes "
            "DIR/../eval-history.sqlite)\n");
  auto no_token_file = refused("--history " + file_.string() + " --token-file missing-token");
  EXPECT_EQ(no_token_file.status, 2);
  EXPECT_EQ(no_token_file.out, "skillrunner view: cannot read --token-file missing-token\n");
  std::ofstream(tree_.Path("blank-token")) << "   \n";
  auto blank_token = refused("--history " + file_.string() + " --token-file blank-token");
  EXPECT_EQ(blank_token.status, 2);
  EXPECT_EQ(blank_token.out, "skillrunner view: --token-file blank-token holds no token\n");
  auto bad_listen = refused("--history " + file_.string() + " --listen nonsense");
  EXPECT_EQ(bad_listen.status, 2);
  EXPECT_EQ(bad_listen.out, "skillrunner view: --listen: expected HOST:PORT, got \"nonsense\"\n");
  // The config's history: is the default; --history wins over it.
  tree_.Write("skillrunner.yaml", "history: " + file_.string() + "\n");
  auto from_config = refused("--export from-config");
  EXPECT_EQ(from_config.status, 0) << from_config.out;
  auto flag_wins = refused("--history missing.sqlite --export flag-wins");
  EXPECT_EQ(flag_wins.out, "skillrunner view: cannot open eval history missing.sqlite: no such file\n");
}

TEST_F(ViewCliTest, ExportWritesPagesThatCarryTheirDataWithEveryLessThanEscaped) {
  auto exported = Skillrunner(tree_.root(), "view --history " + file_.string() + " --export site", "2>&1");
  ASSERT_EQ(exported.status, 0) << exported.out;
  EXPECT_EQ(exported.out, "view: wrote 7 page(s) to site (open index.html)\n");
  for (const char* file : {"index.html", "rollouts.html", "assets/app.js", "assets/app.css", "suites/nightly.html",
                           "runs/r1.html", "runs/r2.html", "compare/r2__r1.html", "cases/nightly__extract__c1.html"}) {
    EXPECT_TRUE(std::filesystem::is_regular_file(tree_.Path("site") / file)) << file;
  }
  const std::string compare = ReadFile(tree_.Path("site/compare/r2__r1.html"));
  EXPECT_NE(compare.find("<body data-root=\"../\" data-page=\"compare\">"), std::string::npos) << compare;
  EXPECT_NE(compare.find("\\u003cscript\\u003ealert(1)\\u003c/script\\u003e"), std::string::npos);
  EXPECT_EQ(compare.find("<script>alert"), std::string::npos);
  const std::string begin = "<script type=\"application/json\" id=\"page-data\">";
  const std::size_t at = compare.find(begin);
  ASSERT_NE(at, std::string::npos);
  const std::size_t end = compare.find("</script>", at);
  json::value data = json::parse(compare.substr(at + begin.size(), end - at - begin.size()));
  EXPECT_EQ(data.at("flips").at(0).at("a").at("output").at("name"), "<script>alert(1)</script>");
}

}  // namespace
}  // namespace skillrunner

namespace skillrunner {
namespace {

// design.md §11.8: view --tls-cert serves HTTPS (curl checks the certificate against the test CA);
// plain HTTP gets no page.
TEST_F(ViewCliTest, WithACertificateTheViewerServesHttps) {
  testing::TempTree pki_dir;
  test_support::TestPki pki(pki_dir);
  pki.Issue("server", "/CN=localhost");
  const std::uint16_t port = Start({"--tls-cert", pki.Path("server.pem"), "--tls-key", pki.Path("server.key")});
  ASSERT_NE(port, 0u) << ReadFile(stderr_);
  EXPECT_NE(ReadFile(stderr_).find("view: https://127.0.0.1:" + std::to_string(port) + "/\n"), std::string::npos);
  const std::string base = "https://127.0.0.1:" + std::to_string(port);
  EXPECT_EQ(test_support::Shell("curl -sf --cacert " + test_support::ShellQuote(pki.Path("ca.pem")) + " " + base +
                                "/api/suites | grep -q nightly"),
            0);
  HttpReply plain = Http(port, "/api/suites");  // design.md §12.1: plain HTTP is told why
  EXPECT_EQ(plain.status, 400);
  EXPECT_EQ(plain.body, "this listener requires TLS: connect with --tls / tls=True\n");
}

// design.md §12.1: one identity rule, as on serve's listeners: a tenant's certificate is that tenant (the
// access log names it), one of tls.admin_subjects the admin, any other refused with the rule's words, and
// a token must name the certificate's caller.
TEST_F(ViewCliTest, WithClientCertificatesATenantsCertificateIsThatTenant) {
  testing::TempTree pki_dir;
  test_support::TestPki pki(pki_dir);
  pki.Issue("server", "/CN=localhost");
  pki.Issue("billing", "/O=Example/CN=billing");
  pki.Issue("laptop", "/O=Example/CN=laptop");
  tree_.Write("skillrunner.yaml",
              "tls:\n  admin_subjects: [\"CN=ops,O=Example\"]\n"
              "tenants:\n  billing: { tls_subject: \"CN=billing,O=Example\" }\n"
              "  ledger: { token_env: LEDGER_TOKEN }\n");
  const std::uint16_t port = Start({"--tls-cert", pki.Path("server.pem"), "--tls-key", pki.Path("server.key"),
                                    "--tls-client-ca", pki.Path("ca.pem"), "--log-level", "info"},
                                   {"LEDGER_TOKEN=ledger-secret"});
  ASSERT_NE(port, 0u) << ReadFile(stderr_);
  auto as = [&](const std::string& who, const std::string& token) {
    const std::string out = tree_.Path(who + ".out").string();
    test_support::Shell("curl -s -w ' %{http_code}' --cacert " + test_support::ShellQuote(pki.Path("ca.pem")) +
                        " --cert " + test_support::ShellQuote(pki.Path(who + ".pem")) + " --key " +
                        test_support::ShellQuote(pki.Path(who + ".key")) +
                        (token.empty() ? "" : " -H 'Authorization: Bearer " + token + "'") + " https://127.0.0.1:" +
                        std::to_string(port) + "/api/suites > " + test_support::ShellQuote(out));
    return ReadFile(out);
  };
  EXPECT_TRUE(as("billing", "").ends_with(" 200")) << as("billing", "");
  EXPECT_EQ(as("laptop", ""),
            R"({"error":{"code":"FORBIDDEN","message":"certificate subject CN=laptop,O=Example is no tenant's and )"
            R"(not an admin subject"}})"
            "\n 403");
  EXPECT_EQ(as("billing", "ledger-secret"),
            R"({"error":{"code":"FORBIDDEN","message":"the token names ledger but the client certificate names )"
            R"(billing"}})"
            "\n 403");
  child_->Signal(SIGTERM);
  EXPECT_EQ(child_->Wait(10s), 0);
  const std::string log = ReadFile(stderr_);
  EXPECT_NE(log.find(" billing GET /api/suites 200"), std::string::npos) << log;
  EXPECT_NE(log.find(" - GET /api/suites 403"), std::string::npos) << log;
}

// A tenant whose token variable is unset where the viewer runs (serve's tokens often are not) is
// known by its certificate only, said at start; the viewer serves.
TEST_F(ViewCliTest, ATenantWhoseTokenIsUnsetIsKnownByItsCertificateOnly) {
  testing::TempTree pki_dir;
  test_support::TestPki pki(pki_dir);
  pki.Issue("server", "/CN=localhost");
  tree_.Write("skillrunner.yaml", "tenants:\n  ledger: { token_env: LEDGER_TOKEN }\n");
  const std::uint16_t port = Start({"--tls-cert", pki.Path("server.pem"), "--tls-key", pki.Path("server.key"),
                                    "--tls-client-ca", pki.Path("ca.pem")});
  ASSERT_NE(port, 0u) << ReadFile(stderr_);
  EXPECT_NE(ReadFile(stderr_).find(
                "view: tenant ledger's token_env LEDGER_TOKEN is not set: it is known by its certificate only\n"),
            std::string::npos)
      << ReadFile(stderr_);
  child_->Signal(SIGTERM);
  EXPECT_EQ(child_->Wait(10s), 0);
}

}  // namespace
}  // namespace skillrunner
