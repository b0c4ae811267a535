// ResolveAwsChain: which source of the credential chain applies, read from the environment and
// the shared files at load.

#include <algorithm>
#include <boost/property_tree/ini_parser.hpp>
#include <boost/property_tree/ptree.hpp>
#include <filesystem>
#include <fstream>

#include "services/providers/aws/aws_credentials.h"

namespace skillrunner::providers::aws {
namespace pt = boost::property_tree;

std::string AwsChain::Describe() const {
  switch (source) {
    case AwsSource::kEnvironment:
      return "environment";
    case AwsSource::kWebIdentity:
      return "web identity (" + role_arn + ")";
    case AwsSource::kSharedFile:
      return fixed.source;
    case AwsSource::kContainer:
      return "container credentials (" + container_uri + ")";
    case AwsSource::kImds:
      return "EC2 instance metadata (" + imds_endpoint + ")";
  }
  return "unknown";
}

namespace {

std::string Env(const EnvLookup& env, std::string_view name) { return env(name).value_or(""); }

std::string HomeFile(const EnvLookup& env, std::string_view variable, std::string_view under_home) {
  if (std::string set = Env(env, variable); !set.empty()) return set;
  std::string home = Env(env, "HOME");
  return home.empty() ? std::string() : home + "/" + std::string(under_home);
}

// The section `name` of the INI file at `path`: nullopt when the file or the section is not there;
// an error when the file does not parse.
Result<std::optional<pt::ptree>> Section(const std::string& path, const std::string& name) {
  if (path.empty() || !std::filesystem::exists(path)) return std::nullopt;
  std::ifstream in(path);
  pt::ptree tree;
  try {
    pt::read_ini(in, tree);
  } catch (const pt::ini_parser_error& e) {
    return Fail(ErrorCode::kConfigInvalid, path + ":" + std::to_string(e.line()) + ": " + e.message());
  }
  auto it = tree.find(name);
  if (it == tree.not_found()) return std::nullopt;
  return it->second;
}

std::string Value(const pt::ptree& section, const std::string& key) {
  auto it = section.find(key);
  return it == section.not_found() ? std::string() : it->second.data();
}

std::optional<AwsChain> Keys(const pt::ptree& section, std::string what) {
  AwsChain chain;
  chain.fixed.key_id = Value(section, "aws_access_key_id");
  chain.fixed.secret = Value(section, "aws_secret_access_key");
  chain.fixed.session_token = Value(section, "aws_session_token");
  if (chain.fixed.key_id.empty() || chain.fixed.secret.empty()) return std::nullopt;
  chain.source = AwsSource::kSharedFile;
  chain.fixed.source = std::move(what);
  return chain;
}

std::string StsEndpoint(const EnvLookup& env, std::string_view region) {
  if (std::string set = Env(env, "AWS_ENDPOINT_URL_STS"); !set.empty()) return set;
  return "https://sts." + std::string(region) + ".amazonaws.com";
}

AwsChain WebIdentity(const EnvLookup& env, std::string_view region, std::string token_file, std::string role_arn,
                     std::string session_name) {
  AwsChain chain;
  chain.source = AwsSource::kWebIdentity;
  chain.token_file = std::move(token_file);
  chain.role_arn = std::move(role_arn);
  chain.session_name = session_name.empty() ? "skillrunner" : std::move(session_name);
  chain.sts_endpoint = StsEndpoint(env, region);
  return chain;
}

// The profile's entry in the config file: its keys, its web identity, or what is not supported.
Result<std::optional<AwsChain>> ConfigProfile(const EnvLookup& env, std::string_view region,
                                              const std::string& profile) {
  const std::string path = HomeFile(env, "AWS_CONFIG_FILE", ".aws/config");
  auto section = Section(path, profile == "default" ? "default" : "profile " + profile);
  if (!section) return std::unexpected(std::move(section.error()));
  if (!*section) return std::nullopt;
  const pt::ptree& s = **section;
  for (const char* key :
       {"sso_session", "sso_start_url", "credential_process", "source_profile", "credential_source"}) {
    if (!Value(s, key).empty()) {
      return Fail(ErrorCode::kConfigInvalid,
                  "profile \"" + profile + "\" in " + path + " uses " + key +
                      ", which is not supported; give the credentials another way (docs/providers.md)");
    }
  }
  if (!Value(s, "web_identity_token_file").empty() && !Value(s, "role_arn").empty()) {
    return WebIdentity(env, region, Value(s, "web_identity_token_file"), Value(s, "role_arn"),
                       Value(s, "role_session_name"));
  }
  return Keys(s, "config file " + path + " (profile " + profile + ")");
}

std::optional<AwsChain> Container(const EnvLookup& env) {
  AwsChain chain;
  chain.source = AwsSource::kContainer;
  chain.container_uri = Env(env, "AWS_CONTAINER_CREDENTIALS_FULL_URI");
  if (std::string relative = Env(env, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"); !relative.empty()) {
    chain.container_uri = "http://169.254.170.2" + relative;
  }
  if (chain.container_uri.empty()) return std::nullopt;
  chain.container_token = Env(env, "AWS_CONTAINER_AUTHORIZATION_TOKEN");
  chain.container_token_file = Env(env, "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE");
  return chain;
}

}  // namespace

Result<AwsChain> ResolveAwsChain(const EnvLookup& env, std::string_view region, std::string_view profile_setting) {
  const std::string asked = profile_setting.empty() ? Env(env, "AWS_PROFILE") : std::string(profile_setting);
  const std::string profile = asked.empty() ? "default" : asked;
  // As botocore: the environment's keys win over AWS_PROFILE, not over a profile the config names.
  if (profile_setting.empty() && !Env(env, "AWS_ACCESS_KEY_ID").empty() && !Env(env, "AWS_SECRET_ACCESS_KEY").empty()) {
    AwsChain chain;
    chain.source = AwsSource::kEnvironment;
    chain.fixed = {Env(env, "AWS_ACCESS_KEY_ID"), Env(env, "AWS_SECRET_ACCESS_KEY"), Env(env, "AWS_SESSION_TOKEN"),
                   std::nullopt, "environment"};
    return chain;
  }
  if (!Env(env, "AWS_WEB_IDENTITY_TOKEN_FILE").empty() && !Env(env, "AWS_ROLE_ARN").empty()) {
    return WebIdentity(env, region, Env(env, "AWS_WEB_IDENTITY_TOKEN_FILE"), Env(env, "AWS_ROLE_ARN"),
                       Env(env, "AWS_ROLE_SESSION_NAME"));
  }
  const std::string credentials_path = HomeFile(env, "AWS_SHARED_CREDENTIALS_FILE", ".aws/credentials");
  auto section = Section(credentials_path, profile);
  if (!section) return std::unexpected(std::move(section.error()));
  if (*section) {
    if (auto keys = Keys(**section, "shared credentials file " + credentials_path + " (profile " + profile + ")")) {
      return *keys;
    }
  }
  auto configured = ConfigProfile(env, region, profile);
  if (!configured) return std::unexpected(std::move(configured.error()));
  if (*configured) return **configured;
  if (!asked.empty() && !*section) {
    return Fail(ErrorCode::kConfigInvalid,
                "AWS profile \"" + profile + "\" is in neither " + credentials_path + " nor the config file");
  }
  if (auto container = Container(env)) return *container;
  std::string disabled = Env(env, "AWS_EC2_METADATA_DISABLED");
  std::transform(disabled.begin(), disabled.end(), disabled.begin(), [](unsigned char c) { return std::tolower(c); });
  if (disabled == "true") {
    return Fail(ErrorCode::kConfigInvalid,
                "no AWS credentials: none in the environment (AWS_ACCESS_KEY_ID), no web identity "
                "(AWS_WEB_IDENTITY_TOKEN_FILE), "
                "no profile \"" +
                    profile + "\" with keys in " + credentials_path +
                    ", no container credentials, and AWS_EC2_METADATA_DISABLED=true");
  }
  AwsChain chain;
  chain.source = AwsSource::kImds;
  chain.imds_endpoint = Env(env, "AWS_EC2_METADATA_SERVICE_ENDPOINT");
  if (chain.imds_endpoint.empty()) chain.imds_endpoint = "http://169.254.169.254";
  return chain;
}

}  // namespace skillrunner::providers::aws
