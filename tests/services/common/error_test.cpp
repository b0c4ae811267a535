#include "services/common/error.h"

#include <gtest/gtest.h>

namespace skillrunner {
namespace {

TEST(ErrorCodeTest, ExitStatusSeparatesUserErrorsFromProviderFailures) {
  EXPECT_EQ(ExitStatusFor(ErrorCode::kInputInvalid), 2);
  EXPECT_EQ(ExitStatusFor(ErrorCode::kSkillNotFound), 2);
  EXPECT_EQ(ExitStatusFor(ErrorCode::kConfigInvalid), 2);
  EXPECT_EQ(ExitStatusFor(ErrorCode::kHandlerFailed), 3);
  EXPECT_EQ(ExitStatusFor(ErrorCode::kProviderUnavailable), 3);
  EXPECT_EQ(ExitStatusFor(ErrorCode::kMaxRetriesExceeded), 4);
  EXPECT_EQ(ExitStatusFor(ErrorCode::kJudgeError), 4);
}

TEST(ErrorCodeTest, JsonRpcCodesFollowTheExitClass) {
  EXPECT_EQ(JsonRpcCodeFor(ErrorCode::kInputInvalid), -32002);
  EXPECT_EQ(JsonRpcCodeFor(ErrorCode::kTimeout), -32003);
  EXPECT_EQ(JsonRpcCodeFor(ErrorCode::kRefused), -32004);
  EXPECT_EQ(JsonRpcCodeFor(ErrorCode::kOverloaded), -32000);
  EXPECT_EQ(JsonRpcCodeFor(ErrorCode::kUnauthorized), -32001);
}

// INTERNAL: JSON-RPC's own "Internal error", and exit status 2 both ways.
TEST(ErrorCodeTest, InternalIsJsonRpcsInternalErrorAndExitsTwo) {
  EXPECT_EQ(ErrorCodeName(ErrorCode::kInternal), "INTERNAL");
  EXPECT_EQ(ExitStatusFor(ErrorCode::kInternal), 2);
  EXPECT_EQ(JsonRpcCodeFor(ErrorCode::kInternal), -32603);
  EXPECT_EQ(ExitStatusForJsonRpcCode(JsonRpcCodeFor(ErrorCode::kInternal)), 2);
}

TEST(ErrorCodeTest, FailWithContextKeepsTheCodeAndPrefixesTheMessage) {
  Result<int> failed = Fail(Error{ErrorCode::kInternal, "disk full", {}, {}}, "cannot write f");
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().code, ErrorCode::kInternal);
  EXPECT_EQ(failed.error().message, "cannot write f: disk full");
}

TEST(ErrorCodeTest, NamesAreTheDocumentedCodes) {
  EXPECT_EQ(ErrorCodeName(ErrorCode::kHandlerFailed), "HANDLER_FAILED");
  EXPECT_EQ(ErrorCodeName(ErrorCode::kProviderUnavailable), "PROVIDER_UNAVAILABLE");
}

}  // namespace
}  // namespace skillrunner
