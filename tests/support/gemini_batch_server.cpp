#include "tests/support/gemini_batch_server.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <deque>
#include <mutex>
#include <set>

#include "tests/support/openai_batch_server.h"

namespace skillrunner::test_support {
namespace json = boost::json;

namespace {

constexpr const char* kBatchType = "type.googleapis.com/google.ai.generativelanguage.v1beta.GenerateContentBatch";
constexpr const char* kOutputType =
    "type.googleapis.com/google.ai.generativelanguage.v1beta.GenerateContentBatchOutput";

ScriptedResponse Json(int status, const json::value& body) {
  return ScriptedResponse{status, {}, json::serialize(body)};
}

ScriptedResponse Error(int status, const std::string& grpc_status, const std::string& message) {
  return Json(status,
              json::object{{"error", json::object{{"code", status}, {"message", message}, {"status", grpc_status}}}});
}

// The requests of a create body, or why it is not one.
std::string Invalid(const json::value& body) {
  const json::value* wrapper = body.is_object() ? body.as_object().if_contains("batch") : nullptr;
  const json::object* batch = wrapper ? wrapper->if_object() : nullptr;
  if (batch == nullptr) return "batch: required";
  const json::value* name = batch->if_contains("displayName");
  if (name == nullptr || !name->is_string() || name->as_string().empty()) return "batch.displayName: required";
  const json::value* config = batch->if_contains("inputConfig");
  const json::value* outer = config && config->is_object() ? config->as_object().if_contains("requests") : nullptr;
  const json::value* list = outer && outer->is_object() ? outer->as_object().if_contains("requests") : nullptr;
  if (list == nullptr || !list->is_array() || list->as_array().empty()) {
    return "batch.inputConfig.requests.requests: a non-empty array is required";
  }
  std::set<std::string> keys;
  for (const json::value& item : list->as_array()) {
    const json::object* o = item.if_object();
    const json::value* request = o ? o->if_contains("request") : nullptr;
    if (request == nullptr || !request->is_object() || !request->as_object().contains("contents")) {
      return "request: a GenerateContentRequest with contents is required";
    }
    const json::value* metadata = o->if_contains("metadata");
    const json::value* key = metadata && metadata->is_object() ? metadata->as_object().if_contains("key") : nullptr;
    if (key == nullptr || !key->is_string() || !keys.insert(std::string(key->as_string())).second) {
      return "metadata.key: required and unique";
    }
  }
  return "";
}

}  // namespace

std::string GeminiAnswer(const std::string& text) {
  json::object content{{"role", "model"}, {"parts", json::array{json::object{{"text", text}}}}};
  return json::serialize(json::object{
      {"candidates", json::array{json::object{{"content", content}, {"finishReason", "STOP"}, {"index", 0}}}},
      {"usageMetadata", json::object{{"promptTokenCount", 20}, {"candidatesTokenCount", 10}, {"totalTokenCount", 30}}},
      {"modelVersion", "m"},
      {"responseId", "resp_test"}});
}

struct GeminiBatchServer::State {
  struct Batch {
    std::string name, model, display_name;
    std::vector<json::object> items;  // {request, metadata}
    std::string state = "BATCH_STATE_PENDING";
    int number = 0;
    json::array responses;
  };
  Answer answer;
  std::mutex mutex;
  std::deque<Batch> batches;
  std::map<std::string, int> submissions, online_bodies;
  int expire = 0, hold_from = 0;
  std::function<std::pair<int, std::string>(const json::object&)> fail;
  std::set<std::string> failed_once;
  std::chrono::milliseconds create_delay{0};
  std::size_t online = 0;

  ScriptedResponse Route(const RecordedRequest& request);
  ScriptedResponse Create(const std::string& model, const std::string& text);
  json::object Operation(const Batch& batch) const;
  void Advance(Batch& batch);
};

ScriptedResponse GeminiBatchServer::State::Route(const RecordedRequest& request) {
  std::lock_guard lock(mutex);
  const std::string& target = request.target;
  const std::string models = "/v1beta/models/";
  if (request.method == "POST" && target.starts_with(models)) {
    const std::size_t colon = target.rfind(':');
    const std::string model = target.substr(models.size(), colon - models.size());
    const std::string method = target.substr(colon + 1);
    if (method == "batchGenerateContent") return Create(model, request.body);
    if (method != "generateContent") return Error(404, "NOT_FOUND", "no method " + method);
    ++online;
    json::value body = json::parse(request.body);
    ++online_bodies[model + " " + CanonicalJson(body)];
    return ScriptedResponse{200, {}, answer(body.as_object())};
  }
  if (request.method == "GET" && target.starts_with("/v1beta/batches?")) {
    json::array operations;
    for (auto it = batches.rbegin(); it != batches.rend(); ++it) operations.push_back(Operation(*it));
    return Json(200, json::object{{"operations", operations}});
  }
  if (request.method == "GET" && target.starts_with("/v1beta/batches/")) {
    const std::string name = target.substr(8);
    for (Batch& batch : batches) {
      if (batch.name != name) continue;
      Advance(batch);
      return Json(200, Operation(batch));
    }
    return Error(404, "NOT_FOUND", "Requested entity was not found.");
  }
  return Error(404, "NOT_FOUND", "no route " + request.method + " " + target);
}

ScriptedResponse GeminiBatchServer::State::Create(const std::string& model, const std::string& text) {
  if (text.size() > 20'000'000)
    return Error(400, "INVALID_ARGUMENT", "Request payload size exceeds the limit: 20000000 bytes.");
  boost::system::error_code ec;
  json::value body = json::parse(text, ec);
  const std::string invalid = ec ? std::string("the body is not JSON") : Invalid(body);
  if (!invalid.empty()) return Error(400, "INVALID_ARGUMENT", invalid);
  Batch batch;
  batch.number = static_cast<int>(batches.size()) + 1;
  batch.name = "batches/" + std::to_string(batch.number);
  batch.model = model;
  const json::object& b = body.at("batch").as_object();
  batch.display_name = std::string(b.at("displayName").as_string());
  for (const json::value& item : b.at("inputConfig").at("requests").at("requests").as_array()) {
    ++submissions[model + " " + CanonicalJson(item.at("request"))];
    batch.items.push_back(item.as_object());
  }
  batches.push_back(std::move(batch));
  ScriptedResponse created = Json(200, Operation(batches.back()));
  created.delay = create_delay;
  return created;
}

json::object GeminiBatchServer::State::Operation(const Batch& batch) const {
  const auto count = [](std::size_t n) { return std::to_string(n); };
  const bool succeeded = batch.state == "BATCH_STATE_SUCCEEDED";
  const std::size_t done_count = succeeded ? batch.items.size() : 0;
  json::object stats{{"requestCount", count(batch.items.size())},
                     {"successfulRequestCount", count(done_count)},
                     {"pendingRequestCount", count(batch.items.size() - done_count)}};
  json::object metadata{{"@type", kBatchType},
                        {"model", "models/" + batch.model},
                        {"displayName", batch.display_name},
                        {"name", batch.name},
                        {"state", batch.state},
                        {"batchStats", stats},
                        {"createTime", "2026-01-01T00:00:00Z"}};
  json::object out{{"name", batch.name}, {"metadata", metadata}};
  if (succeeded || batch.state == "BATCH_STATE_EXPIRED") out["done"] = true;
  if (succeeded) {
    out["response"] =
        json::object{{"@type", kOutputType}, {"inlinedResponses", json::object{{"inlinedResponses", batch.responses}}}};
  }
  return out;
}

void GeminiBatchServer::State::Advance(Batch& batch) {
  if (batch.state == "BATCH_STATE_PENDING") {
    batch.state = "BATCH_STATE_RUNNING";
  } else if (batch.state == "BATCH_STATE_RUNNING" && (hold_from == 0 || batch.number < hold_from)) {
    if (batch.number == expire) {
      batch.state = "BATCH_STATE_EXPIRED";
      return;
    }
    for (auto it = batch.items.rbegin(); it != batch.items.rend(); ++it) {  // any order
      const json::object& request = it->at("request").as_object();
      auto [code, message] = fail ? fail(request) : std::pair<int, std::string>{0, ""};
      if (code != 0 && failed_once.insert(CanonicalJson(request)).second) {
        batch.responses.push_back(json::object{{"error", json::object{{"code", code}, {"message", message}}},
                                               {"metadata", it->at("metadata")}});
        continue;
      }
      batch.responses.push_back(
          json::object{{"response", json::parse(answer(request))}, {"metadata", it->at("metadata")}});
    }
    batch.state = "BATCH_STATE_SUCCEEDED";
  }
}

GeminiBatchServer::GeminiBatchServer(Answer answer) : state_(std::make_shared<State>()) {
  state_->answer = std::move(answer);
  server_.SetRouter([state = state_](const RecordedRequest& request) -> std::optional<ScriptedResponse> {
    return state->Route(request);
  });
}

GeminiBatchServer::~GeminiBatchServer() = default;

std::string GeminiBatchServer::base_url() const { return server_.base_url(); }

void GeminiBatchServer::FailOnce(std::function<std::pair<int, std::string>(const json::object& request)> fail) {
  std::lock_guard lock(state_->mutex);
  state_->fail = std::move(fail);
}
void GeminiBatchServer::ExpireBatch(int n) {
  std::lock_guard lock(state_->mutex);
  state_->expire = n;
}
void GeminiBatchServer::HoldBatchesFrom(int n) {
  std::lock_guard lock(state_->mutex);
  state_->hold_from = n;
}
void GeminiBatchServer::DelayCreate(std::chrono::milliseconds delay) {
  std::lock_guard lock(state_->mutex);
  state_->create_delay = delay;
}
std::size_t GeminiBatchServer::online_requests() const {
  std::lock_guard lock(state_->mutex);
  return state_->online;
}
std::map<std::string, int> GeminiBatchServer::online_bodies() const {
  std::lock_guard lock(state_->mutex);
  return state_->online_bodies;
}
std::size_t GeminiBatchServer::batches_created() const {
  std::lock_guard lock(state_->mutex);
  return state_->batches.size();
}
std::map<std::string, int> GeminiBatchServer::submissions() const {
  std::lock_guard lock(state_->mutex);
  return state_->submissions;
}
std::size_t GeminiBatchServer::submitted() const {
  std::lock_guard lock(state_->mutex);
  std::size_t total = 0;
  for (const auto& [body, times] : state_->submissions) total += static_cast<std::size_t>(times);
  return total;
}

}  // namespace skillrunner::test_support
