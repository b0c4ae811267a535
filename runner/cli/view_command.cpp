#include "runner/cli/view_command.h"

#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "runner/cli/environment.h"
#include "runner/eval/history/history_reader.h"
#include "runner/net/address.h"
#include "runner/view/view_export.h"
#include "runner/view/view_server.h"
#include "services/common/env.h"

namespace skillrunner::cli {
namespace {

constexpr int kViewError = 2;

struct ViewOptions {
  std::string history;
  std::string listen = "127.0.0.1:8321";
  bool allow_remote = false;
  std::string token_file;
  std::string export_dir;
  std::size_t runs = 100;
  net::TlsFiles tls;
};

int Refuse(const std::string& message) {
  std::fprintf(stderr, "skillrunner view: %s\n", message.c_str());
  return kViewError;
}

// The token: the file's first line (--token-file), else SKILLRUNNER_TOKEN; nullopt when neither.
Result<std::optional<std::string>> ReadToken(const ViewOptions& options) {
  if (options.token_file.empty()) {
    auto token = ProcessEnv("SKILLRUNNER_TOKEN");
    if (token && !token->empty()) return token;
    return std::optional<std::string>();
  }
  std::ifstream in(options.token_file);
  std::string line;
  if (!in || !std::getline(in, line))
    return Fail(ErrorCode::kConfigInvalid, "cannot read --token-file " + options.token_file);
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  if (line.empty()) return Fail(ErrorCode::kConfigInvalid, "--token-file " + options.token_file + " holds no token");
  return std::optional<std::string>(line);
}

// design.md §12.1: who may look. With a token or client certificates the config's tenants and
// tls.admin_subjects count as on serve's listeners; with neither the viewer is open, loopback only.
Result<net::IdentityRule> Identity(const CommonOptions& common, const ViewOptions& options,
                                   const std::optional<std::string>& token) {
  net::IdentityRule identity;
  if (!token && options.tls.client_ca_file.empty()) return identity;
  identity.admin_token = token.value_or("");
  auto config = ResolveConfig(common);
  if (!config) {
    return Fail(ErrorCode::kConfigInvalid,
                config.error().empty() ? "the config does not load" : config.error().front().ToString());
  }
  // The viewer often runs where serve's tenant tokens are not set: such a tenant is known by its
  // certificate only here, said once.
  std::vector<std::string> unset;
  auto tenants = TenantTokens(*config, &unset);
  if (!tenants) return std::unexpected(std::move(tenants.error()));
  for (const std::string& name : unset) {
    std::fprintf(stderr, "view: tenant %s's token_env %s is not set: it is known by its certificate only\n",
                 name.c_str(), config->tenants.at(name).token_env.c_str());
  }
  identity.tenants = std::move(*tenants);
  identity.admin_subjects = config->tls_admin_subjects;
  return identity;
}

int Export(eval::HistoryReader& history, const ViewOptions& options) {
  auto pages = view::ExportView(history, options.export_dir, view::ExportOptions{options.runs, 20});
  if (!pages) return Refuse(pages.error().message);
  std::fprintf(stderr, "view: wrote %zu page(s) to %s (open index.html)\n", *pages, options.export_dir.c_str());
  return 0;
}

int Serve(std::unique_ptr<eval::HistoryReader> history, const ViewOptions& options, const CommonOptions& common) {
  auto listen = net::ParseListenAddress(options.listen);
  if (!listen) return Refuse("--listen: " + listen.error().message);
  auto token = ReadToken(options);
  if (!token) return Refuse(token.error().message);
  if (!listen->address().is_loopback()) {
    if (!options.allow_remote) {
      return Refuse("--listen " + options.listen + " is not a loopback address: add --allow-remote (with a token) " +
                    "to serve the history to other machines");
    }
    if (!*token && options.tls.client_ca_file.empty()) {
      return Refuse("--listen " + options.listen +
                    " with --allow-remote needs a token: --token-file FILE, or SKILLRUNNER_TOKEN");
    }
  }
  auto identity = Identity(common, options, *token);
  if (!identity) return Refuse(identity.error().message);
  auto bound = view::ViewServer::Bind(view::ServerOptions{*listen, *identity, options.tls}, std::move(history));
  if (!bound) return Refuse(bound.error().message);
  view::ViewServer& viewer = **bound;
  auto ran = viewer.Run([&] {
    std::ostringstream address;
    address << listen->address();
    std::string host = listen->address().is_v6() ? "[" + address.str() + "]" : address.str();
    std::fprintf(stderr, "view: %s://%s:%u/\n", viewer.tls() ? "https" : "http", host.c_str(),
                 static_cast<unsigned>(viewer.port()));
    std::fflush(stderr);
  });
  if (!ran) return Refuse(ran.error().message);
  return 0;
}

int View(ViewOptions options, const CommonOptions& common) {
  options.history = HistoryLocation(common, options.history);
  if (options.history.empty()) {
    return Refuse(
        "give the history: --history FILE|URL, or history: in skillrunner.yaml (eval writes "
        "DIR/../eval-history.sqlite)");
  }
  auto history = eval::HistoryReader::Open(options.history);
  if (!history) return Refuse(history.error().message);
  if (!options.export_dir.empty()) return Export(**history, options);
  return Serve(std::move(*history), options, common);
}

}  // namespace

void AddViewCommand(CLI::App& app, const CommonOptions& common, std::function<int()>& chosen) {
  auto options = std::make_shared<ViewOptions>();
  auto* view = app.add_subcommand("view", "Serve a web viewer over an eval history (read-only), or --export its pages");
  view->add_option("--history", options->history,
                   "The eval history to look at: a file, or a postgresql:// URL (default: the config's history:)");
  view->add_option("--listen", options->listen, "HOST:PORT to serve on (default 127.0.0.1:8321; port 0: any free one)");
  view->add_flag("--allow-remote", options->allow_remote,
                 "Allow a --listen address other machines can reach (needs a token)");
  view->add_option("--token-file", options->token_file,
                   "File whose first line is the token every request must carry (default: $SKILLRUNNER_TOKEN)");
  auto* cert = view->add_option("--tls-cert", options->tls.cert_file, "PEM certificate (then its chain): serve HTTPS");
  auto* key = view->add_option("--tls-key", options->tls.key_file, "PEM private key of --tls-cert");
  auto* client_ca = view->add_option("--tls-client-ca", options->tls.client_ca_file,
                                     "PEM CAs client certificates must chain to (mutual TLS; a tenant's certificate is "
                                     "that tenant)");
  cert->needs(key);
  key->needs(cert);
  client_ca->needs(cert);
  view->add_option("--export", options->export_dir, "Write the pages as static files into DIR instead of serving them");
  view->add_option("--runs", options->runs, "Runs per suite to show (default 100)")->check(CLI::Range(1, 1000));
  view->callback([&chosen, &common, options] { chosen = [options, &common] { return View(*options, common); }; });
}

}  // namespace skillrunner::cli
