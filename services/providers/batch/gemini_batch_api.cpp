#include "services/providers/batch/gemini_batch_api.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/url/encode.hpp>
#include <boost/url/rfc/pchars.hpp>

#include "services/common/json_text.h"
#include "services/providers/gemini_answer.h"
#include "services/providers/http_errors.h"

namespace skillrunner::providers {
namespace json = boost::json;

namespace {

// A proto int64 comes as a JSON string ("12"), sometimes as a number.
int Count(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr) return 0;
  if (v->is_string()) {
    try {
      return std::stoi(std::string(v->as_string()));
    } catch (...) {
      return 0;
    }
  }
  return static_cast<int>(JsonCount(o, key));
}

const json::object* Member(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v && v->is_object() ? &v->as_object() : nullptr;
}

// google.rpc.Code values a retry may cure: DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED, ABORTED, INTERNAL, UNAVAILABLE.
bool TransientCode(std::int64_t code) { return code == 4 || code == 8 || code == 10 || code == 13 || code == 14; }

BatchItemResult InlinedResult(const json::object& item) {
  BatchItemResult out;
  if (const json::object* response = Member(item, "response")) {
    out.request_id = JsonString(*response, "responseId");
    out.answer = json::serialize(*response);
    return out;
  }
  const json::object* status = Member(item, "error");
  if (status == nullptr) {
    out.why = "no response";
    return out;
  }
  const std::int64_t code = JsonCount(*status, "code");
  if (TransientCode(code)) {
    out.why = "code " + std::to_string(code) + ": " + JsonString(*status, "message");
    return out;
  }
  http::HttpResponse http;
  http.status = 400;
  http.body = json::serialize(json::object{{"error", *status}});
  out.error = ParseGeminiError(http);
  return out;
}

}  // namespace

std::size_t GeminiBatchApi::RequestBytes(const ChatRequest& request) const {
  return json::serialize(builder_.RequestBody(request)).size() + 64;  // + its {request, metadata: {key}} wrapper
}

std::string GeminiDisplayName(const BatchTag& tag) {
  return "skillrunner " + tag.run_id + " round " + std::to_string(tag.round);
}

std::string GeminiBatchApi::CreateBody(const std::vector<BatchItem>& items, const BatchTag& tag) const {
  json::array requests;
  requests.reserve(items.size());
  for (const BatchItem& item : items) {
    requests.push_back(json::object{{"request", builder_.RequestBody(*item.request)},
                                    {"metadata", json::object{{"key", item.custom_id}}}});
  }
  json::object batch{{"displayName", GeminiDisplayName(tag)},
                     {"inputConfig", json::object{{"requests", json::object{{"requests", std::move(requests)}}}}}};
  return json::serialize(json::object{{"batch", std::move(batch)}});
}

boost::asio::awaitable<std::expected<std::string, ProviderError>> GeminiBatchApi::Create(
    const std::vector<BatchItem>& items, const BatchTag& tag) {
  const std::string model =
      items.empty() ? std::string() : boost::urls::encode(items.front().request->model, boost::urls::pchars);
  std::string post = "POST";
  std::string path = "/v1beta/models/" + model + ":batchGenerateContent";
  std::string json_type = "application/json";
  auto created = co_await BatchSend(endpoint_, post, path, CreateBody(items, tag), json_type);
  if (!created) co_return std::unexpected(std::move(created.error()));
  auto operation = BatchJson(*created, "the batch operation");
  if (!operation) co_return std::unexpected(std::move(operation.error()));
  std::string name = JsonString(*operation, "name");
  if (!name.starts_with("batches/")) {
    co_return std::unexpected(ProtocolError(*created, "the batch operation has no batches/ name", "x-goog-request-id"));
  }
  co_return name;
}

boost::asio::awaitable<std::expected<BatchStatus, ProviderError>> GeminiBatchApi::Poll(const std::string& id) {
  std::string get = "GET";
  std::string path = "/v1beta/" + id;
  auto answer = co_await BatchSend(endpoint_, get, path);
  if (!answer) co_return std::unexpected(std::move(answer.error()));
  auto operation = BatchJson(*answer, "the batch operation");
  if (!operation) co_return std::unexpected(std::move(operation.error()));
  BatchStatus status;
  status.id = id;
  status.raw = answer->body;
  const json::object* metadata = Member(*operation, "metadata");
  if (metadata != nullptr) {
    status.state = JsonString(*metadata, "state");
    if (const json::object* stats = Member(*metadata, "batchStats")) {
      status.total = Count(*stats, "requestCount");
      status.completed = Count(*stats, "successfulRequestCount");
      status.failed = Count(*stats, "failedRequestCount");
    }
  }
  const json::value* done = operation->if_contains("done");
  const std::string& s = status.state;
  status.ended = (done && done->is_bool() && done->as_bool()) || s == "BATCH_STATE_SUCCEEDED" ||
                 s == "BATCH_STATE_FAILED" || s == "BATCH_STATE_CANCELLED" || s == "BATCH_STATE_EXPIRED";
  if (s == "BATCH_STATE_FAILED" || s == "BATCH_STATE_CANCELLED") {
    status.refused = true;
    status.refusal = "state " + s;
    if (const json::object* error = Member(*operation, "error")) status.refusal += ": " + JsonString(*error, "message");
  }
  co_return status;
}

// The answers are in the operation itself (inline requests, inline responses).
boost::asio::awaitable<std::expected<std::map<std::string, BatchItemResult>, ProviderError>> GeminiBatchApi::Results(
    const BatchStatus& status) {
  std::map<std::string, BatchItemResult> out;
  boost::system::error_code ec;
  json::value operation = json::parse(status.raw, ec);
  if (ec || !operation.is_object()) co_return out;
  const json::object* response = Member(operation.as_object(), "response");
  const json::object* inlined = response ? Member(*response, "inlinedResponses") : nullptr;
  const json::value* items = inlined ? inlined->if_contains("inlinedResponses") : nullptr;
  if (items == nullptr || !items->is_array()) co_return out;
  for (const json::value& item : items->as_array()) {
    if (!item.is_object()) continue;
    const json::object* metadata = Member(item.as_object(), "metadata");
    if (metadata == nullptr) continue;
    out[JsonString(*metadata, "key")] = InlinedResult(item.as_object());
  }
  co_return out;
}

std::expected<ChatResponse, ProviderError> GeminiBatchApi::ParseAnswer(const BatchItemResult& result,
                                                                       const ChatRequest& request) const {
  http::HttpResponse http;
  http.status = 200;
  http.body = result.answer.value_or("");
  return ParseGeminiResponse(http, request);
}

boost::asio::awaitable<std::expected<std::optional<std::string>, ProviderError>> GeminiBatchApi::FindTagged(
    const BatchTag& tag) {
  std::string get = "GET";
  std::string path = "/v1beta/batches?pageSize=100";
  auto listed = co_await BatchSend(endpoint_, get, path);
  if (!listed) co_return std::unexpected(std::move(listed.error()));
  auto list = BatchJson(*listed, "the batch list");
  if (!list) co_return std::unexpected(std::move(list.error()));
  const json::value* operations = list->if_contains("operations");
  if (operations == nullptr || !operations->is_array()) co_return std::nullopt;
  const std::string wanted = GeminiDisplayName(tag);
  for (const json::value& operation : operations->as_array()) {
    if (!operation.is_object()) continue;
    const json::object* metadata = Member(operation.as_object(), "metadata");
    if (metadata != nullptr && JsonString(*metadata, "displayName") == wanted) {
      co_return JsonString(operation.as_object(), "name");
    }
  }
  co_return std::nullopt;
}

}  // namespace skillrunner::providers
