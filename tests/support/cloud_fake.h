#pragma once

// The Bedrock and Vertex AI fakes (tests/support/cloud/*.py, Debian's python3 with botocore and
// PyJWT) started as processes on loopback: they check each request as the cloud would (SigV4
// signatures by botocore, service-account JWTs by their public key) and log what they received.

#include <boost/json/array.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tests/support/child_process.h"
#include "tests/support/temp_tree.h"

namespace skillrunner::test_support {

class CloudFake {
 public:
  // `script`: bedrock_fake.py or vertex_fake.py; `args` its flags (besides --port-file and --log).
  CloudFake(const std::string& script, const std::vector<std::string>& args);
  ~CloudFake();

  bool started() const { return port_ != 0; }
  std::uint16_t port() const { return port_; }
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_); }

  // Scripted answers for `route` (the fake's route names), used in order.
  void Enqueue(const std::string& route, const boost::json::array& responses);
  void Configure(const boost::json::object& settings);
  // Forgets the scripts and the log.
  void Reset();
  // Every request it received (method, path, headers, body, route, auth, ...), oldest first.
  boost::json::array Requests() const;
  // Those of one route.
  std::vector<boost::json::object> RequestsOf(const std::string& route) const;

 private:
  testing::TempTree dir_;
  std::unique_ptr<ChildProcess> process_;
  std::uint16_t port_ = 0;
};

}  // namespace skillrunner::test_support
