// The fuzz build keeps Boost's assertions (BOOST_ENABLE_ASSERT_HANDLER): each
// one fails the run, except one that is known to be wrong.
#include <boost/assert.hpp>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace boost {

void assertion_failed(char const* expr, char const* function, char const* file, long line) {
  // Beast 1.81's chunk parser asserts n >= 5 when the last chunk ("0\r\n")
  // came alone and one more byte follows (n is 4); the code after it is
  // right, and the assertion was corrected upstream (boostorg/beast PR 2861).
  // tests/services/http/exchange_test.cpp reads such a response.
  if (std::string_view(file).ends_with("boost/beast/http/impl/basic_parser.ipp") &&
      std::string_view(expr) == "n >= 5") {
    return;
  }
  std::fprintf(stderr, "%s:%ld: %s: Assertion `%s' failed.\n", file, line, function, expr);
  std::abort();
}

void assertion_failed_msg(char const* expr, char const* msg, char const* function, char const* file, long line) {
  std::fprintf(stderr, "%s:%ld: %s: Assertion `%s' failed: %s\n", file, line, function, expr, msg);
  std::abort();
}

}  // namespace boost
