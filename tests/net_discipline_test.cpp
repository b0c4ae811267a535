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

namespace skillrunner {
namespace {

namespace fs = std::filesystem;

// An acceptor (Asio's or a raw listen(2)), or a parser of HTTP requests (a server's; clients parse
// responses).
const std::regex kServing(R"(\b(acceptor|basic_socket_acceptor|async_accept|request_parser)\b|::listen\s*\()");

std::vector<std::string> ServingOutsideNet(const fs::path& root) {
  std::vector<std::string> found;
  for (const char* folder : {"runner", "services"}) {
    for (const auto& entry : fs::recursive_directory_iterator(root / folder)) {
      const fs::path& file = entry.path();
      if (!entry.is_regular_file() || (file.extension() != ".cpp" && file.extension() != ".h")) continue;
      const std::string path = fs::relative(file, root).generic_string();
      if (path.starts_with("runner/net/")) continue;
      std::ifstream in(file);
      int number = 0;
      for (std::string line; std::getline(in, line);) {
        ++number;
        if (std::regex_search(line, kServing)) found.push_back(path + ":" + std::to_string(number) + ": " + line);
      }
    }
  }
  return found;
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
