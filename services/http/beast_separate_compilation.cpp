// The one translation unit that compiles Beast and Asio's SSL support
// (BOOST_BEAST_SEPARATE_COMPILATION), so every other file that uses them only
// parses declarations. Asio itself is compiled in services/common.
#include <boost/asio/ssl/impl/src.hpp>
#include <boost/beast/src.hpp>
