#include "runner/cli/providers_command.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/serialize.hpp>
#include <cstdio>

#include "services/common/clock.h"
#include "services/common/text.h"
#include "services/providers/http_errors.h"
#include "services/providers/set/provider_set.h"

namespace skillrunner::cli {
namespace json = boost::json;
using providers::ChatRequest;
using providers::ChatResponse;
using providers::ProviderError;

namespace {

std::string ModelFor(const Config& config, const std::string& provider, const std::string& wanted) {
  if (!wanted.empty()) return wanted;
  for (const auto& [name, model] : config.models) {
    if (model.provider == provider) return name;
  }
  return "simulated-check";
}

struct CheckResult {
  std::string provider;
  std::string model;
  std::int64_t latency_ms = 0;
  std::expected<ChatResponse, ProviderError> answer;
};

boost::asio::awaitable<std::expected<ChatResponse, ProviderError>> Ask(providers::Provider& provider,
                                                                       ChatRequest request) {
  co_return co_await provider.Chat(request);
}

json::object ToJson(const CheckResult& r) {
  json::object out{
      {"provider", r.provider}, {"model", r.model}, {"latency_ms", r.latency_ms}, {"ok", r.answer.has_value()}};
  if (r.answer) {
    out["answer_model"] = r.answer->model;
    out["input_tokens"] = r.answer->usage.input_tokens;
    out["output_tokens"] = r.answer->usage.output_tokens;
    out["tokens_estimated"] = r.answer->usage.estimated;
    out["request_id"] = r.answer->request_id;
  } else {
    out["error"] = r.answer.error().message;
    if (r.answer.error().http_status) out["http_status"] = r.answer.error().http_status;
  }
  return out;
}

}  // namespace

int ProvidersCheck(const CommonOptions& common, const ProvidersCheckOptions& options) {
  auto config = ResolveConfig(common);
  if (!config) {
    for (const auto& d : config.error()) std::fprintf(stderr, "%s\n", d.ToString().c_str());
    return 2;
  }
  if (!options.name.empty() && !config->providers.contains(options.name)) {
    std::vector<std::string> names;
    for (const auto& [name, unused] : config->providers) names.push_back(name);
    std::fprintf(stderr, "skillrunner: the config %s defines no provider \"%s\"%s\n", config->source.c_str(),
                 options.name.c_str(), DidYouMean(ClosestNames(options.name, names)).c_str());
    return 2;
  }
  boost::asio::io_context io;
  auto set = providers::ProviderSet::Create(config->providers, io.get_executor(), ProcessEnv);
  if (!set) {
    std::fprintf(stderr, "skillrunner: %s\n", set.error().message.c_str());
    return 2;
  }
  std::vector<CheckResult> results;
  for (const auto& [name, provider] : config->providers) {
    if (!options.name.empty() && name != options.name) continue;
    ChatRequest request;
    request.model = ModelFor(*config, name, options.model);
    request.messages = {{"user", "Reply with the single word: ok"}};
    request.temperature = 0;
    request.max_output_tokens = 16;
    request.timeout = std::chrono::seconds(30);
    request.metadata.skill_id = "providers-check";
    request.metadata.task_id = "providers-check";
    const Clock& clock = RealClock();
    auto started = clock.Now();
    auto future = boost::asio::co_spawn(io, Ask(*(*set)->Find(name), request), boost::asio::use_future);
    io.restart();
    io.run();
    CheckResult result{name, request.model, 0, future.get()};
    result.latency_ms = clock.ElapsedMs(started);
    results.push_back(std::move(result));
  }
  bool all_ok = true;
  for (const auto& r : results) {
    all_ok = all_ok && r.answer.has_value();
    if (options.as_json) {
      std::printf("%s\n", json::serialize(ToJson(r)).c_str());
    } else if (r.answer) {
      std::printf("%-12s %-24s ok      %5lld ms  model %s, %lld input + %lld output tokens%s\n", r.provider.c_str(),
                  r.model.c_str(), static_cast<long long>(r.latency_ms), r.answer->model.c_str(),
                  static_cast<long long>(r.answer->usage.input_tokens),
                  static_cast<long long>(r.answer->usage.output_tokens),
                  r.answer->usage.estimated ? " (estimated)" : "");
    } else {
      std::printf("%-12s %-24s FAILED  %5lld ms  %s\n", r.provider.c_str(), r.model.c_str(),
                  static_cast<long long>(r.latency_ms), r.answer.error().message.c_str());
    }
  }
  return all_ok ? 0 : 3;
}

}  // namespace skillrunner::cli
