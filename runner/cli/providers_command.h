#pragma once

#include <string>

#include "runner/cli/environment.h"

namespace skillrunner::cli {

struct ProvidersCheckOptions {
  std::string name;   // empty: every provider of the config
  std::string model;  // empty: the first model of the table on that provider
  bool as_json = false;
};

// `skillrunner providers check [NAME]`: one tiny request per provider through
// the real client; prints latency, model and usage, or the error. Exit 0 when
// every check passed, 2 for config problems, 3 when a provider failed.
int ProvidersCheck(const CommonOptions& common, const ProvidersCheckOptions& options);

}  // namespace skillrunner::cli
