#include <boost/asio/as_tuple.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/write.hpp>
#include <boost/json/parse.hpp>
#include <cstdio>
#include <cstdlib>

#include "runner/cli/serve_command.h"
#include "runner/net/address.h"
#include "services/common/json_text.h"

namespace skillrunner::cli {
namespace asio = boost::asio;
namespace json = boost::json;

namespace {

constexpr int kUsageStatus = 2;
constexpr int kUnreachableStatus = 3;

int Complain(int status, const std::string& message) {
  std::fprintf(stderr, "skillrunner call: %s\n", message.c_str());
  return status;
}

// The exit status for an answer, as `skillrunner run` would give it.
int StatusOf(const json::value& answer) {
  const json::object* object = answer.if_object();
  if (!object) return kUsageStatus;
  if (const json::value* error = object->if_contains("error")) {
    const json::value* code = error->is_object() ? error->as_object().if_contains("code") : nullptr;
    return ExitStatusForJsonRpcCode(code && code->is_int64() ? code->as_int64() : 0);
  }
  const json::value* result = object->if_contains("result");
  if (result && result->is_object()) {
    if (const json::value* review = result->as_object().if_contains("review"); review && ReviewFailed(*review)) {
      return 5;
    }
  }
  return 0;
}

template <class Socket>
int Exchange(asio::io_context& io, Socket& socket, const std::string& request, std::int64_t timeout_ms) {
  std::string answer;
  boost::system::error_code failure;
  asio::async_write(socket, asio::buffer(request), [&](boost::system::error_code ec, std::size_t) {
    if (ec) {
      failure = ec;
      return;
    }
    asio::async_read_until(socket, asio::dynamic_buffer(answer), '\n',
                           [&](boost::system::error_code read_ec, std::size_t) { failure = read_ec; });
  });
  if (timeout_ms > 0) {
    io.run_for(std::chrono::milliseconds(timeout_ms));
    if (!io.stopped()) return Complain(kUnreachableStatus, "no answer within " + std::to_string(timeout_ms) + " ms");
  } else {
    io.run();
  }
  auto newline = answer.find('\n');
  if (newline == std::string::npos) {
    // A hang-up shows as EOF, a broken pipe or a reset, depending on timing:
    // all the same to the user. Anything else is worth naming.
    bool hung_up = !failure || failure == asio::error::eof || failure == asio::error::broken_pipe ||
                   failure == asio::error::connection_reset;
    return Complain(kUnreachableStatus, "the server closed the connection without an answer" +
                                            (hung_up ? std::string() : " (" + failure.message() + ")"));
  }
  answer.resize(newline);
  boost::system::error_code ec;
  json::value parsed = json::parse(answer, ec);
  std::fwrite(answer.data(), 1, answer.size(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
  if (ec) return Complain(kUsageStatus, "the answer is not JSON: " + ec.message());
  return StatusOf(parsed);
}

// The client side of --tls: the server's certificate verified against --ca (else the system's
// CAs) and for `host` (an IP address or a name); --cert and --key when the server wants one.
std::expected<std::unique_ptr<asio::ssl::context>, std::string> ClientContext(const CallOptions& options) {
  auto context = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_client);
  SSL_CTX_set_min_proto_version(context->native_handle(), TLS1_2_VERSION);
  boost::system::error_code ec;
  if (options.ca_file.empty()) {
    context->set_default_verify_paths(ec);
  } else {
    context->load_verify_file(options.ca_file, ec);
  }
  if (ec) return std::unexpected("--ca " + options.ca_file + ": " + ec.message());
  context->set_verify_mode(asio::ssl::verify_peer);
  if (!options.cert_file.empty()) {
    context->use_certificate_chain_file(options.cert_file, ec);
    if (ec) return std::unexpected("--cert " + options.cert_file + ": " + ec.message());
    context->use_private_key_file(options.key_file, asio::ssl::context::pem, ec);
    if (ec) return std::unexpected("--key " + options.key_file + ": " + ec.message());
  }
  return context;
}

int CallOverTls(asio::io_context& io, asio::ip::tcp::socket& socket, const CallOptions& options,
                const std::string& host, const std::string& request) {
  auto context = ClientContext(options);
  if (!context) return Complain(kUsageStatus, context.error());
  asio::ssl::stream<asio::ip::tcp::socket&> stream(socket, **context);
  X509_VERIFY_PARAM* param = SSL_get0_param(stream.native_handle());
  boost::system::error_code ec;
  asio::ip::make_address(host, ec);
  if (!ec) {
    X509_VERIFY_PARAM_set1_ip_asc(param, host.c_str());
  } else {
    X509_VERIFY_PARAM_set1_host(param, host.c_str(), 0);
    SSL_set_tlsext_host_name(stream.native_handle(), host.c_str());
  }
  stream.handshake(asio::ssl::stream_base::client, ec);
  if (ec) return Complain(kUnreachableStatus, "TLS with " + options.connect + " failed: " + ec.message());
  return Exchange(io, stream, request, options.timeout_ms);
}

}  // namespace

int Call(const CallOptions& options) {
  json::object request{{"jsonrpc", "2.0"}, {"id", 1}, {"method", options.method}};
  if (!options.params.empty()) {
    auto params = ParseJsonText(options.params);
    if (!params) return Complain(kUsageStatus, "PARAMS is not valid JSON: " + params.error());
    request["params"] = std::move(*params);
  }
  asio::io_context io;
  boost::system::error_code ec;
  if (!options.connect.empty()) {
    auto endpoint = net::ParseListenAddress(options.connect);
    if (!endpoint) return Complain(kUsageStatus, "--connect " + endpoint.error().message);
    if (const char* token = std::getenv("SKILLRUNNER_TOKEN"); token && *token) request["auth"] = token;
    asio::ip::tcp::socket socket(io);
    socket.connect(*endpoint, ec);
    if (ec) return Complain(kUnreachableStatus, "cannot connect to " + options.connect + ": " + ec.message());
    socket.set_option(asio::ip::tcp::no_delay(true), ec);
    if (options.tls) {
      const std::string host = options.connect.substr(0, options.connect.rfind(':'));
      return CallOverTls(io, socket, options, host.starts_with("[") ? host.substr(1, host.size() - 2) : host,
                         CompactJson(request) + "\n");
    }
    return Exchange(io, socket, CompactJson(request) + "\n", options.timeout_ms);
  }
  if (options.socket.empty()) return Complain(kUsageStatus, "give --socket PATH or --connect HOST:PORT");
  asio::local::stream_protocol::socket socket(io);
  socket.connect(asio::local::stream_protocol::endpoint(options.socket), ec);
  if (ec) return Complain(kUnreachableStatus, "cannot connect to " + options.socket + ": " + ec.message());
  return Exchange(io, socket, CompactJson(request) + "\n", options.timeout_ms);
}

}  // namespace skillrunner::cli
