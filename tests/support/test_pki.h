#pragma once

// Certificates for the TLS tests, made by the `openssl` command line as a user would make them: a CA,
// and server or client certificates it signs (for 127.0.0.1 and localhost).

#include <cstdlib>
#include <string>

#include "tests/support/cli_runner.h"
#include "tests/support/temp_tree.h"

namespace skillrunner::test_support {

// Runs a shell command; its exit status.
inline int Shell(const std::string& command) { return std::system(command.c_str()) == 0 ? 0 : 1; }

// A CA, and certificates it signs, made with the openssl command line in `dir`.
class TestPki {
 public:
  explicit TestPki(const testing::TempTree& dir) : dir_(dir) {
    Shell(
        Openssl("req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -subj '/CN=skillrunner test CA' "
                "-days 2"));
  }
  // NAME.pem and NAME.key for `subject`, for 127.0.0.1 and localhost.
  void Issue(const std::string& name, const std::string& subject) const {
    dir_.Write(name + ".ext", "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
    Shell(
        Openssl("req -newkey rsa:2048 -nodes -keyout " + name + ".key -out " + name + ".csr -subj '" + subject + "'"));
    Shell(Openssl("x509 -req -in " + name + ".csr -CA ca.pem -CAkey ca.key -CAcreateserial -out " + name +
                  ".pem -days 2 -extfile " + name + ".ext"));
  }
  std::string Path(const std::string& file) const { return dir_.Path(file).string(); }

 private:
  std::string Openssl(const std::string& args) const {
    return "cd " + ShellQuote(dir_.root().string()) + " && openssl " + args + " >/dev/null 2>&1";
  }
  const testing::TempTree& dir_;
};

}  // namespace skillrunner::test_support
