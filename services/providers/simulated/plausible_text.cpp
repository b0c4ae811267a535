// Plausible strings for the simulated provider: a small table keyed by
// property name, format samples, and short sentences. ASCII only, so byte
// length equals code-point length.

#include <array>
#include <boost/algorithm/string/case_conv.hpp>
#include <cstdio>
#include <string>

#include "services/providers/simulated/schema_instance.h"

namespace skillrunner::providers::simulation {
namespace {

struct Person {
  std::string_view first;
  std::string_view last;
};

constexpr std::array<Person, 8> kPeople = {{{"Ada", "Lovelace"},
                                            {"Grace", "Hopper"},
                                            {"Alan", "Turing"},
                                            {"Katherine", "Johnson"},
                                            {"Edsger", "Dijkstra"},
                                            {"Barbara", "Liskov"},
                                            {"Donald", "Knuth"},
                                            {"Frances", "Allen"}}};
constexpr std::array<std::string_view, 6> kCompanies = {"Analytical Engines Ltd", "Harvard Computation Lab",
                                                        "Bletchley Systems",      "Langley Research",
                                                        "Mathematisch Centrum",   "Eckert Data Corp"};
constexpr std::array<std::string_view, 6> kCities = {"London",  "New York",  "Manchester",
                                                     "Hampton", "Amsterdam", "Boston"};
constexpr std::array<std::string_view, 6> kCountries = {"United Kingdom", "United States", "Netherlands",
                                                        "France",         "Germany",       "Canada"};
constexpr std::array<std::string_view, 8> kSubjects = {"The request", "The customer", "The report",  "The team",
                                                       "The record",  "The ticket",   "The summary", "The input"};
constexpr std::array<std::string_view, 8> kPredicates = {"describes a billing question about the last invoice",
                                                         "asks for help resetting an account password",
                                                         "reports an error shown after the latest update",
                                                         "mentions a follow-up meeting next week",
                                                         "contains the contact details of one person",
                                                         "requests a refund for a duplicate charge",
                                                         "explains the steps taken so far",
                                                         "needs a short reply with the next steps"};
constexpr std::array<std::string_view, 12> kWords = {"alpha", "bravo",  "delta",  "harbor", "summit", "cedar",
                                                     "orbit", "signal", "ledger", "meadow", "vector", "copper"};
constexpr std::array<std::string_view, 8> kTitles = {"Invoice question",  "Password reset", "Error after update",
                                                     "Meeting follow-up", "Refund request", "Account access",
                                                     "Feature idea",      "Data export"};

template <std::size_t N>
std::string_view Pick(const std::array<std::string_view, N>& table, Rng& rng) {
  return table[rng.Below(N)];
}

const Person& PickPerson(Rng& rng) { return kPeople[rng.Below(kPeople.size())]; }

std::string Lower(std::string_view text) { return boost::algorithm::to_lower_copy(std::string(text)); }

bool Has(std::string_view name, std::string_view part) { return name.find(part) != std::string_view::npos; }

std::string TwoDigits(std::int64_t n) {
  char buffer[8];
  std::snprintf(buffer, sizeof buffer, "%02d", static_cast<int>(n));
  return buffer;
}

std::string Email(Rng& rng) {
  const Person& p = PickPerson(rng);
  return Lower(p.first) + "." + Lower(p.last) + "@example.com";
}

std::string Uuid(Rng& rng) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  std::uint64_t high = rng.Next();
  std::uint64_t low = rng.Next();
  for (int i = 0; i < 32; ++i) {
    std::uint64_t word = i < 16 ? high : low;
    int nibble = static_cast<int>((word >> (4 * (15 - i % 16))) & 0xF);
    if (i == 12) nibble = 4;                   // version 4
    if (i == 16) nibble = 8 + (nibble & 0x3);  // variant 10xx
    if (i == 8 || i == 12 || i == 16 || i == 20) out.push_back('-');
    out.push_back(kHex[nibble]);
  }
  return out;
}

std::string Date(Rng& rng) {
  return std::to_string(rng.Between(2020, 2026)) + "-" + TwoDigits(rng.Between(1, 12)) + "-" +
         TwoDigits(rng.Between(1, 28));
}

std::string Time(Rng& rng) {
  return TwoDigits(rng.Between(0, 23)) + ":" + TwoDigits(rng.Between(0, 59)) + ":" + TwoDigits(rng.Between(0, 59)) +
         "Z";
}

}  // namespace

std::string Sentence(Rng& rng) {
  return std::string(Pick(kSubjects, rng)) + " " + std::string(Pick(kPredicates, rng)) + ".";
}

std::string Word(Rng& rng) { return std::string(Pick(kWords, rng)); }

std::optional<std::string> FormatSample(std::string_view format, std::string_view /*name*/, Rng& rng) {
  if (format == "email" || format == "idn-email") return Email(rng);
  if (format == "uri" || format == "iri" || format == "uri-reference" || format == "iri-reference" || format == "url") {
    return "https://example.com/" + std::string(Pick(kWords, rng)) + "/" + std::to_string(rng.Between(1, 999));
  }
  if (format == "hostname" || format == "idn-hostname") {
    return std::string(Pick(kWords, rng)) + ".example.com";
  }
  if (format == "ipv4") return "192.0.2." + std::to_string(rng.Between(1, 254));
  if (format == "ipv6") {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string tail;
    for (int i = 0; i < 4; ++i) tail.push_back(kHex[rng.Below(16)]);
    if (tail[0] == '0') tail[0] = 'a';
    return "2001:db8::" + tail;
  }
  if (format == "uuid") return Uuid(rng);
  if (format == "date") return Date(rng);
  if (format == "time") return Time(rng);
  if (format == "date-time") return Date(rng) + "T" + Time(rng);
  return std::nullopt;
}

std::optional<std::string> PlausibleText(std::string_view raw_name, Rng& rng) {
  std::string name = Lower(raw_name);
  if (name == "verdict") return std::string("pass");
  if (Has(name, "email")) return Email(rng);
  if (Has(name, "first_name") || name == "firstname" || name == "given_name") {
    return std::string(PickPerson(rng).first);
  }
  if (Has(name, "last_name") || name == "lastname" || name == "surname" || name == "family_name") {
    return std::string(PickPerson(rng).last);
  }
  if (Has(name, "company") || Has(name, "organization") || Has(name, "organisation") || name == "employer") {
    return std::string(Pick(kCompanies, rng));
  }
  if (name == "name" || Has(name, "full_name") || Has(name, "contact") || name == "author" || name == "person" ||
      name == "assignee" || name == "customer") {
    const Person& p = PickPerson(rng);
    return std::string(p.first) + " " + std::string(p.last);
  }
  if (Has(name, "phone") || Has(name, "mobile") || name == "tel") {
    return "+1 555 01" + TwoDigits(rng.Between(0, 99));
  }
  if (Has(name, "city")) return std::string(Pick(kCities, rng));
  if (Has(name, "country")) return std::string(Pick(kCountries, rng));
  if (Has(name, "address") || Has(name, "street")) {
    return std::to_string(rng.Between(1, 250)) + " " + std::string(Pick(kWords, rng)) + " Street";
  }
  if (Has(name, "url") || Has(name, "website") || Has(name, "homepage") || Has(name, "link")) {
    return FormatSample("uri", name, rng);
  }
  if (Has(name, "date")) return Date(rng);
  if (Has(name, "title") || Has(name, "subject") || Has(name, "headline") || Has(name, "label")) {
    return std::string(Pick(kTitles, rng));
  }
  for (std::string_view prose : {"summary", "description", "reason", "explanation", "note", "comment", "message",
                                 "text", "body", "content", "detail", "issue", "fix"}) {
    if (Has(name, prose)) return Sentence(rng);
  }
  if (name == "id" || name.ends_with("_id"))
    return std::string(Pick(kWords, rng)) + "-" + std::to_string(rng.Between(100, 999));
  if (Has(name, "word") || Has(name, "tag") || Has(name, "keyword")) return std::string(Pick(kWords, rng));
  return std::nullopt;
}

}  // namespace skillrunner::providers::simulation
