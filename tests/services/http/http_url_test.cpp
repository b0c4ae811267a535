#include "services/http/http_url.h"

#include <gtest/gtest.h>

#include "services/http/proxy_config.h"

namespace skillrunner::http {
namespace {

TEST(HttpUrlTest, ParsesHostPortAndTarget) {
  auto url = ParseHttpUrl("http://127.0.0.1:8080/v1/chat/completions?x=1");
  ASSERT_TRUE(url) << url.error().message;
  EXPECT_FALSE(url->https);
  EXPECT_EQ(url->host, "127.0.0.1");
  EXPECT_EQ(url->port, 8080);
  EXPECT_EQ(url->target, "/v1/chat/completions?x=1");
  EXPECT_EQ(url->HostHeader(), "127.0.0.1:8080");
}

TEST(HttpUrlTest, DefaultsPortsAndPathAndLowerCasesHost) {
  auto url = ParseHttpUrl("HTTPS://API.OpenAI.com");
  ASSERT_TRUE(url) << url.error().message;
  EXPECT_TRUE(url->https);
  EXPECT_EQ(url->host, "api.openai.com");
  EXPECT_EQ(url->port, 443);
  EXPECT_EQ(url->target, "/");
  EXPECT_EQ(url->HostHeader(), "api.openai.com");
  EXPECT_EQ(url->Authority(), "api.openai.com:443");
}

TEST(HttpUrlTest, BracketsIpv6InAuthority) {
  auto url = ParseHttpUrl("http://[::1]:9000/x");
  ASSERT_TRUE(url) << url.error().message;
  EXPECT_EQ(url->host, "::1");
  EXPECT_EQ(url->Authority(), "[::1]:9000");
}

TEST(HttpUrlTest, RejectsOtherSchemesAndGarbage) {
  EXPECT_EQ(ParseHttpUrl("ftp://example.com/").error().code, ErrorCode::kConfigInvalid);
  EXPECT_EQ(ParseHttpUrl("ftp://example.com/").error().message, "unsupported URL scheme 'ftp' (want http or https)");
  EXPECT_FALSE(ParseHttpUrl("not a url"));
  EXPECT_FALSE(ParseHttpUrl("http:///path"));
  EXPECT_EQ(ParseHttpUrl("http://example.com:99999/").error().message, "invalid port '99999'");
}

TEST(ProxyConfigTest, NoProxyMatchesHostsDomainsIpsAndStar) {
  EXPECT_TRUE(NoProxyMatches("api.openai.com", "example.com, openai.com"));
  EXPECT_TRUE(NoProxyMatches("openai.com", ".openai.com"));
  EXPECT_TRUE(NoProxyMatches("api.openai.com", ".openai.com"));
  EXPECT_TRUE(NoProxyMatches("API.OPENAI.COM", "openai.com"));
  EXPECT_FALSE(NoProxyMatches("notopenai.com", "openai.com"));
  EXPECT_TRUE(NoProxyMatches("10.1.2.3", "10.1.2.3"));
  EXPECT_TRUE(NoProxyMatches("internal.corp", "internal.corp:443"));
  EXPECT_TRUE(NoProxyMatches("anything.example", "*"));
  EXPECT_FALSE(NoProxyMatches("api.anthropic.com", "openai.com,,  "));
  EXPECT_FALSE(NoProxyMatches("api.anthropic.com", ""));
}

TEST(ProxyConfigTest, LoopbackIsAlwaysDirect) {
  EXPECT_FALSE(UsesProxy("localhost", "http://proxy:3128", ""));
  EXPECT_FALSE(UsesProxy("127.0.0.1", "http://proxy:3128", ""));
  EXPECT_FALSE(UsesProxy("::1", "http://proxy:3128", ""));
  EXPECT_TRUE(UsesProxy("127.example.com", "http://proxy:3128", ""));
  EXPECT_TRUE(UsesProxy("api.openai.com", "http://proxy:3128", "anthropic.com"));
  EXPECT_FALSE(UsesProxy("api.openai.com", "", ""));
}

}  // namespace
}  // namespace skillrunner::http
