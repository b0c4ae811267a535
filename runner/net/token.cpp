#include "runner/net/token.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <array>

namespace skillrunner::net {

namespace {

std::array<unsigned char, EVP_MAX_MD_SIZE> Digest(std::string_view text, unsigned int& size) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  if (EVP_Digest(text.data(), text.size(), digest.data(), &size, EVP_sha256(), nullptr) != 1) size = 0;
  return digest;
}

}  // namespace

bool TokensEqual(std::string_view given, std::string_view expected) {
  if (expected.empty()) return false;
  unsigned int given_size = 0;
  unsigned int expected_size = 0;
  auto a = Digest(given, given_size);
  auto b = Digest(expected, expected_size);
  if (given_size == 0 || given_size != expected_size) return false;
  return CRYPTO_memcmp(a.data(), b.data(), given_size) == 0;
}

}  // namespace skillrunner::net
