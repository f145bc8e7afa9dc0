// Certificates for TLS tests, made at test time by tests/support/make_certificates.sh (apt's
// openssl): an authority and the certificates it signs, ECDSA P-256, valid for two days, so
// nothing checked into the repository can expire.
//
//   auto ca = MakeAuthority(dir, "ca");
//   auto server = IssueCertificate(dir, "server", *ca, "DNS:localhost,IP:127.0.0.1");
//   // server->cert, server->key: PEM file paths in `dir`
#ifndef WORLDGEN_TESTS_SUPPORT_TEST_CERTIFICATES_H_
#define WORLDGEN_TESTS_SUPPORT_TEST_CERTIFICATES_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace worldgen::testing {

// PEM files of a certificate and its private key.
struct CertificateFiles {
  std::string cert;
  std::string key;
};

// A self-signed authority, written to `dir`/`name`.pem and `dir`/`name`.key (and the script's
// scratch files beside them).
absl::StatusOr<CertificateFiles> MakeAuthority(const std::string& dir, const std::string& name);

// A certificate signed by `authority` for `subject_alt_names` (openssl's form, e.g.
// "DNS:localhost,IP:127.0.0.1"), usable by a server and by a client, written to `dir`/`name`.pem
// and `dir`/`name`.key.
absl::StatusOr<CertificateFiles> IssueCertificate(const std::string& dir, const std::string& name,
                                                  const CertificateFiles& authority,
                                                  absl::string_view subject_alt_names);

}  // namespace worldgen::testing

#endif  // WORLDGEN_TESTS_SUPPORT_TEST_CERTIFICATES_H_
