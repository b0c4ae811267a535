#pragma once

// TLS for every TCP listener of the process (design.md §11.8): TLS 1.2 and 1.3 only, Mozilla's
// "intermediate" ciphers, no renegotiation; client certificates verified when a client CA is given
// (mutual TLS). The files are re-read on SIGHUP and when they change: new connections get the new
// pair, open ones keep theirs, and a broken pair leaves the old one serving.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "services/common/error.h"

namespace boost::asio::ssl {
class context;
}  // namespace boost::asio::ssl
struct ssl_st;  // OpenSSL's SSL

namespace skillrunner::net {

struct TlsFiles {
  std::string cert_file;       // PEM: the certificate, then its chain
  std::string key_file;        // PEM: its private key
  std::string client_ca_file;  // PEM: the CAs client certificates must chain to; empty: no mutual TLS
  bool enabled() const { return !cert_file.empty(); }
};

class TlsServer {
 public:
  // CONFIG_INVALID naming the file that does not load, or saying the key is not the certificate's.
  static Result<std::shared_ptr<TlsServer>> Load(TlsFiles files);

  // The context a new connection handshakes with (thread-safe).
  std::shared_ptr<boost::asio::ssl::context> Current() const;
  // Loads the files again when one changed since the last load (any time with `force`): true when a new
  // pair now serves; the error (the old pair still serving) when the new files do not load.
  Result<bool> Reload(bool force);
  bool mutual() const { return !files_.client_ca_file.empty(); }
  const TlsFiles& files() const { return files_; }
  // The serving certificate's subject and expiry, for health and logs.
  std::string Describe() const;
  // When the serving certificate expires (its notAfter, Unix seconds).
  std::int64_t ExpiresAt() const;

 private:
  explicit TlsServer(TlsFiles files) : files_(std::move(files)) {}
  using Stamp = std::optional<std::filesystem::file_time_type>;
  std::array<Stamp, 3> Stamps() const;

  TlsFiles files_;
  mutable std::mutex mutex_;
  std::shared_ptr<boost::asio::ssl::context> current_;
  std::array<Stamp, 3> stamps_;
  std::string describe_;
  std::int64_t expires_at_ = 0;
};

// The subject (as RFC 2253 writes it: "CN=billing,O=Example", what tls_subject and
// tls.admin_subjects name) of the client certificate a finished handshake verified;
// nullopt when the client showed none or it did not verify.
std::optional<std::string> VerifiedClientSubject(ssl_st* ssl);

}  // namespace skillrunner::net
