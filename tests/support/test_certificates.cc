#include "tests/support/test_certificates.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/client/subprocess.h"

namespace worldgen::testing {
namespace {

absl::Status RunOpenssl(std::vector<std::string> args) {
  args.insert(args.begin(), kOpenssl);
  absl::StatusOr<CommandResult> run = RunCommand(args, absl::Seconds(30));
  if (!run.ok()) return run.status();
  if (run->exit_code != 0) {
    return absl::InternalError(
        absl::StrCat("openssl ", args[1], " exited ", run->exit_code, ": ", run->err));
  }
  return absl::OkStatus();
}

// A new P-256 key and a request (or, with `self_signed`, a certificate) for it.
std::vector<std::string> NewKeyArgs(const std::string& key, const std::string& out,
                                    const std::string& subject) {
  return {"req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",    "-nodes", "-keyout",
          key,   "-out",    out,  "-subj",    absl::StrCat("/CN=", subject)};
}

}  // namespace

absl::StatusOr<CertificateFiles> MakeAuthority(const std::string& dir, const std::string& name) {
  CertificateFiles files{absl::StrCat(dir, "/", name, ".pem"),
                         absl::StrCat(dir, "/", name, ".key")};
  std::vector<std::string> args = NewKeyArgs(files.key, files.cert, "worldgen test " + name);
  args.insert(args.end(), {"-x509", "-days", "2", "-addext", "basicConstraints=critical,CA:TRUE",
                           "-addext", "keyUsage=critical,keyCertSign,cRLSign"});
  if (absl::Status s = RunOpenssl(args); !s.ok()) return s;
  return files;
}

absl::StatusOr<CertificateFiles> IssueCertificate(const std::string& dir, const std::string& name,
                                                  const CertificateFiles& authority,
                                                  absl::string_view subject_alt_names) {
  CertificateFiles files{absl::StrCat(dir, "/", name, ".pem"),
                         absl::StrCat(dir, "/", name, ".key")};
  const std::string request = absl::StrCat(dir, "/", name, ".csr");
  const std::string extensions = absl::StrCat(dir, "/", name, ".ext");
  if (absl::Status s =
          WriteFile(extensions, absl::StrCat("subjectAltName=", subject_alt_names,
                                             "\nextendedKeyUsage=serverAuth,clientAuth"
                                             "\nbasicConstraints=critical,CA:FALSE\n"));
      !s.ok()) {
    return s;
  }
  if (absl::Status s = RunOpenssl(NewKeyArgs(files.key, request, name)); !s.ok()) return s;
  // Without a serial file, openssl gives each certificate a random serial number.
  if (absl::Status s =
          RunOpenssl({"x509", "-req", "-in", request, "-CA", authority.cert, "-CAkey",
                      authority.key, "-days", "2", "-extfile", extensions, "-out", files.cert});
      !s.ok()) {
    return s;
  }
  return files;
}

}  // namespace worldgen::testing
