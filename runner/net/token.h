#pragma once

#include <string_view>

namespace skillrunner::net {

// Compares a client's token with the server's in time that depends on neither
// (both are hashed with SHA-256 and the digests compared with CRYPTO_memcmp).
bool TokensEqual(std::string_view given, std::string_view expected);

}  // namespace skillrunner::net
