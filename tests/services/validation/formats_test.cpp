#include "services/validation/formats.h"

#include <gtest/gtest.h>

namespace skillrunner::validation {
namespace {

struct Sample {
  const char* format;
  const char* text;
  bool valid;
};

TEST(FormatTest, AcceptsAndRejectsSamples) {
  const Sample samples[] = {
      {"email", "bob@example.com", true},
      {"email", "first.last+tag@sub.example.org", true},
      {"email", "\"odd name\"@example.com", true},
      {"email", "bob@[192.168.0.1]", true},
      {"email", "bob@", false},
      {"email", "@example.com", false},
      {"email", "bob..x@example.com", false},
      {"email", ".bob@example.com", false},
      {"email", "bob@exa mple.com", false},
      {"hostname", "www.example.com", true},
      {"hostname", "a-b.c", true},
      {"hostname", "-bad.com", false},
      {"hostname", "bad-.com", false},
      {"hostname", "under_score.com", false},
      {"hostname", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.com", false},
      {"uri", "https://example.com/a?b=c#d", true},
      {"uri", "urn:isbn:0451450523", true},
      {"uri", "//example.com/relative", false},
      {"uri", "not a uri", false},
      {"uuid", "123e4567-e89b-12d3-a456-426614174000", true},
      {"uuid", "123e4567e89b12d3a456426614174000", false},
      {"uuid", "123e4567-e89b-12d3-a456-42661417400g", false},
      {"ipv4", "192.168.0.1", true},
      {"ipv4", "256.1.1.1", false},
      {"ipv4", "1.2.3", false},
      {"ipv6", "::1", true},
      {"ipv6", "2001:db8::8a2e:370:7334", true},
      {"ipv6", "12345::", false},
      {"ipv6", "1.2.3.4", false},
      {"date", "2024-02-29", true},
      {"date", "2024-13-01", false},
      {"date-time", "2024-01-02T03:04:05Z", true},
      {"date-time", "2024-01-02 03:04:05", false},
      {"time", "03:04:05+02:00", true},
      {"time", "25:00:00Z", false},
      {"unknown-format", "anything", true},
  };
  for (const auto& sample : samples) {
    EXPECT_EQ(CheckFormat(sample.format, sample.text), sample.valid) << sample.format << " " << sample.text;
  }
}

}  // namespace
}  // namespace skillrunner::validation
