#include "tests/support/test_certificates.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <memory>
#include <stdexcept>

namespace skillrunner::test_support {
namespace {

struct KeyFree {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
struct CertFree {
  void operator()(X509* cert) const { X509_free(cert); }
};
using KeyPtr = std::unique_ptr<EVP_PKEY, KeyFree>;
using CertPtr = std::unique_ptr<X509, CertFree>;

void Check(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(std::string("test certificates: ") + what + " failed");
}

KeyPtr NewKey() {
  KeyPtr key(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
  Check(key != nullptr, "EC key generation");
  return key;
}

void AddExtension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* extension = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  Check(extension != nullptr, "certificate extension");
  X509_add_ext(cert, extension, -1);
  X509_EXTENSION_free(extension);
}

CertPtr NewCert(EVP_PKEY* key, const char* common_name, long serial) {
  CertPtr cert(X509_new());
  Check(cert != nullptr, "X509_new");
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), serial);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 7 * 24 * 3600);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("skillrunner tests"), -1,
                             -1, 0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(common_name), -1, -1, 0);
  return cert;
}

void WritePem(const std::filesystem::path& path, X509* cert, EVP_PKEY* key) {
  FILE* file = std::fopen(path.c_str(), "w");
  Check(file != nullptr, "opening a PEM file");
  bool ok = cert != nullptr ? PEM_write_X509(file, cert) == 1
                            : PEM_write_PrivateKey(file, key, nullptr, nullptr, 0, nullptr, nullptr) == 1;
  std::fclose(file);
  Check(ok, "writing PEM");
}

}  // namespace

TestCertificates GenerateTestCertificates(const std::filesystem::path& dir, const std::vector<std::string>& alt_names) {
  KeyPtr ca_key = NewKey();
  CertPtr ca = NewCert(ca_key.get(), "skillrunner test CA", 1);
  X509_set_issuer_name(ca.get(), X509_get_subject_name(ca.get()));
  AddExtension(ca.get(), ca.get(), NID_basic_constraints, "critical,CA:TRUE");
  AddExtension(ca.get(), ca.get(), NID_key_usage, "critical,keyCertSign,cRLSign");
  AddExtension(ca.get(), ca.get(), NID_subject_key_identifier, "hash");
  Check(X509_sign(ca.get(), ca_key.get(), EVP_sha256()) > 0, "signing the CA");

  KeyPtr server_key = NewKey();
  CertPtr server = NewCert(server_key.get(), "localhost", 2);
  X509_set_issuer_name(server.get(), X509_get_subject_name(ca.get()));
  std::string names;
  for (const std::string& name : alt_names) names += (names.empty() ? "" : ",") + name;
  AddExtension(server.get(), ca.get(), NID_subject_alt_name, names.c_str());
  AddExtension(server.get(), ca.get(), NID_basic_constraints, "critical,CA:FALSE");
  AddExtension(server.get(), ca.get(), NID_key_usage, "critical,digitalSignature");
  AddExtension(server.get(), ca.get(), NID_ext_key_usage, "serverAuth");
  AddExtension(server.get(), ca.get(), NID_authority_key_identifier, "keyid:always");
  Check(X509_sign(server.get(), ca_key.get(), EVP_sha256()) > 0, "signing the server certificate");

  TestCertificates out{(dir / "ca.pem").string(), (dir / "server.pem").string(), (dir / "server.key").string()};
  WritePem(out.ca_file, ca.get(), nullptr);
  WritePem(out.cert_file, server.get(), nullptr);
  WritePem(out.key_file, nullptr, server_key.get());
  return out;
}

}  // namespace skillrunner::test_support
