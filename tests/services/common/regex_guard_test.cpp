#include "services/common/regex_guard.h"

#include <gtest/gtest.h>

namespace skillrunner {
namespace {

TEST(RegexGuardTest, CountsAndBackReferencesOfMoreThanNineDigitsDoNotFit) {
  for (const char* pattern : {"a{1234567890}", "a{1,1234567890}", "a{,1234567890", "(a)\\1234567890",
                              "[x]{0,99999999999999999999}", "\\\\\\1234567890"}) {
    EXPECT_FALSE(RegexNumbersFit(pattern)) << pattern;
  }
  // Up to 9 digits, literal digits, an escaped backslash before digits, and unfinished ends.
  for (const char* pattern : {"a{123456789}", "a{1,123456789}", "(a)\\1", "^4111111111111111$", "\\\\1234567890",
                              "\\d{3}-\\d{4}", "{", "\\", "a{1,"}) {
    EXPECT_TRUE(RegexNumbersFit(pattern)) << pattern;
  }
}

}  // namespace
}  // namespace skillrunner
