#include "services/providers/batch/openai_batch_api.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <random>

#include "services/common/json_text.h"
#include "services/providers/http_errors.h"

namespace skillrunner::providers {
namespace json = boost::json;

namespace {

std::string Boundary() {
  static thread_local std::mt19937_64 random{std::random_device{}()};
  return "skillrunner-" + std::to_string(random());
}

// Outcome of one line of an output or error file.
BatchItemResult LineResult(const json::object& line) {
  BatchItemResult out;
  const json::value* response = line.if_contains("response");
  const json::value* error = line.if_contains("error");
  if (response != nullptr && response->is_object()) {
    const json::object& r = response->as_object();
    int status = static_cast<int>(JsonCount(r, "status_code"));
    out.request_id = JsonString(r, "request_id");
    std::string body;
    if (const json::value* b = r.if_contains("body")) body = json::serialize(*b);
    if (status >= 200 && status < 300) {
      out.answer = std::move(body);
      return out;
    }
    if (status != 0 && !IsTransientStatus(status)) {
      http::HttpResponse http;
      http.status = status;
      http.body = std::move(body);
      out.error = ParseOpenAiError(http);
      out.error->request_id = out.request_id;
      return out;
    }
    out.why = "status " + std::to_string(status);
    return out;
  }
  if (error != nullptr && error->is_object()) {
    out.why = JsonString(error->as_object(), "code", "error");
    return out;
  }
  out.why = "no response";
  return out;
}

}  // namespace

std::string MultipartBody(const std::string& boundary, const std::vector<std::pair<std::string, std::string>>& fields,
                          const std::string& file_field, const std::string& file_name, const std::string& content) {
  std::string body;
  for (const auto& [name, value] : fields) {
    body += "--" + boundary + "\r\nContent-Disposition: form-data; name=\"" + name + "\"\r\n\r\n" + value + "\r\n";
  }
  body += "--" + boundary + "\r\nContent-Disposition: form-data; name=\"" + file_field + "\"; filename=\"" + file_name +
          "\"\r\nContent-Type: application/jsonl\r\n\r\n" + content + "\r\n";
  body += "--" + boundary + "--\r\n";
  return body;
}

std::string OpenAiBatchApi::InputFile(const std::vector<BatchItem>& items) const {
  std::string out;
  for (const BatchItem& item : items) {
    json::object line{{"custom_id", item.custom_id},
                      {"method", "POST"},
                      {"url", "/v1/chat/completions"},
                      {"body", builder_.RequestBody(*item.request)}};
    out += json::serialize(line) + "\n";
  }
  return out;
}

boost::asio::awaitable<std::expected<std::string, ProviderError>> OpenAiBatchApi::Create(
    const std::vector<BatchItem>& items, const BatchTag& tag) {
  const std::string boundary = Boundary();
  std::string upload = MultipartBody(boundary, {{"purpose", "batch"}}, "file", "requests.jsonl", InputFile(items));
  std::string upload_type = "multipart/form-data; boundary=" + boundary;
  std::string post = "POST";
  std::string files_path = "/files";
  auto uploaded = co_await BatchSend(endpoint_, post, files_path, std::move(upload), std::move(upload_type));
  if (!uploaded) co_return std::unexpected(std::move(uploaded.error()));
  auto file = BatchJson(*uploaded, "the uploaded file object");
  if (!file) co_return std::unexpected(std::move(file.error()));
  json::object create{
      {"input_file_id", JsonString(*file, "id")},
      {"endpoint", "/v1/chat/completions"},
      {"completion_window", "24h"},
      {"metadata", json::object{{kBatchRunKey, tag.run_id}, {kBatchRoundKey, std::to_string(tag.round)}}}};
  std::string batches_path = "/batches";
  std::string json_type = "application/json";
  auto created = co_await BatchSend(endpoint_, post, batches_path, json::serialize(create), json_type);
  if (!created) co_return std::unexpected(std::move(created.error()));
  auto batch = BatchJson(*created, "the batch object");
  if (!batch) co_return std::unexpected(std::move(batch.error()));
  std::string id = JsonString(*batch, "id");
  if (id.empty()) co_return std::unexpected(ProtocolError(*created, "the batch object has no id", "x-request-id"));
  co_return id;
}

boost::asio::awaitable<std::expected<BatchStatus, ProviderError>> OpenAiBatchApi::Poll(const std::string& id) {
  std::string get = "GET";
  std::string path = "/batches/" + id;
  auto answer = co_await BatchSend(endpoint_, get, path);
  if (!answer) co_return std::unexpected(std::move(answer.error()));
  auto batch = BatchJson(*answer, "the batch object");
  if (!batch) co_return std::unexpected(std::move(batch.error()));
  BatchStatus status;
  status.id = id;
  status.raw = answer->body;
  status.state = JsonString(*batch, "status");
  status.output_ref = JsonString(*batch, "output_file_id");
  status.error_ref = JsonString(*batch, "error_file_id");
  if (const json::value* counts = batch->if_contains("request_counts"); counts && counts->is_object()) {
    status.total = static_cast<int>(JsonCount(counts->as_object(), "total"));
    status.completed = static_cast<int>(JsonCount(counts->as_object(), "completed"));
    status.failed = static_cast<int>(JsonCount(counts->as_object(), "failed"));
  }
  const std::string& s = status.state;
  status.ended = s == "completed" || s == "expired" || s == "failed" || s == "cancelled";
  // A failed batch never ran (its file was refused); a cancelled one may
  // have finished some requests, which its files hold.
  if (s == "failed" || (s == "cancelled" && status.output_ref.empty() && status.error_ref.empty())) {
    status.refused = true;
    status.refusal = "status " + s;
    const json::value* errors = batch->if_contains("errors");
    const json::value* data = errors && errors->is_object() ? errors->as_object().if_contains("data") : nullptr;
    if (data && data->is_array() && !data->as_array().empty() && data->as_array()[0].is_object()) {
      status.refusal += ": " + JsonString(data->as_array()[0].as_object(), "message");
    }
  }
  co_return status;
}

boost::asio::awaitable<std::expected<void, ProviderError>> OpenAiBatchApi::ReadFile(
    const std::string& file_id, std::map<std::string, BatchItemResult>& out) {
  std::string get = "GET";
  std::string path = "/files/" + file_id + "/content";
  auto content = co_await BatchSend(endpoint_, get, path);
  if (!content) co_return std::unexpected(std::move(content.error()));
  std::size_t start = 0;
  const std::string& text = content->body;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    boost::system::error_code ec;
    json::value line = json::parse(std::string_view(text).substr(start, end - start), ec);
    start = end + 1;
    if (ec || !line.is_object()) continue;
    out[JsonString(line.as_object(), "custom_id")] = LineResult(line.as_object());
  }
  co_return std::expected<void, ProviderError>{};
}

boost::asio::awaitable<std::expected<std::map<std::string, BatchItemResult>, ProviderError>> OpenAiBatchApi::Results(
    const BatchStatus& status) {
  std::map<std::string, BatchItemResult> out;
  for (const std::string* file : {&status.output_ref, &status.error_ref}) {
    if (file->empty()) continue;
    auto read = co_await ReadFile(*file, out);
    if (!read) co_return std::unexpected(std::move(read.error()));
  }
  co_return out;
}

std::expected<ChatResponse, ProviderError> OpenAiBatchApi::ParseAnswer(const BatchItemResult& result,
                                                                       const ChatRequest& request) const {
  http::HttpResponse http;
  http.status = 200;
  http.body = result.answer.value_or("");
  if (!result.request_id.empty()) http.headers.emplace_back("x-request-id", result.request_id);
  return ParseOpenAiResponse(http, request);
}

boost::asio::awaitable<std::expected<std::optional<std::string>, ProviderError>> OpenAiBatchApi::FindTagged(
    const BatchTag& tag) {
  // The newest first: a batch created just before a crash is on the first page.
  std::string get = "GET";
  std::string path = "/batches?limit=100";
  auto listed = co_await BatchSend(endpoint_, get, path);
  if (!listed) co_return std::unexpected(std::move(listed.error()));
  auto list = BatchJson(*listed, "the batch list");
  if (!list) co_return std::unexpected(std::move(list.error()));
  const json::value* data = list->if_contains("data");
  if (data == nullptr || !data->is_array()) co_return std::nullopt;
  for (const json::value& batch : data->as_array()) {
    if (!batch.is_object()) continue;
    const json::value* metadata = batch.as_object().if_contains("metadata");
    if (metadata == nullptr || !metadata->is_object()) continue;
    if (JsonString(metadata->as_object(), kBatchRunKey) == tag.run_id &&
        JsonString(metadata->as_object(), kBatchRoundKey) == std::to_string(tag.round)) {
      co_return JsonString(batch.as_object(), "id");
    }
  }
  co_return std::nullopt;
}

boost::asio::awaitable<std::expected<std::optional<std::string>, ProviderError>> BatchApi::FindTagged(const BatchTag&) {
  co_return std::nullopt;
}

}  // namespace skillrunner::providers
