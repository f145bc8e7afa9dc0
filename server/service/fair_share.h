// Who a call counts as for the scheduler's fair share (CallShape::client): the --fair_share flag's
// rule, as a pure function of what gRPC and the balancer say about the call.
//
//   absl::StatusOr<FairShare> rule = ParseFairShare("forwarded_for");
//   const char* header = FairShareHeader(*rule);  // "x-forwarded-for"
//   shape.client = FairShareClient(*rule, [] { return std::string("ipv4:10.1.2.3:41000"); },
//                                  "198.51.100.7, 10.0.0.5");
//   // "10.0.0.5": the address the balancer in front of this server saw
#ifndef WORLDGEN_SERVER_SERVICE_FAIR_SHARE_H_
#define WORLDGEN_SERVER_SERVICE_FAIR_SHARE_H_

#include <cstddef>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace worldgen {

enum class FairShare {
  kOff,           // every call is the same client: interactive calls take turns call by call
  kPeer,          // the connection's IP address (a balancer in front is then one client)
  kForwardedFor,  // the last address in X-Forwarded-For (the one the balancer saw), else kPeer's
  kClientHeader,  // x-worldgen-client whole, as the deployment's nginx sets it: the game server's
                  // address and, with mutual TLS or API keys, its certificate's subject or its
                  // key's name; else kPeer's
};

// The longest client name kept (longer ones are cut): a certificate's subject after an address
// fits.
inline constexpr size_t kMaxClientNameBytes = 256;

// "off", "peer", "forwarded_for" or "client_header" (the --fair_share flag); INVALID_ARGUMENT
// naming them otherwise.
absl::StatusOr<FairShare> ParseFairShare(absl::string_view text);

// The header `rule` reads ("x-forwarded-for", "x-worldgen-client"), or nullptr when it reads none.
const char* FairShareHeader(FairShare rule);

// The client a call counts as under `rule`: `peer` gives the connection as gRPC names it
// ("ipv4:A.B.C.D:PORT", "ipv6:[ADDR]:PORT"; anything else is taken whole), called only when the
// rule needs it, and `header` is the value of the call's FairShareHeader(rule) (empty when absent
// or when the rule reads none). The port is dropped, so a game server's connections are one
// client. At most kMaxClientNameBytes bytes: the name is client input.
std::string FairShareClient(FairShare rule, absl::FunctionRef<std::string()> peer,
                            absl::string_view header);

}  // namespace worldgen

#endif  // WORLDGEN_SERVER_SERVICE_FAIR_SHARE_H_
