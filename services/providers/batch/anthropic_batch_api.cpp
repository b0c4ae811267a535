#include "services/providers/batch/anthropic_batch_api.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "services/common/json_text.h"
#include "services/providers/anthropic_answer.h"
#include "services/providers/http_errors.h"

namespace skillrunner::providers {
namespace json = boost::json;

namespace {

constexpr const char* kBatches = "/v1/messages/batches";

// The HTTP status an errored result's error type stands for (the online
// API's), so that the online error parser and classification apply.
int StatusOfErrorType(const std::string& type) {
  if (type == "invalid_request_error") return 400;
  if (type == "authentication_error") return 401;
  if (type == "billing_error") return 402;
  if (type == "permission_error") return 403;
  if (type == "not_found_error") return 404;
  if (type == "request_too_large") return 413;
  if (type == "rate_limit_error") return 429;
  if (type == "overloaded_error") return 529;
  return 500;  // api_error, timeout_error and anything new: resubmitted
}

}  // namespace

BatchItemResult AnthropicResultLine(const json::object& line) {
  BatchItemResult out;
  const json::value* result = line.if_contains("result");
  if (result == nullptr || !result->is_object()) {
    out.why = "no result";
    return out;
  }
  const json::object& r = result->as_object();
  const std::string type = JsonString(r, "type");
  if (type == "succeeded") {
    if (const json::value* message = r.if_contains("message"); message && message->is_object()) {
      out.request_id = JsonString(message->as_object(), "id");
      out.answer = json::serialize(*message);
      return out;
    }
    out.why = "succeeded without a message";
    return out;
  }
  if (type != "errored") {
    out.why = type.empty() ? "no result type" : type;  // canceled, expired
    return out;
  }
  // result.error is the online error envelope {type: "error", error: {type, message}}.
  const json::value* envelope = r.if_contains("error");
  std::string error_type;
  if (envelope && envelope->is_object()) {
    if (const json::value* e = envelope->as_object().if_contains("error"); e && e->is_object()) {
      error_type = JsonString(e->as_object(), "type");
    }
  }
  const int status = StatusOfErrorType(error_type);
  if (IsTransientStatus(status)) {
    out.why = error_type.empty() ? "errored" : error_type;
    return out;
  }
  http::HttpResponse http;
  http.status = status;
  http.body = envelope ? json::serialize(*envelope) : std::string("{}");
  out.error = ParseAnthropicError(http);
  return out;
}

std::size_t AnthropicBatchApi::RequestBytes(const ChatRequest& request) const {
  return json::serialize(builder_.RequestBody(request)).size() + 100;  // + its {custom_id, params} wrapper
}

std::string AnthropicBatchApi::CreateBody(const std::vector<BatchItem>& items) const {
  json::array requests;
  requests.reserve(items.size());
  for (const BatchItem& item : items) {
    requests.push_back(json::object{{"custom_id", item.custom_id}, {"params", builder_.RequestBody(*item.request)}});
  }
  return json::serialize(json::object{{"requests", std::move(requests)}});
}

boost::asio::awaitable<std::expected<std::string, ProviderError>> AnthropicBatchApi::Create(
    const std::vector<BatchItem>& items, const BatchTag&) {
  std::string post = "POST";
  std::string path = kBatches;
  std::string json_type = "application/json";
  auto created = co_await BatchSend(endpoint_, post, path, CreateBody(items), json_type);
  if (!created) co_return std::unexpected(std::move(created.error()));
  auto batch = BatchJson(*created, "the message batch");
  if (!batch) co_return std::unexpected(std::move(batch.error()));
  std::string id = JsonString(*batch, "id");
  if (id.empty()) co_return std::unexpected(ProtocolError(*created, "the message batch has no id", "request-id"));
  co_return id;
}

boost::asio::awaitable<std::expected<BatchStatus, ProviderError>> AnthropicBatchApi::Poll(const std::string& id) {
  std::string get = "GET";
  std::string path = std::string(kBatches) + "/" + id;
  auto answer = co_await BatchSend(endpoint_, get, path);
  if (!answer) co_return std::unexpected(std::move(answer.error()));
  auto batch = BatchJson(*answer, "the message batch");
  if (!batch) co_return std::unexpected(std::move(batch.error()));
  BatchStatus status;
  status.id = id;
  status.raw = answer->body;
  status.state = JsonString(*batch, "processing_status");
  status.output_ref = JsonString(*batch, "results_url");
  int canceled = 0;
  if (const json::value* counts = batch->if_contains("request_counts"); counts && counts->is_object()) {
    const json::object& c = counts->as_object();
    const auto n = [&](std::string_view key) { return static_cast<int>(JsonCount(c, key)); };
    canceled = n("canceled");
    status.completed = n("succeeded");
    status.failed = n("errored") + canceled + n("expired");
    status.total = n("processing") + status.completed + status.failed;
  }
  status.ended = status.state == "ended";
  // Canceled before any request ran (by someone else: we never cancel): refused whole.
  if (status.ended && status.completed == 0 && status.failed == canceled && canceled > 0) {
    status.refused = true;
    status.refusal = "processing_status ended with every request canceled";
  }
  co_return status;
}

boost::asio::awaitable<std::expected<std::map<std::string, BatchItemResult>, ProviderError>> AnthropicBatchApi::Results(
    const BatchStatus& status) {
  // The key goes only to the provider's own base URL: a results_url elsewhere
  // is read at the documented path instead.
  std::string path = std::string(kBatches) + "/" + status.id + "/results";
  const std::string base = endpoint_.base_url.ends_with('/')
                               ? endpoint_.base_url.substr(0, endpoint_.base_url.size() - 1)
                               : endpoint_.base_url;
  if (status.output_ref.starts_with(base + "/")) path = status.output_ref.substr(base.size());
  std::string get = "GET";
  auto content = co_await BatchSend(endpoint_, get, path);
  if (!content) co_return std::unexpected(std::move(content.error()));
  std::map<std::string, BatchItemResult> out;
  const std::string& text = content->body;
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    boost::system::error_code ec;
    json::value line = json::parse(std::string_view(text).substr(start, end - start), ec);
    start = end + 1;
    if (ec || !line.is_object()) continue;
    out[JsonString(line.as_object(), "custom_id")] = AnthropicResultLine(line.as_object());
  }
  co_return out;
}

std::expected<ChatResponse, ProviderError> AnthropicBatchApi::ParseAnswer(const BatchItemResult& result,
                                                                          const ChatRequest& request) const {
  http::HttpResponse http;
  http.status = 200;
  http.body = result.answer.value_or("");
  return ParseAnthropicResponse(http, request);
}

}  // namespace skillrunner::providers
