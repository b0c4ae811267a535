#include "runner/net/peer.h"

#include <algorithm>

#include "runner/net/token.h"

namespace skillrunner::net {
namespace {

std::unexpected<Refusal> Refuse(Refusal::Kind kind, std::string message) {
  return std::unexpected(Refusal{kind, std::move(message)});
}

// The caller `token` names, or nullopt when it is no one's.
std::optional<Peer> PeerOfToken(const IdentityRule& rule, std::string_view token) {
  if (!rule.admin_token.empty() && TokensEqual(token, rule.admin_token)) return Peer{true, "", Via::kToken};
  for (const Tenant& tenant : rule.tenants) {
    if (!tenant.token.empty() && TokensEqual(token, tenant.token)) return Peer{false, tenant.name, Via::kToken};
  }
  return std::nullopt;
}

}  // namespace

std::string_view ViaName(Via via) {
  switch (via) {
    case Via::kUnixSocket:
      return "unix_socket";
    case Via::kToken:
      return "token";
    case Via::kCertificate:
      return "certificate";
    case Via::kOpen:
      break;
  }
  return "open";
}

TransportPeer PeerOfTransport(const IdentityRule& rule, const Transport& transport) {
  if (transport.certificate_subject) {
    const std::string& subject = *transport.certificate_subject;
    for (const Tenant& tenant : rule.tenants) {
      if (!tenant.tls_subject.empty() && tenant.tls_subject == subject) {
        return Peer{false, tenant.name, Via::kCertificate};
      }
    }
    if (std::find(rule.admin_subjects.begin(), rule.admin_subjects.end(), subject) != rule.admin_subjects.end()) {
      return Peer{true, "", Via::kCertificate};
    }
    return Refuse(Refusal::Kind::kNotATenant,
                  "certificate subject " + subject + " is no tenant's and not an admin subject");
  }
  if (transport.unix_socket) return Peer{true, "", Via::kUnixSocket};
  if (rule.Open()) return Peer{true, "", Via::kOpen};
  return std::optional<Peer>();
}

std::expected<Peer, Refusal> Identify(const IdentityRule& rule, const TransportPeer& connection,
                                      std::string_view token) {
  if (!connection) return std::unexpected(connection.error());
  const std::optional<Peer>& known = *connection;
  if (token.empty()) {
    if (known) return *known;
    return Refuse(Refusal::Kind::kNoToken, "a valid token is required");
  }
  std::optional<Peer> named = PeerOfToken(rule, token);
  if (!named) {
    // A listener with no token and no tenant configured knows none: any token changes nothing.
    if (rule.Open() && known && known->via != Via::kCertificate) return *known;
    return Refuse(Refusal::Kind::kWrongToken, "the token is wrong");
  }
  if (known && known->via == Via::kCertificate) {
    if (named->admin != known->admin || named->tenant != known->tenant) {
      return Refuse(Refusal::Kind::kTokenMismatch,
                    "the token names " + named->Name() + " but the client certificate names " + known->Name());
    }
    return *known;
  }
  return *named;
}

}  // namespace skillrunner::net
