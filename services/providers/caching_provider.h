#pragma once

// design.md §9.5 `eval --cache`: a provider that answers a request it has seen
// before (the same provider kind and base URL, model, messages, response
// format, temperature, max tokens, seed, and judge sample) from a
// ResponseStore, and stores each successful answer of the provider it wraps.
// A cached answer costs nothing and is marked `from_cache`. A request the
// store does not hold and refuses (ResponseStore::MissRefusal: replay mode)
// fails with a kConfig error carrying the store's text, never sent.

#include <string>

#include "services/common/response_store.h"
#include "services/providers/provider.h"

namespace skillrunner::providers {

class CachingProvider : public Provider {
 public:
  CachingProvider(Provider& inner, std::string kind, std::string base_url, ResponseStore& store)
      : inner_(inner), kind_(std::move(kind)), base_url_(std::move(base_url)), store_(store) {}

  boost::asio::awaitable<ChatResult> Chat(const ChatRequest& request) override;

  // The request's identity as canonical JSON text (the store's key).
  static std::string Key(const std::string& kind, const std::string& base_url, const ChatRequest& request);

 private:
  Provider& inner_;
  std::string kind_;
  std::string base_url_;
  ResponseStore& store_;
};

}  // namespace skillrunner::providers
