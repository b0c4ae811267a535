// design.md §12.1: one identity rule for every listener. A certificate's
// tenant, an admin subject, a refused subject, a token that must agree with the
// certificate, a Unix socket and an open listener.
#include "runner/net/peer.h"

#include <gtest/gtest.h>

namespace skillrunner::net {
namespace {

const std::string kLedger = "CN=ledger,O=Example";
const std::string kOps = "CN=ops,O=Example";
const std::string kStranger = "CN=laptop,O=Example";

IdentityRule Rule() {
  IdentityRule rule;
  rule.admin_token = "admin-secret";
  rule.tenants = {{"ledger", "ledger-secret", kLedger}, {"billing", "billing-secret", ""}};
  rule.admin_subjects = {kOps};
  return rule;
}

Transport Certificate(const std::string& subject) { return Transport{false, subject}; }

TEST(PeerTest, ACertificateIsItsTenantOrAnAdminSubjectOrRefused) {
  const IdentityRule rule = Rule();
  EXPECT_EQ(PeerOfTransport(rule, Certificate(kLedger)).value(),
            std::optional<Peer>(Peer{false, "ledger", Via::kCertificate}));
  EXPECT_EQ(PeerOfTransport(rule, Certificate(kOps)).value(), std::optional<Peer>(Peer{true, "", Via::kCertificate}));
  const TransportPeer stranger = PeerOfTransport(rule, Certificate(kStranger));
  ASSERT_FALSE(stranger.has_value());
  EXPECT_EQ(stranger.error().kind, Refusal::Kind::kNotATenant);
  EXPECT_EQ(stranger.error().message,
            "certificate subject CN=laptop,O=Example is no tenant's and not an admin subject");
  // Every request on that connection is refused, a valid token included.
  EXPECT_EQ(Identify(rule, stranger, "admin-secret").error().kind, Refusal::Kind::kNotATenant);
  EXPECT_EQ(Identify(rule, stranger, "").error().kind, Refusal::Kind::kNotATenant);
}

TEST(PeerTest, ATokenSentWithACertificateMustNameTheSameCaller) {
  const IdentityRule rule = Rule();
  const TransportPeer ledger = PeerOfTransport(rule, Certificate(kLedger));
  EXPECT_EQ(Identify(rule, ledger, ""), (Peer{false, "ledger", Via::kCertificate}));
  EXPECT_EQ(Identify(rule, ledger, "ledger-secret"), (Peer{false, "ledger", Via::kCertificate}));
  const auto other = Identify(rule, ledger, "billing-secret");
  ASSERT_FALSE(other.has_value());
  EXPECT_EQ(other.error().kind, Refusal::Kind::kTokenMismatch);
  EXPECT_EQ(other.error().message, "the token names billing but the client certificate names ledger");
  EXPECT_EQ(Identify(rule, ledger, "admin-secret").error().message,
            "the token names admin but the client certificate names ledger");
  const auto wrong = Identify(rule, ledger, "guess");
  ASSERT_FALSE(wrong.has_value());
  EXPECT_EQ(wrong.error().kind, Refusal::Kind::kWrongToken);
  const TransportPeer ops = PeerOfTransport(rule, Certificate(kOps));
  EXPECT_EQ(Identify(rule, ops, "admin-secret"), (Peer{true, "", Via::kCertificate}));
  EXPECT_EQ(Identify(rule, ops, "ledger-secret").error().kind, Refusal::Kind::kTokenMismatch);
}

TEST(PeerTest, WithoutACertificateTheTokenDecides) {
  const IdentityRule rule = Rule();
  const TransportPeer tcp = PeerOfTransport(rule, Transport{});
  ASSERT_TRUE(tcp.has_value());
  EXPECT_EQ(*tcp, std::nullopt);
  EXPECT_EQ(Identify(rule, tcp, "admin-secret"), (Peer{true, "", Via::kToken}));
  EXPECT_EQ(Identify(rule, tcp, "billing-secret"), (Peer{false, "billing", Via::kToken}));
  EXPECT_EQ(Identify(rule, tcp, "guess").error().kind, Refusal::Kind::kWrongToken);
  EXPECT_EQ(Identify(rule, tcp, "").error().kind, Refusal::Kind::kNoToken);
  // A tenant known by its certificate only has no token to guess: "" never matches it.
  EXPECT_EQ(Identify(rule, tcp, "").error().message, "a valid token is required");
}

TEST(PeerTest, AUnixSocketAndAnOpenListenerNeedNoToken) {
  const IdentityRule rule = Rule();
  const TransportPeer unix_socket = PeerOfTransport(rule, Transport{true, std::nullopt});
  EXPECT_EQ(Identify(rule, unix_socket, ""), (Peer{true, "", Via::kUnixSocket}));
  EXPECT_EQ(Identify(rule, unix_socket, "billing-secret"), (Peer{false, "billing", Via::kToken}));
  EXPECT_EQ(Identify(rule, unix_socket, "guess").error().kind, Refusal::Kind::kWrongToken);
  const IdentityRule open;
  EXPECT_TRUE(open.Open());
  EXPECT_EQ(Identify(open, PeerOfTransport(open, Transport{}), ""), (Peer{true, "", Via::kOpen}));
  EXPECT_EQ(Identify(open, PeerOfTransport(open, Transport{}), "anything"), (Peer{true, "", Via::kOpen}));
  // On an open listener a certificate still needs a tenant or an admin subject: no CA makes every
  // holder of its certificates the admin.
  EXPECT_EQ(PeerOfTransport(open, Certificate(kStranger)).error().kind, Refusal::Kind::kNotATenant);
  EXPECT_EQ(ViaName(Via::kCertificate), "certificate");
}

}  // namespace
}  // namespace skillrunner::net
