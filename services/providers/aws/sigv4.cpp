#include "services/providers/aws/sigv4.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <boost/url/encode.hpp>
#include <boost/url/grammar/lut_chars.hpp>
#include <boost/url/parse.hpp>
#include <boost/url/parse_query.hpp>
#include <boost/url/rfc/unreserved_chars.hpp>
#include <ctime>
#include <map>

#include "services/common/digest.h"
#include "services/http/http_url.h"

namespace skillrunner::providers::aws {
namespace urls = boost::urls;

namespace {

std::string Hex(const unsigned char* bytes, std::size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(n * 2);
  for (std::size_t i = 0; i < n; ++i) {
    out.push_back(kDigits[bytes[i] >> 4]);
    out.push_back(kDigits[bytes[i] & 0xF]);
  }
  return out;
}

std::string Hmac(std::string_view key, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(data.data()),
       data.size(), out, &size);
  return std::string(reinterpret_cast<const char*>(out), size);
}

// RFC 3986 unreserved characters stay; every other byte is %XX (upper-case hex), as SigV4 asks.
std::string UriEncode(std::string_view text) {
  urls::encoding_opts opts;
  opts.lower_case = false;
  return urls::encode(text, urls::unreserved_chars, opts);
}

// The path as sent, each segment encoded once more (so `%3A` becomes `%253A`).
std::string CanonicalUri(std::string_view path) {
  if (path.empty()) return "/";
  std::string out;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    out += UriEncode(path.substr(start, slash - start));
    if (slash < path.size()) out += '/';
    start = slash + 1;
  }
  return out;
}

// Parameters sorted by encoded name, then value; each side encoded as SigV4 asks.
std::string CanonicalQuery(std::string_view query) {
  if (query.empty()) return {};
  std::vector<std::pair<std::string, std::string>> params;
  auto parsed = urls::parse_query(query);
  if (parsed) {
    for (auto param : *parsed) params.emplace_back(UriEncode(param.key.decode()), UriEncode(param.value.decode()));
  }
  std::sort(params.begin(), params.end());
  std::string out;
  for (const auto& [key, value] : params) out += (out.empty() ? "" : "&") + key + "=" + value;
  return out;
}

// A header value trimmed, with each run of spaces made one.
std::string Trimmed(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == ' ' || c == '\t') {
      if (!out.empty() && out.back() != ' ') out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

bool Signed(const std::string& name) { return name == "host" || name == "content-type" || name.starts_with("x-amz-"); }

// The signed headers, lower-cased and sorted (values of a repeated header joined by commas).
std::map<std::string, std::string> SignedHeaders(const http::HttpRequest& request, std::string_view host) {
  std::map<std::string, std::string> out;
  out["host"] = std::string(host);
  for (const auto& [name, value] : request.headers) {
    std::string lower = name;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    if (!Signed(lower) || lower == "host") continue;
    std::string& into = out[lower];
    into += (into.empty() ? "" : ",") + Trimmed(value);
  }
  return out;
}

std::string SignedNames(const std::map<std::string, std::string>& headers) {
  std::string out;
  for (const auto& [name, value] : headers) out += (out.empty() ? "" : ";") + name;
  return out;
}

std::string Stamp(std::chrono::system_clock::time_point now, const char* format) {
  std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char out[32];
  std::strftime(out, sizeof out, format, &tm);
  return out;
}

}  // namespace

namespace {

// The canonical request (the URL's path encoded once more, as for every service but S3, signing
// `host`, `content-type` and every `x-amz-*` header), and the names it signs into `names`.
std::string Canonical(const http::HttpRequest& request, std::string& names) {
  auto url = http::ParseHttpUrl(request.url);
  std::string target = url ? url->target : "/";
  std::string_view path = target;
  std::string_view query;
  if (std::size_t q = path.find('?'); q != std::string_view::npos) {
    query = path.substr(q + 1);
    path = path.substr(0, q);
  }
  const auto headers = SignedHeaders(request, url ? url->HostHeader() : "");
  names = SignedNames(headers);
  std::string out = request.method + "\n" + CanonicalUri(path) + "\n" + CanonicalQuery(query) + "\n";
  for (const auto& [name, value] : headers) out += name + ":" + value + "\n";
  out += "\n" + names + "\n" + Sha256Hex(request.body);
  return out;
}

}  // namespace

void SignV4(http::HttpRequest& request, const CloudCredentials& credentials, const SigV4Scope& scope,
            std::chrono::system_clock::time_point now) {
  const std::string amz_date = Stamp(now, "%Y%m%dT%H%M%SZ");
  const std::string date = amz_date.substr(0, 8);
  request.headers.emplace_back("x-amz-date", amz_date);
  if (!credentials.session_token.empty())
    request.headers.emplace_back("x-amz-security-token", credentials.session_token);
  std::string names;
  const std::string canonical = Canonical(request, names);
  const std::string credential_scope = date + "/" + scope.region + "/" + scope.service + "/aws4_request";
  const auto canonical_hash = Sha256(canonical);
  const std::string to_sign =
      "AWS4-HMAC-SHA256\n" + amz_date + "\n" + credential_scope + "\n" + Hex(canonical_hash.data(), 32);
  std::string key = Hmac("AWS4" + credentials.secret, date);
  key = Hmac(key, scope.region);
  key = Hmac(key, scope.service);
  key = Hmac(key, "aws4_request");
  const std::string signature = Hmac(key, to_sign);
  request.headers.emplace_back(
      "authorization",
      "AWS4-HMAC-SHA256 Credential=" + credentials.key_id + "/" + credential_scope + ", SignedHeaders=" + names +
          ", Signature=" + Hex(reinterpret_cast<const unsigned char*>(signature.data()), signature.size()));
}

}  // namespace skillrunner::providers::aws
