#include "services/providers/google/google_credentials.h"

#include <openssl/evp.h>
#include <openssl/pem.h>

#include <boost/json/parse.hpp>
#include <boost/url/encode.hpp>
#include <boost/url/rfc/unreserved_chars.hpp>
#include <fstream>
#include <sstream>

#include "services/common/json_text.h"
#include "services/providers/http_errors.h"

namespace skillrunner::providers::google {
namespace asio = boost::asio;
namespace json = boost::json;
using Outcome = std::expected<CloudCredentials, ProviderError>;

std::string GoogleSource::Describe() const {
  return kind == Kind::kServiceAccount ? "service account " + client_email + " (" + key_file + ")"
                                       : "metadata server (" + metadata_host + ")";
}

Result<GoogleSource> ResolveGoogleSource(const EnvLookup& env, std::string_view key_file) {
  GoogleSource source;
  std::string path = key_file.empty() ? env("GOOGLE_APPLICATION_CREDENTIALS").value_or("") : std::string(key_file);
  if (path.empty()) {
    if (auto host = env("GCE_METADATA_HOST"); host && !host->empty()) source.metadata_host = *host;
    return source;
  }
  std::ifstream in(path);
  if (!in) return Fail(ErrorCode::kConfigInvalid, "the key file " + path + " cannot be read");
  std::stringstream text;
  text << in.rdbuf();
  boost::system::error_code ec;
  json::value key = json::parse(text.str(), ec);
  if (ec || !key.is_object()) return Fail(ErrorCode::kConfigInvalid, "the key file " + path + " is not a JSON object");
  const json::object& o = key.as_object();
  if (std::string type = JsonString(o, "type"); type != "service_account") {
    return Fail(ErrorCode::kConfigInvalid, "the key file " + path + " is of type \"" + type +
                                               "\"; only a service account's key (type service_account) is supported");
  }
  source.kind = GoogleSource::Kind::kServiceAccount;
  source.key_file = path;
  source.client_email = JsonString(o, "client_email");
  source.private_key_id = JsonString(o, "private_key_id");
  source.private_key = JsonString(o, "private_key");
  source.token_uri = JsonString(o, "token_uri", "https://oauth2.googleapis.com/token");
  if (source.client_email.empty() || source.private_key.empty()) {
    return Fail(ErrorCode::kConfigInvalid, "the key file " + path + " has no client_email or private_key");
  }
  return source;
}

namespace {

std::string Base64Url(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()));
  out.resize(static_cast<std::size_t>(n));
  while (!out.empty() && out.back() == '=') out.pop_back();
  for (char& c : out) c = c == '+' ? '-' : c == '/' ? '_' : c;
  return out;
}

Result<std::string> SignRs256(std::string_view pem, std::string_view data) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), BIO_free);
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr),
                                                          EVP_PKEY_free);
  if (!key) return Fail(ErrorCode::kConfigInvalid, "the private key does not load");
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  std::size_t size = 0;
  if (EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key.get()) != 1 ||
      EVP_DigestSign(ctx.get(), nullptr, &size, reinterpret_cast<const unsigned char*>(data.data()), data.size()) !=
          1) {
    return Fail(ErrorCode::kConfigInvalid, "the private key cannot sign RS256");
  }
  std::string signature(size, '\0');
  if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(signature.data()), &size,
                     reinterpret_cast<const unsigned char*>(data.data()), data.size()) != 1) {
    return Fail(ErrorCode::kConfigInvalid, "signing the token request failed");
  }
  signature.resize(size);
  return signature;
}

}  // namespace

Result<std::string> ServiceAccountJwt(const GoogleSource& source, std::chrono::system_clock::time_point now) {
  const std::int64_t iat = std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
  json::object header{{"alg", "RS256"}, {"typ", "JWT"}};
  if (!source.private_key_id.empty()) header["kid"] = source.private_key_id;
  json::object claims{{"iss", source.client_email},
                      {"scope", kCloudPlatformScope},
                      {"aud", source.token_uri},
                      {"iat", iat},
                      {"exp", iat + 3600}};
  const std::string signing_input = Base64Url(CompactJson(header)) + "." + Base64Url(CompactJson(claims));
  auto signature = SignRs256(source.private_key, signing_input);
  if (!signature) {
    signature.error().message += " (" + source.key_file + ")";
    return std::unexpected(std::move(signature.error()));
  }
  return signing_input + "." + Base64Url(*signature);
}

namespace {

// {access_token, expires_in} as credentials that expire then.
Outcome FromTokenAnswer(const http::HttpResponse& response, const std::string& what,
                        std::chrono::system_clock::time_point asked) {
  boost::system::error_code ec;
  json::value body = json::parse(response.body, ec);
  if (ec || !body.is_object()) return std::unexpected(CredentialError(what, 0, "the answer is not a JSON object"));
  const json::object& o = body.as_object();
  CloudCredentials out;
  out.secret = JsonString(o, "access_token");
  out.source = what;
  if (out.secret.empty()) return std::unexpected(CredentialError(what, 0, "the answer has no access_token"));
  out.expires = asked + std::chrono::seconds(std::max<std::int64_t>(JsonCount(o, "expires_in"), 0));
  return out;
}

asio::awaitable<Outcome> Fetch(const GoogleSource& source, http::HttpClient& client, const WallClock& now) {
  http::HttpRequest request;
  request.timeout = std::chrono::milliseconds(10'000);
  const auto asked = now();
  if (source.kind == GoogleSource::Kind::kServiceAccount) {
    auto jwt = ServiceAccountJwt(source, asked);
    if (!jwt) co_return std::unexpected(CredentialError(source.Describe(), 400, std::move(jwt.error().message)));
    request.method = "POST";
    request.url = source.token_uri;
    request.headers = {{"content-type", "application/x-www-form-urlencoded"}};
    request.body = "grant_type=" +
                   boost::urls::encode("urn:ietf:params:oauth:grant-type:jwt-bearer", boost::urls::unreserved_chars) +
                   "&assertion=" + *jwt;
  } else {
    request.method = "GET";
    request.url = "http://" + source.metadata_host + "/computeMetadata/v1/instance/service-accounts/default/token";
    request.headers = {{"metadata-flavor", "Google"}};
  }
  const std::string what = source.Describe();
  auto response = co_await client.Send(std::move(request));
  if (!response) {
    ProviderError error = CredentialError(what, 0, response.error().message);
    if (response.error().kind == http::HttpErrorKind::kCancelled) error.kind = ProviderError::Kind::kCancelled;
    co_return std::unexpected(std::move(error));
  }
  if (response->status < 200 || response->status >= 300) {
    ProviderError error =
        CredentialError(what, response->status,
                        "HTTP " + std::to_string(response->status) + ": " + Redact(response->body.substr(0, 300), ""));
    co_return std::unexpected(std::move(error));
  }
  co_return FromTokenAnswer(*response, what, asked);
}

}  // namespace

CredentialFetch GoogleTokenFetch(GoogleSource source, std::shared_ptr<http::HttpClient> client, WallClock now) {
  return [source = std::move(source), client = std::move(client), now = std::move(now)]() {
    return Fetch(source, *client, now);
  };
}

}  // namespace skillrunner::providers::google
