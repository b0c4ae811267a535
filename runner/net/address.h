#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <expected>
#include <string>
#include <string_view>

#include "services/common/error.h"

namespace skillrunner::net {

// "127.0.0.1:8080", "[::1]:8080", "localhost:0" (numeric addresses only, so
// that nothing waits on a resolver); anything else is CONFIG_INVALID.
Result<boost::asio::ip::tcp::endpoint> ParseListenAddress(std::string_view text);

}  // namespace skillrunner::net
