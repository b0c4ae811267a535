#include "tests/support/anthropic_batch_server.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <deque>
#include <mutex>
#include <regex>
#include <set>

#include "tests/support/openai_batch_server.h"

namespace skillrunner::test_support {
namespace json = boost::json;

namespace {

ScriptedResponse Json(int status, const json::value& body) {
  return ScriptedResponse{status, {}, json::serialize(body)};
}

ScriptedResponse Error(int status, const std::string& type, const std::string& message) {
  return Json(status, json::object{{"type", "error"}, {"error", json::object{{"type", type}, {"message", message}}}});
}

std::string Rfc3339(int second) {
  char text[32];
  std::snprintf(text, sizeof text, "2026-01-01T00:%02d:%02d.000000Z", (second / 60) % 60, second % 60);
  return text;
}

// Why `body` is not a valid create body, or "".
std::string Invalid(const json::value& body) {
  static const std::regex id_pattern("^[a-zA-Z0-9_-]{1,64}$");
  if (!body.is_object()) return "the body is not a JSON object";
  const json::value* requests = body.as_object().if_contains("requests");
  if (requests == nullptr || !requests->is_array() || requests->as_array().empty() ||
      requests->as_array().size() > 100'000) {
    return "requests: expected an array of 1 to 100000 requests";
  }
  std::set<std::string> ids;
  for (const json::value& request : requests->as_array()) {
    const json::object* r = request.if_object();
    const json::value* id = r ? r->if_contains("custom_id") : nullptr;
    if (id == nullptr || !id->is_string() || !std::regex_match(std::string(id->as_string()), id_pattern)) {
      return "requests.custom_id: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'";
    }
    if (!ids.insert(std::string(id->as_string())).second) return "requests: custom_id values must be unique";
    const json::value* params = r->if_contains("params");
    if (params == nullptr || !params->is_object() || !params->as_object().contains("model") ||
        !params->as_object().contains("max_tokens") || !params->as_object().contains("messages")) {
      return "requests.params: model, max_tokens and messages are required";
    }
  }
  return "";
}

}  // namespace

std::string AnthropicAnswer(const std::string& text) {
  return json::serialize(json::object{{"id", "msg_test"},
                                      {"type", "message"},
                                      {"role", "assistant"},
                                      {"model", "m"},
                                      {"content", json::array{json::object{{"type", "text"}, {"text", text}}}},
                                      {"stop_reason", "end_turn"},
                                      {"stop_sequence", nullptr},
                                      {"usage", json::object{{"input_tokens", 20}, {"output_tokens", 10}}}});
}

struct AnthropicBatchServer::State {
  struct Batch {
    std::string id;
    std::vector<std::pair<std::string, json::object>> requests;  // custom_id, params
    bool ended = false;
    int polls = 0;
    int created = 0;
    std::string results;  // JSONL once ended
    int succeeded = 0, errored = 0, expired = 0;
  };
  Answer answer;
  std::string base;
  std::mutex mutex;
  std::deque<Batch> batches;
  std::map<std::string, int> submissions, online_bodies;
  std::set<std::string> failed_once;
  std::function<std::string(const json::object&)> fail;
  int hold_from = 0, refuse_create = 0;
  std::chrono::milliseconds create_delay{0};
  std::size_t online = 0;

  ScriptedResponse Route(const RecordedRequest& request);
  ScriptedResponse Create(const std::string& text);
  json::object BatchObject(const Batch& batch) const;
  void End(Batch& batch);
  Batch* Find(const std::string& id) {
    for (Batch& batch : batches) {
      if (batch.id == id) return &batch;
    }
    return nullptr;
  }
};

ScriptedResponse AnthropicBatchServer::State::Route(const RecordedRequest& request) {
  std::lock_guard lock(mutex);
  const std::string& target = request.target;
  if (request.Header("anthropic-version").empty()) {
    return Error(400, "invalid_request_error", "anthropic-version: header is required");
  }
  const std::string prefix = "/v1/messages/batches";
  if (request.method == "POST" && target == "/v1/messages") {
    ++online;
    json::value body = json::parse(request.body);
    ++online_bodies[CanonicalJson(body)];
    return ScriptedResponse{200, {}, answer(body.as_object())};
  }
  if (request.method == "POST" && target == prefix) return Create(request.body);
  if (request.method == "GET" && target.starts_with(prefix + "?")) {
    json::array data;
    for (auto it = batches.rbegin(); it != batches.rend(); ++it) data.push_back(BatchObject(*it));
    return Json(200, json::object{{"data", data}, {"has_more", false}, {"first_id", nullptr}, {"last_id", nullptr}});
  }
  if (request.method == "GET" && target.starts_with(prefix + "/")) {
    std::string id = target.substr(prefix.size() + 1);
    const bool results = id.ends_with("/results");
    if (results) id.resize(id.size() - 8);
    Batch* batch = Find(id);
    if (batch == nullptr) return Error(404, "not_found_error", "No batch with id " + id);
    if (results) {
      if (!batch->ended) return Error(400, "invalid_request_error", "Batch " + id + " has not ended");
      return ScriptedResponse{200, {{"Content-Type", "application/binary"}}, batch->results};
    }
    const int number = std::stoi(id.substr(9));
    if (!batch->ended && ++batch->polls >= 2 && (hold_from == 0 || number < hold_from)) End(*batch);
    return Json(200, BatchObject(*batch));
  }
  return Error(404, "not_found_error", "Not found: " + request.method + " " + target);
}

ScriptedResponse AnthropicBatchServer::State::Create(const std::string& text) {
  if (refuse_create != 0) return Error(refuse_create, "not_found_error", "Not found: POST /v1/messages/batches");
  boost::system::error_code ec;
  json::value body = json::parse(text, ec);
  const std::string invalid = ec ? std::string("the body is not JSON") : Invalid(body);
  if (!invalid.empty()) return Error(400, "invalid_request_error", invalid);
  Batch batch;
  batch.id = "msgbatch_" + std::to_string(batches.size() + 1);
  batch.created = static_cast<int>(batches.size());
  for (const json::value& request : body.at("requests").as_array()) {
    const json::object& params = request.at("params").as_object();
    ++submissions[CanonicalJson(params)];
    batch.requests.emplace_back(std::string(request.at("custom_id").as_string()), params);
  }
  batches.push_back(std::move(batch));
  ScriptedResponse created = Json(200, BatchObject(batches.back()));
  created.delay = create_delay;
  return created;
}

json::object AnthropicBatchServer::State::BatchObject(const Batch& batch) const {
  const int processing = batch.ended ? 0 : static_cast<int>(batch.requests.size());
  json::object out{{"id", batch.id},
                   {"type", "message_batch"},
                   {"processing_status", batch.ended ? "ended" : "in_progress"},
                   {"request_counts", json::object{{"processing", processing},
                                                   {"succeeded", batch.succeeded},
                                                   {"errored", batch.errored},
                                                   {"canceled", 0},
                                                   {"expired", batch.expired}}},
                   {"ended_at", batch.ended ? json::value(Rfc3339(batch.created + 1)) : json::value(nullptr)},
                   {"created_at", Rfc3339(batch.created)},
                   {"expires_at", "2026-01-02T00:00:00.000000Z"},
                   {"archived_at", nullptr},
                   {"cancel_initiated_at", nullptr},
                   {"results_url", batch.ended ? json::value(base + "/v1/messages/batches/" + batch.id + "/results")
                                               : json::value(nullptr)}};
  return out;
}

// Runs every request: the results, newest request first.
void AnthropicBatchServer::State::End(Batch& batch) {
  std::string results;
  for (auto it = batch.requests.rbegin(); it != batch.requests.rend(); ++it) {
    const auto& [custom_id, params] = *it;
    std::string failure = fail ? fail(params) : "";
    if (!failure.empty() && !failed_once.insert(CanonicalJson(params)).second) failure.clear();
    json::object result;
    if (failure == "expired") {
      result = {{"type", "expired"}};
      ++batch.expired;
    } else if (failure == "errored") {
      result = {
          {"type", "errored"},
          {"error", json::object{{"type", "error"},
                                 {"error", json::object{{"type", "overloaded_error"}, {"message", "Overloaded"}}}}}};
      ++batch.errored;
    } else {
      result = {{"type", "succeeded"}, {"message", json::parse(answer(params))}};
      ++batch.succeeded;
    }
    results += json::serialize(json::object{{"custom_id", custom_id}, {"result", std::move(result)}}) + "\n";
  }
  batch.results = std::move(results);
  batch.ended = true;
}

AnthropicBatchServer::AnthropicBatchServer(Answer answer) : state_(std::make_shared<State>()) {
  state_->answer = std::move(answer);
  state_->base = server_.base_url();
  server_.SetRouter([state = state_](const RecordedRequest& request) -> std::optional<ScriptedResponse> {
    return state->Route(request);
  });
}

AnthropicBatchServer::~AnthropicBatchServer() = default;

std::string AnthropicBatchServer::base_url() const { return server_.base_url(); }

void AnthropicBatchServer::FailOnce(std::function<std::string(const json::object& params)> fail) {
  std::lock_guard lock(state_->mutex);
  state_->fail = std::move(fail);
}
void AnthropicBatchServer::HoldBatchesFrom(int n) {
  std::lock_guard lock(state_->mutex);
  state_->hold_from = n;
}
void AnthropicBatchServer::DelayCreate(std::chrono::milliseconds delay) {
  std::lock_guard lock(state_->mutex);
  state_->create_delay = delay;
}
void AnthropicBatchServer::RefuseCreate(int status) {
  std::lock_guard lock(state_->mutex);
  state_->refuse_create = status;
}
std::size_t AnthropicBatchServer::online_requests() const {
  std::lock_guard lock(state_->mutex);
  return state_->online;
}
std::map<std::string, int> AnthropicBatchServer::online_bodies() const {
  std::lock_guard lock(state_->mutex);
  return state_->online_bodies;
}
std::size_t AnthropicBatchServer::batches_created() const {
  std::lock_guard lock(state_->mutex);
  return state_->batches.size();
}
std::map<std::string, int> AnthropicBatchServer::submissions() const {
  std::lock_guard lock(state_->mutex);
  return state_->submissions;
}
std::size_t AnthropicBatchServer::submitted() const {
  std::lock_guard lock(state_->mutex);
  std::size_t total = 0;
  for (const auto& [body, times] : state_->submissions) total += static_cast<std::size_t>(times);
  return total;
}

}  // namespace skillrunner::test_support
