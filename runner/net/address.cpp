#include "runner/net/address.h"

#include <boost/asio/ip/address.hpp>
#include <stdexcept>
#include <string>

namespace skillrunner::net {
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

Result<tcp::endpoint> ParseListenAddress(std::string_view text) {
  std::string_view host;
  std::string_view port;
  if (!text.empty() && text.front() == '[') {
    auto close = text.find("]:");
    if (close == std::string_view::npos)
      return Fail(ErrorCode::kConfigInvalid, "expected [IPv6]:PORT, got \"" + std::string(text) + "\"");
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    auto colon = text.rfind(':');
    if (colon == std::string_view::npos)
      return Fail(ErrorCode::kConfigInvalid, "expected HOST:PORT, got \"" + std::string(text) + "\"");
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  unsigned long number = 0;
  try {
    std::size_t used = 0;
    number = std::stoul(std::string(port), &used);
    if (used != port.size() || number > 65535) throw std::out_of_range("port");
  } catch (const std::exception&) {
    return Fail(ErrorCode::kConfigInvalid, "bad port in \"" + std::string(text) + "\" (0-65535)");
  }
  boost::system::error_code ec;
  asio::ip::address address = host == "localhost" ? asio::ip::address(asio::ip::address_v4::loopback())
                                                  : asio::ip::make_address(std::string(host), ec);
  if (ec) {
    return Fail(ErrorCode::kConfigInvalid,
                "\"" + std::string(host) + "\" is not an IP address (give a numeric address)");
  }
  return tcp::endpoint(address, static_cast<unsigned short>(number));
}

}  // namespace skillrunner::net
