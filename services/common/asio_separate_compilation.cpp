// The one translation unit that compiles Asio (BOOST_ASIO_SEPARATE_COMPILATION),
// in the lowest layer because every layer above may use Asio (the Clock's
// timer here, HTTP, the server); every other file only parses declarations.
// Beast and Asio's SSL are compiled in services/http.
#include <boost/asio/impl/src.hpp>
