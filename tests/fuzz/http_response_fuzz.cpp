// libFuzzer target (issue 18): bytes as what an HTTP server sends back,
// through the HTTP client's own exchange (exchange_detail::ExchangeOn: the
// request written, the response read by Beast's parser with the client's
// limits, then ToResponse) over an in-memory Beast test stream instead of a
// socket. The first byte chooses: bits 0-2 how many bytes each read gets
// (1, 2, 3, 5, 8, 64, 1024 or 64 KiB: small ones split the response
// anywhere, large ones keep the runs fast), bit 6 a HEAD request, bit 7 a
// small max_response_bytes (512) instead of the default.
// The server closes after its bytes, so an incomplete response is a
// dropped one.
//   scripts/fuzz.sh http_response SECONDS

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/beast/_experimental/test/stream.hpp>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "services/http/exchange_stream.h"

namespace {

namespace asio = boost::asio;
namespace http = skillrunner::http;

boost::asio::awaitable<void> Exchange(boost::beast::test::stream& stream, const http::HttpRequest& request,
                                      std::size_t max_response_bytes) {
  static const http::ParsedUrl url = *http::ParseHttpUrl("http://127.0.0.1:8080/v1/chat/completions");
  boost::beast::flat_buffer buffer;
  http::ExchangeOutcome outcome =
      co_await http::exchange_detail::ExchangeOn(stream, buffer, request, url, max_response_bytes);
  if (outcome.response) {
    (void)outcome.response->Header("retry-after");
    (void)outcome.response->Header("content-type");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const unsigned choice = data[0];
  asio::io_context io;
  boost::beast::test::stream client(io);
  boost::beast::test::stream server(io);
  client.connect(server);
  constexpr std::size_t kReadSizes[] = {1, 2, 3, 5, 8, 64, 1024, 65536};
  client.read_size(kReadSizes[choice & 7]);
  client.append(std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1));
  client.close_remote();  // after its bytes, the server hangs up

  http::HttpRequest request;
  request.method = (choice & 64) != 0 ? "HEAD" : "POST";
  request.headers = {{"content-type", "application/json"}, {"authorization", "Bearer sk-fuzz"}};
  request.body = R"({"model":"fuzz","messages":[]})";
  const std::size_t max_response_bytes = (choice & 128) != 0 ? 512 : http::HttpClientOptions{}.max_response_bytes;
  asio::co_spawn(io, Exchange(client, request, max_response_bytes), asio::detached);
  io.run();
  return 0;
}
