#pragma once

// Internal to services/http (includes Asio SSL): never include it from a
// header outside services/http.

#include <boost/asio/ssl/context.hpp>
#include <expected>
#include <memory>
#include <string>

#include "services/common/error.h"
#include "services/http/http_client.h"

namespace skillrunner::http {

// The client's TLS settings, shared by every connection: peers verified
// against the system store plus options.ca_file, unless tls_verify is false.
// The error (CONFIG_INVALID) names the CA file that could not be loaded.
Result<std::shared_ptr<boost::asio::ssl::context>> MakeTlsContext(const HttpClientOptions& options);

// Text for a failed handshake: OpenSSL's reason, plus the certificate
// verification result when that is what failed.
std::string DescribeTlsError(const boost::system::error_code& ec, long verify_result);

}  // namespace skillrunner::http
