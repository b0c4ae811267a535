#include "runner/net/tls_server.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <array>
#include <boost/asio/ssl/context.hpp>

namespace skillrunner::net {
namespace ssl = boost::asio::ssl;

namespace {

// Mozilla's "intermediate" configuration (TLS 1.2 suites; TLS 1.3's are OpenSSL's defaults).
constexpr const char* kIntermediateCiphers =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:"
    "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:"
    "DHE-RSA-AES128-GCM-SHA256:DHE-RSA-AES256-GCM-SHA384:DHE-RSA-CHACHA20-POLY1305";

std::string Why(const boost::system::error_code& ec) {
  std::string reason = ec.message();
  return reason.empty() ? "OpenSSL error " + std::to_string(ec.value()) : reason;
}

// The subject (RFC 2253) and expiry of the context's certificate.
std::string DescribeCertificate(ssl::context& context) {
  X509* certificate = SSL_CTX_get0_certificate(context.native_handle());
  if (certificate == nullptr) return "no certificate";
  BIO* out = BIO_new(BIO_s_mem());
  X509_NAME_print_ex(out, X509_get_subject_name(certificate), 0, XN_FLAG_RFC2253);
  BIO_puts(out, ", valid until ");
  ASN1_TIME_print(out, X509_get0_notAfter(certificate));
  char* data = nullptr;
  const long size = BIO_get_mem_data(out, &data);
  std::string text(data, static_cast<std::size_t>(size));
  BIO_free(out);
  return text;
}

Result<std::shared_ptr<ssl::context>> MakeContext(const TlsFiles& files) {
  auto context = std::make_shared<ssl::context>(ssl::context::tls_server);
  SSL_CTX* native = context->native_handle();
  SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION);
  SSL_CTX_set_options(native, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_NO_COMPRESSION);
  SSL_CTX_set_cipher_list(native, kIntermediateCiphers);
  boost::system::error_code ec;
  context->use_certificate_chain_file(files.cert_file, ec);
  if (ec) return Fail(ErrorCode::kConfigInvalid, "--tls-cert " + files.cert_file + ": " + Why(ec));
  context->use_private_key_file(files.key_file, ssl::context::pem, ec);
  // OpenSSL checks the key against the certificate as it loads it ("key values mismatch").
  if (ec && ERR_GET_REASON(static_cast<unsigned long>(ec.value())) != X509_R_KEY_VALUES_MISMATCH) {
    return Fail(ErrorCode::kConfigInvalid, "--tls-key " + files.key_file + ": " + Why(ec));
  }
  if (ec || SSL_CTX_check_private_key(native) != 1) {
    return Fail(ErrorCode::kConfigInvalid,
                "--tls-key " + files.key_file + " is not the private key of --tls-cert " + files.cert_file);
  }
  if (!files.client_ca_file.empty()) {
    context->load_verify_file(files.client_ca_file, ec);
    if (ec) return Fail(ErrorCode::kConfigInvalid, "--tls-client-ca " + files.client_ca_file + ": " + Why(ec));
    context->set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert);
  }
  return context;
}

// The context's certificate's notAfter as Unix seconds; 0 when it has none.
std::int64_t NotAfter(ssl::context& context) {
  X509* certificate = SSL_CTX_get0_certificate(context.native_handle());
  if (certificate == nullptr) return 0;
  int days = 0;
  int seconds = 0;
  ASN1_TIME* epoch = ASN1_TIME_set(nullptr, 0);
  const bool ok = ASN1_TIME_diff(&days, &seconds, epoch, X509_get0_notAfter(certificate)) == 1;
  ASN1_TIME_free(epoch);
  return ok ? std::int64_t{days} * 86400 + seconds : 0;
}

}  // namespace

Result<std::shared_ptr<TlsServer>> TlsServer::Load(TlsFiles files) {
  if (files.key_file.empty()) return Fail(ErrorCode::kConfigInvalid, "--tls-cert needs --tls-key");
  auto server = std::shared_ptr<TlsServer>(new TlsServer(std::move(files)));
  auto context = MakeContext(server->files_);
  if (!context) return std::unexpected(std::move(context.error()));
  server->current_ = std::move(*context);
  server->stamps_ = server->Stamps();
  server->describe_ = DescribeCertificate(*server->current_);
  server->expires_at_ = NotAfter(*server->current_);
  return server;
}

std::array<TlsServer::Stamp, 3> TlsServer::Stamps() const {
  std::array<Stamp, 3> out;
  const std::array<const std::string*, 3> paths{&files_.cert_file, &files_.key_file, &files_.client_ca_file};
  for (std::size_t i = 0; i < paths.size(); ++i) {
    std::error_code ec;
    if (paths[i]->empty()) continue;
    // A Kubernetes Secret volume swaps a symbolic link: the time of what it points at now.
    auto time = std::filesystem::last_write_time(std::filesystem::canonical(*paths[i], ec), ec);
    if (!ec) out[i] = time;
  }
  return out;
}

std::shared_ptr<ssl::context> TlsServer::Current() const {
  std::lock_guard lock(mutex_);
  return current_;
}

std::string TlsServer::Describe() const {
  std::lock_guard lock(mutex_);
  return describe_;
}

std::int64_t TlsServer::ExpiresAt() const {
  std::lock_guard lock(mutex_);
  return expires_at_;
}

Result<bool> TlsServer::Reload(bool force) {
  auto stamps = Stamps();
  {
    std::lock_guard lock(mutex_);
    if (!force && stamps == stamps_) return false;
  }
  auto context = MakeContext(files_);
  std::lock_guard lock(mutex_);
  stamps_ = stamps;  // a broken pair is reported once, not again at every look until it changes
  if (!context) return std::unexpected(std::move(context.error()));
  current_ = std::move(*context);
  describe_ = DescribeCertificate(*current_);
  expires_at_ = NotAfter(*current_);
  return true;
}

std::optional<std::string> VerifiedClientSubject(SSL* ssl) {
  if (ssl == nullptr || SSL_get_verify_result(ssl) != X509_V_OK) return std::nullopt;
  X509* certificate = SSL_get_peer_certificate(ssl);
  if (certificate == nullptr) return std::nullopt;
  BIO* out = BIO_new(BIO_s_mem());
  X509_NAME_print_ex(out, X509_get_subject_name(certificate), 0, XN_FLAG_RFC2253);
  char* data = nullptr;
  const long size = BIO_get_mem_data(out, &data);
  std::string text(data, static_cast<std::size_t>(size));
  BIO_free(out);
  X509_free(certificate);
  return text;
}

}  // namespace skillrunner::net
