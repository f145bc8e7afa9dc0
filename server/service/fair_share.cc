#include "server/service/fair_share.h"

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "server/service/call_log.h"

namespace worldgen {
namespace {

// The host of gRPC's name of a peer, without its port.
absl::string_view PeerHost(absl::string_view peer) {
  absl::string_view host = peer;
  if (absl::ConsumePrefix(&host, "ipv4:")) {
    const size_t colon = host.rfind(':');
    return colon == absl::string_view::npos ? host : host.substr(0, colon);
  }
  if (absl::ConsumePrefix(&host, "ipv6:[")) {
    const size_t bracket = host.find(']');
    return bracket == absl::string_view::npos ? peer : host.substr(0, bracket);
  }
  return peer;
}

}  // namespace

absl::StatusOr<FairShare> ParseFairShare(absl::string_view text) {
  if (text == "off") return FairShare::kOff;
  if (text == "peer") return FairShare::kPeer;
  if (text == "forwarded_for") return FairShare::kForwardedFor;
  if (text == "client_header") return FairShare::kClientHeader;
  return absl::InvalidArgumentError(absl::StrCat(
      "\"", EscapedPrefix(text), "\" is not one of off, peer, forwarded_for, client_header"));
}

const char* FairShareHeader(FairShare rule) {
  switch (rule) {
    case FairShare::kForwardedFor:
      return "x-forwarded-for";
    case FairShare::kClientHeader:
      return "x-worldgen-client";
    case FairShare::kOff:
    case FairShare::kPeer:
      break;
  }
  return nullptr;
}

std::string FairShareClient(FairShare rule, absl::FunctionRef<std::string()> peer,
                            absl::string_view header) {
  if (rule == FairShare::kOff) return {};
  absl::string_view named;
  if (rule == FairShare::kForwardedFor) {
    // A proxy appends the address it received the call from; the last one is the balancer's.
    named = absl::StripAsciiWhitespace(header.substr(header.rfind(',') + 1));
  } else if (rule == FairShare::kClientHeader) {
    named = absl::StripAsciiWhitespace(header);
  }
  if (!named.empty()) return std::string(named.substr(0, kMaxClientNameBytes));
  const std::string name = peer();
  return std::string(PeerHost(name).substr(0, kMaxClientNameBytes));
}

}  // namespace worldgen
