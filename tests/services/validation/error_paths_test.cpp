#include "services/validation/error_paths.h"

#include <gtest/gtest.h>

namespace skillrunner::validation {
namespace {

TEST(JsonPointerTextTest, TokensAreEscapedPerRfc6901) {
  EXPECT_EQ(EscapePointerToken("a/b~c"), "a~1b~0c");
  EXPECT_EQ(EscapePointerToken("plain"), "plain");
}

TEST(JsonPointerTextTest, RefFragmentsArePercentDecoded) {
  EXPECT_EQ(DecodeUriFragment("/definitions/a%25b"), "/definitions/a%b");
  EXPECT_EQ(DecodeUriFragment("/definitions/with%20space"), "/definitions/with space");
  EXPECT_EQ(DecodeUriFragment("/broken%2"), "/broken%2");  // not percent-encoding: as written
}

}  // namespace
}  // namespace skillrunner::validation
