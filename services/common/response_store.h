#pragma once

// design.md §9.5 `--cache`: where provider answers are kept between runs, as
// text under a key text (the request's identity). The eval runs supply a
// SQLite store; the providers' CachingProvider uses it. Implementations are
// thread-safe.

#include <cstdint>
#include <optional>
#include <string>

namespace skillrunner {

class ResponseStore {
 public:
  virtual ~ResponseStore() = default;
  // The value stored under `key`, unless there is none or it has expired.
  virtual std::optional<std::string> Get(const std::string& key) = 0;
  virtual void Put(const std::string& key, const std::string& value) = 0;
  // design.md §10.1 `eval --cache-mode replay`: a store that answers only from
  // what it holds gives, for a request it does not hold (Get gave nullopt),
  // the error text to answer with instead of asking the provider; nullopt:
  // ask the provider (the default).
  virtual std::optional<std::string> MissRefusal(const std::string& key) {
    (void)key;
    return std::nullopt;
  }
};

}  // namespace skillrunner
