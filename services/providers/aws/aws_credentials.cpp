// The fetches of the AWS credential chain: STS AssumeRoleWithWebIdentity, container credentials and
// IMDSv2.

#include "services/providers/aws/aws_credentials.h"

#include <boost/json/parse.hpp>
#include <boost/property_tree/ptree.hpp>
#include <boost/property_tree/xml_parser.hpp>
#include <boost/url/encode.hpp>
#include <boost/url/rfc/unreserved_chars.hpp>
#include <ctime>
#include <fstream>
#include <sstream>

#include "services/common/iso_time.h"
#include "services/common/utf8.h"
#include "services/providers/http_errors.h"

namespace skillrunner::providers::aws {
namespace asio = boost::asio;
namespace json = boost::json;
namespace pt = boost::property_tree;
using Outcome = std::expected<CloudCredentials, ProviderError>;

namespace {

constexpr std::chrono::milliseconds kEndpointTimeout{10'000};
constexpr std::chrono::milliseconds kImdsTimeout{1'000};  // botocore's: one try of one second

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream out;
  out << in.rdbuf();
  std::string text = out.str();
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.pop_back();
  return text;
}

std::string FormValue(std::string_view value) { return boost::urls::encode(value, boost::urls::unreserved_chars); }

// A request to a credential endpoint; a transport failure or an answer that is not 2xx as the
// error CredentialError makes of it.
asio::awaitable<std::expected<http::HttpResponse, ProviderError>> Ask(http::HttpClient& client,
                                                                      http::HttpRequest request, std::string what) {
  auto response = co_await client.Send(std::move(request));
  if (!response) {
    if (response.error().kind == http::HttpErrorKind::kCancelled) {
      ProviderError cancelled;
      cancelled.kind = ProviderError::Kind::kCancelled;
      cancelled.message = "cancelled while fetching credentials";
      co_return std::unexpected(std::move(cancelled));
    }
    co_return std::unexpected(CredentialError(std::move(what), 0, response.error().message));
  }
  if (response->status < 200 || response->status >= 300) {
    std::string said = SanitizeUtf8(TruncateUtf8(response->body, 300));
    ProviderError error =
        CredentialError(std::move(what), response->status, "HTTP " + std::to_string(response->status) + ": " + said);
    error.raw_body = std::move(said);
    co_return std::unexpected(std::move(error));
  }
  co_return std::move(*response);
}

// The credentials of a JSON answer (container credentials, IMDS): AccessKeyId, SecretAccessKey,
// Token, Expiration.
Outcome FromJson(const std::string& body, const std::string& what) {
  boost::system::error_code ec;
  json::value value = json::parse(body, ec);
  if (ec || !value.is_object()) return std::unexpected(CredentialError(what, 0, "the answer is not a JSON object"));
  const json::object& o = value.as_object();
  CloudCredentials out{JsonString(o, "AccessKeyId"), JsonString(o, "SecretAccessKey"), JsonString(o, "Token"),
                       ParseIsoUtc(JsonString(o, "Expiration")), what};
  if (out.key_id.empty() || out.secret.empty()) {
    return std::unexpected(CredentialError(what, 0, "the answer has no AccessKeyId or SecretAccessKey"));
  }
  return out;
}

// STS's XML answer: the credentials, or the error it says.
Outcome FromStsXml(const std::string& body, const std::string& what) {
  pt::ptree tree;
  std::istringstream in(body);
  try {
    pt::read_xml(in, tree);
  } catch (const pt::xml_parser_error&) {
    return std::unexpected(CredentialError(what, 0, "the answer is not XML"));
  }
  auto c = tree.get_child_optional("AssumeRoleWithWebIdentityResponse.AssumeRoleWithWebIdentityResult.Credentials");
  if (!c) return std::unexpected(CredentialError(what, 0, "the answer has no Credentials"));
  CloudCredentials out{c->get("AccessKeyId", ""), c->get("SecretAccessKey", ""), c->get("SessionToken", ""),
                       ParseIsoUtc(c->get("Expiration", "")), what};
  if (out.key_id.empty() || out.secret.empty()) return std::unexpected(CredentialError(what, 0, "empty Credentials"));
  return out;
}

// STS's error body: "Code: Message".
std::string StsError(const std::string& body) {
  pt::ptree tree;
  std::istringstream in(body);
  try {
    pt::read_xml(in, tree);
  } catch (const pt::xml_parser_error&) {
    return SanitizeUtf8(TruncateUtf8(body, 300));
  }
  return tree.get("ErrorResponse.Error.Code", "") + ": " + tree.get("ErrorResponse.Error.Message", "");
}

asio::awaitable<Outcome> WebIdentity(const AwsChain& chain, http::HttpClient& client) {
  const std::string what = "STS AssumeRoleWithWebIdentity at " + chain.sts_endpoint;
  std::string token = ReadFile(chain.token_file);  // read each time: the cluster rotates it
  if (token.empty()) {
    co_return std::unexpected(
        CredentialError(what, 400, "the token file " + chain.token_file + " is empty or unreadable"));
  }
  http::HttpRequest request;
  request.method = "POST";
  request.url = JoinUrl(chain.sts_endpoint, "/");
  request.timeout = kEndpointTimeout;
  request.headers = {{"content-type", "application/x-www-form-urlencoded"}, {"accept", "text/xml"}};
  request.body = "Action=AssumeRoleWithWebIdentity&Version=2011-06-15&RoleArn=" + FormValue(chain.role_arn) +
                 "&RoleSessionName=" + FormValue(chain.session_name) + "&WebIdentityToken=" + FormValue(token);
  auto response = co_await Ask(client, std::move(request), what);
  if (!response) {
    ProviderError error = std::move(response.error());
    if (error.http_status >= 400) {
      error.message = what + ": HTTP " + std::to_string(error.http_status) + ": " + StsError(error.raw_body);
    }
    RedactError(error, token);
    co_return std::unexpected(std::move(error));
  }
  co_return FromStsXml(response->body, "web identity (" + chain.role_arn + ")");
}

asio::awaitable<Outcome> FromContainer(const AwsChain& chain, http::HttpClient& client) {
  http::HttpRequest request;
  request.method = "GET";
  request.url = chain.container_uri;
  request.timeout = kEndpointTimeout;
  std::string token = chain.container_token_file.empty() ? chain.container_token : ReadFile(chain.container_token_file);
  if (!token.empty()) request.headers.emplace_back("authorization", token);
  std::string what = "container credentials at " + chain.container_uri;
  auto response = co_await Ask(client, std::move(request), what);
  if (!response) co_return std::unexpected(std::move(response.error()));
  co_return FromJson(response->body, chain.Describe());
}

asio::awaitable<Outcome> FromImds(const AwsChain& chain, http::HttpClient& client) {
  const std::string what = "EC2 instance metadata at " + chain.imds_endpoint;
  http::HttpRequest token_request;
  token_request.method = "PUT";
  token_request.url = JoinUrl(chain.imds_endpoint, "/latest/api/token");
  token_request.timeout = kImdsTimeout;
  token_request.headers = {{"x-aws-ec2-metadata-token-ttl-seconds", "21600"}};
  auto token = co_await Ask(client, std::move(token_request), what);
  if (!token) co_return std::unexpected(std::move(token.error()));
  const std::string base = JoinUrl(chain.imds_endpoint, "/latest/meta-data/iam/security-credentials/");
  http::HttpRequest role_request;
  role_request.method = "GET";
  role_request.url = base;
  role_request.timeout = kImdsTimeout;
  role_request.headers = {{"x-aws-ec2-metadata-token", token->body}};
  auto role = co_await Ask(client, role_request, what);
  if (!role) co_return std::unexpected(std::move(role.error()));
  std::string name = role->body.substr(0, role->body.find('\n'));
  http::HttpRequest credentials_request = role_request;
  credentials_request.url = base + FormValue(name);
  auto credentials = co_await Ask(client, std::move(credentials_request), what);
  if (!credentials) co_return std::unexpected(std::move(credentials.error()));
  co_return FromJson(credentials->body, chain.Describe());
}

}  // namespace

CredentialFetch AwsCredentialFetch(AwsChain chain, std::shared_ptr<http::HttpClient> client) {
  return [chain = std::move(chain), client = std::move(client)]() -> asio::awaitable<Outcome> {
    switch (chain.source) {
      case AwsSource::kEnvironment:
      case AwsSource::kSharedFile:
        co_return chain.fixed;
      case AwsSource::kWebIdentity:
        co_return co_await WebIdentity(chain, *client);
      case AwsSource::kContainer:
        co_return co_await FromContainer(chain, *client);
      case AwsSource::kImds:
        co_return co_await FromImds(chain, *client);
    }
    co_return chain.fixed;
  };
}

}  // namespace skillrunner::providers::aws
