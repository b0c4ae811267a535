#pragma once

// Who is calling, by one rule on every listener (design.md §12.1): serve's
// JSON-lines socket, /mcp, the metrics endpoint and `view` all ask Identify.
//   - A verified client certificate whose subject a tenant names
//     (tenants.<name>.tls_subject) is that tenant.
//   - A certificate that names no tenant is the admin only when its subject
//     is one of tls.admin_subjects; otherwise every request is refused:
//     "certificate subject S is no tenant's and not an admin subject".
//   - A token sent with a certificate must name the same caller, else the
//     request is refused.
//   - Without a certificate the token decides: SKILLRUNNER_TOKEN is the admin,
//     a tenant's token that tenant, any other is refused. A Unix socket
//     (guarded by its file mode) and a listener with neither tokens nor
//     tenants configured need none (the latter ignores one).

#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "services/common/error.h"

namespace skillrunner::net {

struct Tenant {
  std::string name;
  std::string token;        // "" when the tenant is known by its certificate only
  std::string tls_subject;  // its client certificate's subject (RFC 2253), or ""
};

struct IdentityRule {
  std::string admin_token;  // SKILLRUNNER_TOKEN; "" for none
  std::vector<Tenant> tenants;
  std::vector<std::string> admin_subjects;  // tls.admin_subjects (RFC 2253)

  // No token and no tenant configured: every caller is the admin.
  bool Open() const { return admin_token.empty() && tenants.empty(); }
};

// How a caller was told apart.
enum class Via { kOpen, kUnixSocket, kToken, kCertificate };
std::string_view ViaName(Via via);  // "open", "unix_socket", "token", "certificate"

struct Peer {
  bool admin = false;
  std::string tenant;  // "" for the admin
  Via via = Via::kOpen;

  std::string Name() const { return admin ? "admin" : tenant; }
  friend bool operator==(const Peer&, const Peer&) = default;
};

// What the connection itself says about its caller.
struct Transport {
  bool unix_socket = false;
  std::optional<std::string> certificate_subject;  // a verified client certificate's (RFC 2253)
};

// Why a request was refused: each listener answers in its own protocol
// (-32001 on the socket, 401 over HTTP) with Refusal::message.
struct Refusal {
  enum class Kind {
    kNoToken,        // nothing identifies the caller: a token is needed
    kWrongToken,     // the token is no one's
    kNotATenant,     // a certificate that is no tenant's and not an admin subject
    kTokenMismatch,  // a token naming another caller than the certificate
  };
  Kind kind;
  std::string message;
};

// Who the connection alone makes its caller, decided once at the handshake:
// a peer (a certificate's tenant or admin subject, a Unix socket, an open
// listener), nullopt when it says nothing and a token must, or a Refusal
// (kNotATenant) that every request on the connection then gets.
using TransportPeer = std::expected<std::optional<Peer>, Refusal>;
TransportPeer PeerOfTransport(const IdentityRule& rule, const Transport& transport);

// Who sent one request: `token` ("" when it carries none) names the caller and
// must agree with a certificate's; without a token the connection's peer.
std::expected<Peer, Refusal> Identify(const IdentityRule& rule, const TransportPeer& connection,
                                      std::string_view token);

}  // namespace skillrunner::net
