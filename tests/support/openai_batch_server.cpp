#include "tests/support/openai_batch_server.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <deque>

namespace skillrunner::test_support {
namespace json = boost::json;

namespace {

ScriptedResponse Json(int status, const json::value& body) {
  return ScriptedResponse{status, {}, json::serialize(body)};
}

ScriptedResponse Error(int status, const std::string& message, const std::string& type = "invalid_request_error") {
  return Json(status, json::object{
                          {"error",
                           json::object{{"message", message}, {"type", type}, {"param", nullptr}, {"code", nullptr}}}});
}

std::string Canonical(const json::value& value) { return CanonicalJson(value); }

std::string Trim(const std::string& s) {
  std::size_t a = s.find_first_not_of(" \t");
  std::size_t b = s.find_last_not_of(" \t");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

}  // namespace

std::string CanonicalJson(const json::value& value) {
  if (value.is_object()) {
    std::map<std::string, std::string> members;
    for (const auto& [key, member] : value.as_object()) members[std::string(key)] = CanonicalJson(member);
    std::string out = "{";
    for (const auto& [key, text] : members)
      out += (out.size() > 1 ? "," : "") + json::serialize(json::value(key)) + ":" + text;
    return out + "}";
  }
  if (value.is_array()) {
    std::string out = "[";
    for (const auto& item : value.as_array()) out += (out.size() > 1 ? "," : "") + CanonicalJson(item);
    return out + "]";
  }
  return json::serialize(value);
}

std::map<std::string, std::string> ParseMultipart(const std::string& content_type, const std::string& body) {
  std::map<std::string, std::string> parts;
  const std::string key = "boundary=";
  std::size_t at = content_type.find(key);
  if (!content_type.starts_with("multipart/form-data") || at == std::string::npos) return {};
  const std::string delimiter = "--" + Trim(content_type.substr(at + key.size()));
  std::size_t pos = body.find(delimiter);
  while (pos != std::string::npos) {
    pos += delimiter.size();
    if (body.compare(pos, 2, "--") == 0) return parts;  // the closing delimiter
    if (body.compare(pos, 2, "\r\n") != 0) return {};
    std::size_t headers_end = body.find("\r\n\r\n", pos);
    std::size_t next = body.find("\r\n" + delimiter, headers_end);
    if (headers_end == std::string::npos || next == std::string::npos) return {};
    std::string headers = body.substr(pos + 2, headers_end - pos - 2);
    std::size_t name_at = headers.find("name=\"");
    if (name_at == std::string::npos) return {};
    std::size_t name_end = headers.find('"', name_at + 6);
    parts[headers.substr(name_at + 6, name_end - name_at - 6)] = body.substr(headers_end + 4, next - headers_end - 4);
    pos = body.find(delimiter, next + 2);
  }
  return {};  // no closing delimiter
}

struct OpenAiBatchServer::State {
  struct Batch {
    std::string id;
    json::object metadata;
    std::vector<json::object> lines;  // the input file's
    std::string status = "validating";
    int polls_in_stage = 0;
    std::string output_file, error_file;
    int completed = 0, failed = 0;
    std::int64_t created_at = 0;
  };
  Answer answer;
  std::mutex mutex;  // the server calls the router under its own lock; tests read counts from their thread
  std::map<std::string, std::string> files;  // id -> content
  std::deque<Batch> batches;                 // in creation order
  std::map<std::string, int> submissions;
  std::map<std::string, int> online_bodies;
  std::set<std::string> expired_once;
  std::function<bool(const json::object&)> expire;
  int refuse_create = 0;
  bool fail_validation = false;
  int polls_per_stage = 1;
  int throttled_polls = 0;
  std::chrono::milliseconds throttle_delay{0};
  std::vector<std::pair<std::string, std::chrono::steady_clock::time_point>> throttled;
  int hold_from = 0;
  std::chrono::milliseconds create_delay{0};
  std::size_t online = 0, uploads = 0;

  ScriptedResponse Route(const RecordedRequest& request);
  ScriptedResponse Upload(const RecordedRequest& request);
  ScriptedResponse Create(const std::string& body);
  ScriptedResponse Get(const std::string& id);
  json::object BatchObject(const Batch& batch) const;
  void Advance(Batch& batch);
  void Finish(Batch& batch);
};

ScriptedResponse OpenAiBatchServer::State::Route(const RecordedRequest& request) {
  std::lock_guard lock(mutex);
  const std::string& target = request.target;
  if (request.method == "POST" && target == "/v1/chat/completions") {
    ++online;
    boost::system::error_code ec;
    json::value body = json::parse(request.body, ec);
    if (ec || !body.is_object()) return Error(400, "not JSON");
    ++online_bodies[Canonical(body)];
    return ScriptedResponse{200, {}, answer(body.as_object())};
  }
  if (request.method == "POST" && target == "/v1/files") return Upload(request);
  if (request.method == "POST" && target == "/v1/batches") return Create(request.body);
  if (request.method == "GET" && target.starts_with("/v1/batches?")) {
    json::array data;
    for (auto it = batches.rbegin(); it != batches.rend(); ++it) data.push_back(BatchObject(*it));
    return Json(200, json::object{{"object", "list"}, {"data", data}, {"has_more", false}});
  }
  if (request.method == "GET" && target.starts_with("/v1/batches/") && throttled_polls > 0) {
    --throttled_polls;
    throttled.emplace_back(target, request.arrived);
    ScriptedResponse throttled = Error(429, "Rate limit reached for requests");
    throttled.headers.emplace_back("retry-after-ms", std::to_string(throttle_delay.count()));
    return throttled;
  }
  if (request.method == "GET" && target.starts_with("/v1/batches/")) return Get(target.substr(12));
  if (request.method == "GET" && target.starts_with("/v1/files/") && target.ends_with("/content")) {
    auto file = files.find(target.substr(10, target.size() - 10 - 8));
    if (file == files.end()) return Error(404, "No such File object");
    return ScriptedResponse{200, {{"Content-Type", "application/octet-stream"}}, file->second};
  }
  return Error(404, "Invalid URL (" + request.method + " " + target + ")");
}

ScriptedResponse OpenAiBatchServer::State::Upload(const RecordedRequest& request) {
  auto parts = ParseMultipart(request.Header("content-type"), request.body);
  if (parts.empty() || !parts.contains("file")) return Error(400, "expected a multipart body with a file part");
  if (parts["purpose"] != "batch") return Error(400, "purpose must be batch");
  std::set<std::string> ids;
  const std::string& content = parts["file"];
  for (std::size_t start = 0; start < content.size();) {
    std::size_t end = content.find('\n', start);
    if (end == std::string::npos) end = content.size();
    boost::system::error_code ec;
    json::value line = json::parse(std::string_view(content).substr(start, end - start), ec);
    start = end + 1;
    if (ec || !line.is_object()) return Error(400, "a line of the file is not a JSON object");
    const json::object& o = line.as_object();
    const json::value* id = o.if_contains("custom_id");
    if (id == nullptr || !id->is_string() || !ids.insert(std::string(id->as_string())).second) {
      return Error(400, "custom_id missing or not unique");
    }
    if (o.if_contains("method") == nullptr || o.at("method") != "POST" || o.if_contains("url") == nullptr ||
        o.at("url") != "/v1/chat/completions" || !o.contains("body")) {
      return Error(400, "each line needs method POST, url /v1/chat/completions and a body");
    }
  }
  ++uploads;
  std::string id = "file-" + std::to_string(files.size() + 1);
  files[id] = content;
  return Json(200, json::object{{"id", id},
                                {"object", "file"},
                                {"bytes", content.size()},
                                {"created_at", 1767225600},
                                {"filename", "requests.jsonl"},
                                {"purpose", "batch"}});
}

ScriptedResponse OpenAiBatchServer::State::Create(const std::string& text) {
  if (refuse_create != 0) return Error(refuse_create, "Invalid URL (POST /v1/batches)");
  boost::system::error_code ec;
  json::value body = json::parse(text, ec);
  if (ec || !body.is_object()) return Error(400, "not JSON");
  const json::object& o = body.as_object();
  const json::value* file_id = o.if_contains("input_file_id");
  auto file = file_id && file_id->is_string() ? files.find(std::string(file_id->as_string())) : files.end();
  if (file == files.end()) return Error(400, "input_file_id does not name an uploaded file");
  if (o.if_contains("endpoint") == nullptr || o.at("endpoint") != "/v1/chat/completions" ||
      o.if_contains("completion_window") == nullptr || o.at("completion_window") != "24h") {
    return Error(400, "endpoint must be /v1/chat/completions and completion_window 24h");
  }
  Batch batch;
  batch.id = "batch_" + std::to_string(batches.size() + 1);
  batch.created_at = 1767225600 + static_cast<std::int64_t>(batches.size());
  if (const json::value* m = o.if_contains("metadata"); m && m->is_object()) batch.metadata = m->as_object();
  for (std::size_t start = 0; start < file->second.size();) {
    std::size_t end = file->second.find('\n', start);
    if (end == std::string::npos) end = file->second.size();
    json::value line = json::parse(std::string_view(file->second).substr(start, end - start));
    ++submissions[Canonical(line.at("body"))];
    batch.lines.push_back(std::move(line.as_object()));
    start = end + 1;
  }
  batches.push_back(std::move(batch));
  ScriptedResponse created = Json(200, BatchObject(batches.back()));
  created.delay = create_delay;
  return created;
}

json::object OpenAiBatchServer::State::BatchObject(const Batch& batch) const {
  auto file = [](const std::string& id) { return id.empty() ? json::value(nullptr) : json::value(id); };
  json::object out{
      {"id", batch.id},
      {"object", "batch"},
      {"endpoint", "/v1/chat/completions"},
      {"errors", nullptr},
      {"input_file_id", "file-in"},
      {"completion_window", "24h"},
      {"status", batch.status},
      {"output_file_id", file(batch.output_file)},
      {"error_file_id", file(batch.error_file)},
      {"created_at", batch.created_at},
      {"metadata", batch.metadata},
      {"request_counts",
       json::object{{"total", batch.lines.size()}, {"completed", batch.completed}, {"failed", batch.failed}}}};
  if (batch.status == "failed") {
    out["errors"] = json::object{
        {"object", "list"},
        {"data",
         json::array{json::object{
             {"code", "invalid_request"}, {"message", "the file was refused"}, {"line", 1}, {"param", nullptr}}}}};
  }
  return out;
}

ScriptedResponse OpenAiBatchServer::State::Get(const std::string& id) {
  for (Batch& batch : batches) {
    if (batch.id != id) continue;
    Advance(batch);
    return Json(200, BatchObject(batch));
  }
  return Error(404, "No batch found with id '" + id + "'");
}

void OpenAiBatchServer::State::Advance(Batch& batch) {
  if (++batch.polls_in_stage < polls_per_stage) return;
  batch.polls_in_stage = 0;
  if (batch.status == "validating") {
    batch.status = fail_validation ? "failed" : "in_progress";
  } else if (batch.status == "in_progress") {
    const int number = std::stoi(batch.id.substr(6));
    if (hold_from == 0 || number < hold_from) batch.status = "finalizing";
  } else if (batch.status == "finalizing") {
    Finish(batch);
  }
}

// Runs every request of the batch: the output file, the error file of the
// expired ones, and the final status.
void OpenAiBatchServer::State::Finish(Batch& batch) {
  std::string output, errors;
  int n = 0;
  for (const json::object& line : batch.lines) {
    const json::object& body = line.at("body").as_object();
    const std::string request_id = batch.id + "_req_" + std::to_string(++n);
    json::object out{{"id", request_id}, {"custom_id", line.at("custom_id")}};
    if (expire && expire(body) && expired_once.insert(Canonical(body)).second) {
      out["response"] = nullptr;
      out["error"] =
          json::object{{"code", "batch_expired"},
                       {"message", "This request could not be executed before the completion window expired."}};
      errors += json::serialize(out) + "\n";
      ++batch.failed;
      continue;
    }
    out["response"] =
        json::object{{"status_code", 200}, {"request_id", request_id}, {"body", json::parse(answer(body))}};
    out["error"] = nullptr;
    output += json::serialize(out) + "\n";
    ++batch.completed;
  }
  batch.status = batch.failed > 0 ? "expired" : "completed";
  if (!output.empty()) files[batch.output_file = "file-out-" + batch.id] = output;
  if (!errors.empty()) files[batch.error_file = "file-err-" + batch.id] = errors;
}

OpenAiBatchServer::OpenAiBatchServer(Answer answer) : state_(std::make_shared<State>()) {
  state_->answer = std::move(answer);
  server_.SetRouter([state = state_](const RecordedRequest& request) -> std::optional<ScriptedResponse> {
    return state->Route(request);
  });
}

OpenAiBatchServer::~OpenAiBatchServer() = default;

std::string OpenAiBatchServer::base_url() const { return server_.base_url() + "/v1"; }

void OpenAiBatchServer::ExpireOnce(std::function<bool(const json::object& body)> expire) {
  std::lock_guard lock(state_->mutex);
  state_->expire = std::move(expire);
}
void OpenAiBatchServer::RefuseCreate(int status) {
  std::lock_guard lock(state_->mutex);
  state_->refuse_create = status;
}
void OpenAiBatchServer::FailValidation() {
  std::lock_guard lock(state_->mutex);
  state_->fail_validation = true;
}
void OpenAiBatchServer::HoldBatchesFrom(int n) {
  std::lock_guard lock(state_->mutex);
  state_->hold_from = n;
}
void OpenAiBatchServer::DelayCreate(std::chrono::milliseconds delay) {
  std::lock_guard lock(state_->mutex);
  state_->create_delay = delay;
}
void OpenAiBatchServer::ThrottlePolls(int polls, std::chrono::milliseconds delay) {
  std::lock_guard lock(state_->mutex);
  state_->throttled_polls = polls;
  state_->throttle_delay = delay;
}

std::vector<std::pair<std::string, std::chrono::steady_clock::time_point>> OpenAiBatchServer::Throttled() const {
  std::lock_guard lock(state_->mutex);
  return state_->throttled;
}

void OpenAiBatchServer::SetPollsPerStage(int polls) {
  std::lock_guard lock(state_->mutex);
  state_->polls_per_stage = polls;
}
std::size_t OpenAiBatchServer::online_requests() const {
  std::lock_guard lock(state_->mutex);
  return state_->online;
}
std::size_t OpenAiBatchServer::batches_created() const {
  std::lock_guard lock(state_->mutex);
  return state_->batches.size();
}
std::size_t OpenAiBatchServer::uploads() const {
  std::lock_guard lock(state_->mutex);
  return state_->uploads;
}
std::map<std::string, int> OpenAiBatchServer::online_bodies() const {
  std::lock_guard lock(state_->mutex);
  return state_->online_bodies;
}
std::map<std::string, int> OpenAiBatchServer::submissions() const {
  std::lock_guard lock(state_->mutex);
  return state_->submissions;
}
std::size_t OpenAiBatchServer::submitted() const {
  std::lock_guard lock(state_->mutex);
  std::size_t total = 0;
  for (const auto& [body, times] : state_->submissions) total += static_cast<std::size_t>(times);
  return total;
}

}  // namespace skillrunner::test_support
