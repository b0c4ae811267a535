#include "services/providers/caching_provider.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

namespace skillrunner::providers {
namespace json = boost::json;

namespace {

json::value FormatJson(const ResponseFormat& format) {
  switch (format.kind) {
    case ResponseFormat::Kind::kNone:
      return nullptr;
    case ResponseFormat::Kind::kJsonObject:
      return json::object{{"type", "json_object"}};
    case ResponseFormat::Kind::kJsonSchema:
      return json::object{
          {"type", "json_schema"}, {"name", format.name}, {"schema", format.Schema()}, {"strict", format.strict}};
    case ResponseFormat::Kind::kTool:
      return json::object{
          {"type", "tool"}, {"name", format.name}, {"schema", format.Schema()}, {"strict", format.strict}};
  }
  return nullptr;
}

std::string Serialize(const ChatResponse& response) {
  json::object usage{{"input_tokens", response.usage.input_tokens},
                     {"output_tokens", response.usage.output_tokens},
                     {"estimated", response.usage.estimated},
                     {"cached_input_tokens", response.usage.cached_input_tokens},
                     {"cache_write_tokens", response.usage.cache_write_tokens}};
  json::object out{{"text", response.text},
                   {"tool_call", response.tool_call},
                   {"finish_reason", FinishReasonName(response.finish_reason)},
                   {"usage", std::move(usage)},
                   {"request_id", response.request_id},
                   {"model", response.model},
                   {"http_status", response.http_status}};
  if (response.refusal) out["refusal"] = *response.refusal;
  return json::serialize(out);
}

std::optional<ChatResponse> Deserialize(const std::string& text) {
  boost::system::error_code ec;
  json::value parsed = json::parse(text, ec);
  if (ec || !parsed.is_object()) return std::nullopt;
  const json::object& o = parsed.as_object();
  try {
    ChatResponse response;
    response.text = std::string(o.at("text").as_string());
    response.tool_call = o.at("tool_call").as_bool();
    const std::string_view finish = o.at("finish_reason").as_string();
    for (FinishReason reason : {FinishReason::kStop, FinishReason::kLength, FinishReason::kRefusal,
                                FinishReason::kContentFilter, FinishReason::kOther}) {
      if (FinishReasonName(reason) == finish) response.finish_reason = reason;
    }
    const json::object& usage = o.at("usage").as_object();
    response.usage.input_tokens = usage.at("input_tokens").to_number<std::int64_t>();
    response.usage.output_tokens = usage.at("output_tokens").to_number<std::int64_t>();
    response.usage.estimated = usage.at("estimated").as_bool();
    response.usage.cached_input_tokens = usage.at("cached_input_tokens").to_number<std::int64_t>();
    response.usage.cache_write_tokens = usage.at("cache_write_tokens").to_number<std::int64_t>();
    response.request_id = std::string(o.at("request_id").as_string());
    response.model = std::string(o.at("model").as_string());
    response.http_status = static_cast<int>(o.at("http_status").to_number<std::int64_t>());
    if (const json::value* refusal = o.if_contains("refusal")) response.refusal = std::string(refusal->as_string());
    return response;
  } catch (const std::exception&) {
    return std::nullopt;  // written by another version: a miss
  }
}

}  // namespace

std::string CachingProvider::Key(const std::string& kind, const std::string& base_url, const ChatRequest& request) {
  json::array messages;
  for (const ChatMessage& m : request.messages)
    messages.push_back(json::object{{"role", m.role}, {"content", m.content}});
  json::object key{{"kind", kind},
                   {"base_url", base_url},
                   {"model", request.model},
                   {"messages", std::move(messages)},
                   {"response_format", FormatJson(request.response_format)},
                   {"temperature", request.temperature ? json::value(*request.temperature) : json::value(nullptr)},
                   {"max_output_tokens", request.max_output_tokens},
                   {"seed", request.metadata.seed ? json::value(*request.metadata.seed) : json::value(nullptr)},
                   {"sample", request.metadata.sample}};
  return json::serialize(key);
}

boost::asio::awaitable<ChatResult> CachingProvider::Chat(const ChatRequest& request) {
  const std::string key = Key(kind_, base_url_, request);
  if (std::optional<std::string> stored = store_.Get(key)) {
    if (std::optional<ChatResponse> cached = Deserialize(*stored)) {
      cached->from_cache = true;
      co_return std::move(*cached);
    }
  }
  if (std::optional<std::string> refusal = store_.MissRefusal(key)) {
    // Replay only: the request never reaches the provider; not retried.
    ProviderError refused;
    refused.kind = ProviderError::Kind::kConfig;
    refused.message = std::move(*refusal);
    co_return std::unexpected(std::move(refused));
  }
  auto response = co_await inner_.Chat(request);
  if (response) store_.Put(key, Serialize(*response));
  co_return response;
}

}  // namespace skillrunner::providers
