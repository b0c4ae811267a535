#pragma once

// Certificates made at run time for TLS tests: a CA, and a server
// certificate it signed for the given subject alternative names.
// Nothing is checked in, nothing expires in the repository.

#include <filesystem>
#include <string>
#include <vector>

namespace skillrunner::test_support {

struct TestCertificates {
  std::string ca_file;    // PEM: the CA certificate (give it to clients as ca_file)
  std::string cert_file;  // PEM: the server certificate
  std::string key_file;   // PEM: the server's private key
};

// Writes ca.pem, server.pem and server.key into `dir` (which must exist).
// Throws std::runtime_error when OpenSSL fails.
// `alt_names` are OpenSSL SAN entries ("DNS:name", "IP:address").
TestCertificates GenerateTestCertificates(const std::filesystem::path& dir,
                                          const std::vector<std::string>& alt_names = {"DNS:localhost", "IP:127.0.0.1",
                                                                                       "IP:::1"});

}  // namespace skillrunner::test_support
