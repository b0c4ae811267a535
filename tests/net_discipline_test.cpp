// design.md §12.1: one front door. Every listener of the process (serve's
// JSON-lines socket, its metrics listener, /mcp, `view`) takes its connections
// from runner/net's Listener and every HTTP door runs on its HttpServer, so the
// limits, TLS, plain-text answer and identity rule are the same on each. No
// file of runner/ or services/ outside runner/net opens a listening socket or
// parses HTTP requests; each one that does is named with its file and line.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "tests/support/source_files.h"

namespace skillrunner {
namespace {

namespace fs = std::filesystem;

// An acceptor (Asio's or a raw listen(2)), or a parser of HTTP requests (a server's; clients parse
// responses).
const std::regex kServing(R"(\b(acceptor|basic_socket_acceptor|async_accept|request_parser)\b|::listen\s*\()");

std::vector<std::string> ServingOutsideNet(const fs::path& root) {
  const auto files = test_support::RunnerAndServicesSources(
      root, false, [](const std::string& path) { return !path.starts_with("runner/net/"); });
  return test_support::LinesMatching(files, kServing);
}

TEST(NetDisciplineTest, NoFileOutsideRunnerNetListensOrServesHttp) {
  EXPECT_EQ(ServingOutsideNet(SKILLRUNNER_SOURCE_DIR), std::vector<std::string>{})
      << "open listeners with net::Listener and serve HTTP with net::HttpServer (runner/net)";
}

TEST(NetDisciplineTest, TheCheckFindsEachWayToListen) {
  for (const char* line : {"  tcp::acceptor acceptor(io);", "co_await acceptor_.async_accept(strand, token);",
                           "http::request_parser<http::string_body> parser;", "  if (::listen(fd, 16) != 0)",
                           "std::optional<boost::asio::local::stream_protocol::acceptor> unix;"}) {
    EXPECT_TRUE(std::regex_search(std::string(line), kServing)) << line;
  }
  for (const char* line : {"http::response_parser<http::string_body> parser;", "listener->Start(next, adopt);",
                           "// accepts connections"}) {
    EXPECT_FALSE(std::regex_search(std::string(line), kServing)) << line;
  }
}

}  // namespace
}  // namespace skillrunner
