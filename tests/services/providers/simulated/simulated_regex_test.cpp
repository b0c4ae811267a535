#include <gtest/gtest.h>

#include "services/providers/simulated/regex_sample.h"

namespace skillrunner::providers::simulation {
namespace {

TEST(RegexSampleTest, SamplesMatchTheSupportedSubset) {
  const char* const patterns[] = {"^[A-Z]{3}-\\d{4}$",
                                  "^[+0-9 ()-]{6,20}$",
                                  "^(ab|cd)+x?$",
                                  "\\w+@\\w+\\.(com|org)",
                                  "^#[0-9a-fA-F]{6}$",
                                  "^[^0-9]{2,4}$",
                                  "^a.b\\sc\\.d$",
                                  "^(?:x|y|z){0,3}end$",
                                  "^\\d+(\\.\\d{1,2})?$",
                                  "^[a-z0-9+() -]{1,}$",
                                  "abc",
                                  "^v\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}$",
                                  "^[\\w.-]+$",
                                  "^\\S+$",
                                  "^(a(b(c|d)e)f)*$"};
  for (const char* pattern : patterns) {
    for (std::uint64_t seed = 0; seed < 200; ++seed) {
      Rng rng(seed);
      auto sample = SampleRegex(pattern, rng);
      ASSERT_TRUE(sample.has_value()) << pattern << " seed " << seed;
      EXPECT_TRUE(RegexSearch(pattern, *sample)) << pattern << " -> " << *sample;
    }
  }
}

TEST(RegexSampleTest, AnchorsAndBoundedRepeatsGiveExactShapes) {
  Rng rng(3);
  auto sample = SampleRegex("^[A-Z]{3}-\\d{4}$", rng);
  ASSERT_TRUE(sample);
  ASSERT_EQ(sample->size(), 8u);
  EXPECT_EQ((*sample)[3], '-');
}

TEST(RegexSampleTest, PatternsOutsideTheSubsetGiveNothing) {
  Rng rng(1);
  EXPECT_FALSE(SampleRegex("^(?=a)a$", rng));  // lookahead
  EXPECT_FALSE(SampleRegex("^(a)\\1$", rng));  // back-reference
  EXPECT_FALSE(SampleRegex("^[a-$", rng));     // broken class
  EXPECT_FALSE(SampleRegex("a^b", rng));       // verifies false
}

TEST(RegexSampleTest, RegexSearchIsUnanchoredAndSafeOnBadPatterns) {
  EXPECT_TRUE(RegexSearch("b+", "abbbc"));
  EXPECT_FALSE(RegexSearch("^b", "abc"));
  EXPECT_FALSE(RegexSearch("(", "("));
}

}  // namespace
}  // namespace skillrunner::providers::simulation
