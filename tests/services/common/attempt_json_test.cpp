#include <gtest/gtest.h>

#include <boost/json/serialize.hpp>

#include "services/common/invocation.h"

namespace skillrunner {
namespace {

TEST(AttemptJsonTest, ARateLimitWaitIsShownOnlyWhenThereWasOne) {
  Attempt attempt;
  attempt.n = 2;
  attempt.kind = AttemptKind::kTransient;
  attempt.role = AttemptRole::kGeneration;
  attempt.model = "gpt-4o-mini";
  attempt.provider = "openai";
  attempt.http_status = 429;
  attempt.delay_ms = 1150;
  attempt.queued_ms = 250;
  attempt.waited_ms = 1400;
  attempt.duration_ms = 3;
  EXPECT_EQ(boost::json::serialize(ToJson(attempt)),
            R"({"n":2,"kind":"transient","role":"generation","model":"gpt-4o-mini","provider":"openai",)"
            R"("temperature":null,"errors":[],"raw":"","http_status":429,"waited_ms":1400,"delay_ms":1150,)"
            R"("queued_ms":250,"input_tokens":0,"output_tokens":0,"cost_usd":null,"duration_ms":3})");
  attempt.queued_ms.reset();
  EXPECT_EQ(boost::json::serialize(ToJson(attempt)).find("queued_ms"), std::string::npos);
}

}  // namespace
}  // namespace skillrunner
