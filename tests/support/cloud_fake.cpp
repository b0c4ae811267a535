#include "tests/support/cloud_fake.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <chrono>
#include <csignal>
#include <fstream>
#include <thread>

#include "tests/support/http_fetch.h"

namespace skillrunner::test_support {
namespace json = boost::json;

CloudFake::CloudFake(const std::string& script, const std::vector<std::string>& args) {
  std::vector<std::string> all = {std::string(SKILLRUNNER_SOURCE_DIR) + "/tests/support/cloud/" + script, "--port-file",
                                  dir_.Path("port").string(), "--log", dir_.Path("log.jsonl").string()};
  all.insert(all.end(), args.begin(), args.end());
  process_ = std::make_unique<ChildProcess>("/usr/bin/python3", all, CleanEnvironment(), std::filesystem::path(),
                                            dir_.Path("stdout"), dir_.Path("stderr"));
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < until) {
    std::ifstream in(dir_.Path("port"));
    int port = 0;
    if (in >> port && port > 0) {
      port_ = static_cast<std::uint16_t>(port);
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

CloudFake::~CloudFake() {
  if (process_) {
    process_->Signal(SIGTERM);
    process_->Wait(std::chrono::seconds(5));
  }
}

void CloudFake::Enqueue(const std::string& route, const json::array& responses) {
  json::object body{{"route", route}, {"responses", responses}};
  HttpSend(port_, "POST", "/_fake/enqueue", "Host: 127.0.0.1\r\nContent-Type: application/json\r\n",
           json::serialize(body));
}

void CloudFake::Configure(const json::object& settings) {
  HttpSend(port_, "POST", "/_fake/config", "Host: 127.0.0.1\r\nContent-Type: application/json\r\n",
           json::serialize(settings));
}

void CloudFake::Reset() { HttpSend(port_, "POST", "/_fake/reset", "Host: 127.0.0.1\r\n", ""); }

json::array CloudFake::Requests() const {
  HttpReply reply = HttpFetch(port_, "/_fake/requests");
  boost::system::error_code ec;
  json::value value = json::parse(reply.body, ec);
  return !ec && value.is_array() ? value.as_array() : json::array();
}

std::vector<json::object> CloudFake::RequestsOf(const std::string& route) const {
  std::vector<json::object> out;
  for (const auto& request : Requests()) {
    if (request.is_object() && request.as_object().contains("route") && request.at("route").as_string() == route) {
      out.push_back(request.as_object());
    }
  }
  return out;
}

}  // namespace skillrunner::test_support
