#include "tests/support/test_certificates.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "tests/client/subprocess.h"

namespace worldgen::testing {
namespace {

// Runs make_certificates.sh with `args`; the files of `prefix` on success.
absl::StatusOr<CertificateFiles> Make(std::vector<std::string> args, const std::string& prefix) {
  args.insert(args.begin(), {"/bin/bash", WORLDGEN_MAKE_CERTIFICATES});
  absl::StatusOr<CommandResult> run = RunCommand(args, absl::Seconds(30));
  if (!run.ok()) return run.status();
  if (run->exit_code != 0) {
    return absl::InternalError(
        absl::StrCat("make_certificates.sh ", args[2], " exited ", run->exit_code, ": ", run->err));
  }
  return CertificateFiles{prefix + ".pem", prefix + ".key"};
}

}  // namespace

absl::StatusOr<CertificateFiles> MakeAuthority(const std::string& dir, const std::string& name) {
  const std::string prefix = absl::StrCat(dir, "/", name);
  return Make({"authority", prefix}, prefix);
}

absl::StatusOr<CertificateFiles> IssueCertificate(const std::string& dir, const std::string& name,
                                                  const CertificateFiles& authority,
                                                  absl::string_view subject_alt_names) {
  const std::string prefix = absl::StrCat(dir, "/", name);
  absl::string_view authority_prefix = authority.cert;
  if (!absl::ConsumeSuffix(&authority_prefix, ".pem")) {
    return absl::InvalidArgumentError("an authority's certificate ends in .pem: " + authority.cert);
  }
  return Make({"issue", std::string(authority_prefix), prefix, std::string(subject_alt_names)},
              prefix);
}

}  // namespace worldgen::testing
