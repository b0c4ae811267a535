#include "services/http/tls_context.h"

#include <openssl/err.h>
#include <openssl/x509.h>

#include <boost/asio/error.hpp>
#include <boost/asio/ssl/error.hpp>

namespace skillrunner::http {

namespace ssl = boost::asio::ssl;

namespace {

// The client certificate and key of `options`, when it names them.
Result<std::shared_ptr<ssl::context>> WithClientCertificate(std::shared_ptr<ssl::context> context,
                                                            const HttpClientOptions& options) {
  if (options.client_cert_file.empty()) return context;
  boost::system::error_code ec;
  context->use_certificate_chain_file(options.client_cert_file, ec);
  if (ec) {
    return Fail(ErrorCode::kConfigInvalid, "cannot load the client certificate " + options.client_cert_file + ": " +
                                               DescribeTlsError(ec, X509_V_OK));
  }
  context->use_private_key_file(options.client_key_file, ssl::context::pem, ec);
  if (ec) {
    return Fail(ErrorCode::kConfigInvalid,
                "cannot load the client key " + options.client_key_file + ": " + DescribeTlsError(ec, X509_V_OK));
  }
  return context;
}

}  // namespace

Result<std::shared_ptr<ssl::context>> MakeTlsContext(const HttpClientOptions& options) {
  auto context = std::make_shared<ssl::context>(ssl::context::tls_client);
  boost::system::error_code ec;
  context->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                           ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1,
                       ec);
  if (!options.tls_verify) {
    context->set_verify_mode(ssl::verify_none, ec);
    return context;
  }
  context->set_verify_mode(ssl::verify_peer, ec);
  // A missing system store is not fatal on its own: ca_file may be enough.
  context->set_default_verify_paths(ec);
  if (!options.ca_file.empty()) {
    context->load_verify_file(options.ca_file, ec);
    if (ec) {
      return Fail(ErrorCode::kConfigInvalid,
                  "cannot load CA file " + options.ca_file + ": " + DescribeTlsError(ec, X509_V_OK));
    }
  }
  return WithClientCertificate(std::move(context), options);
}

std::string DescribeTlsError(const boost::system::error_code& ec, long verify_result) {
  std::string text;
  if (ec.category() == boost::asio::error::get_ssl_category()) {
    const char* reason = ERR_reason_error_string(static_cast<unsigned long>(ec.value()));
    text = reason != nullptr ? reason : ec.message();
  } else if (ec == ssl::error::stream_truncated) {
    text = "connection closed during the handshake";
  } else {
    text = ec.message();
  }
  if (verify_result != X509_V_OK) {
    text += " (";
    text += X509_verify_cert_error_string(verify_result);
    text += ")";
  }
  return text;
}

}  // namespace skillrunner::http
