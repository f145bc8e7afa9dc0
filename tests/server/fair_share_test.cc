#include "server/service/fair_share.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"

namespace worldgen {
namespace {

// FairShareClient with the peer `peer`, counting in `asked` (if given) how often it was asked for.
std::string Client(FairShare rule, const std::string& peer, absl::string_view header,
                   int* asked = nullptr) {
  return FairShareClient(
      rule,
      [&] {
        if (asked != nullptr) ++*asked;
        return peer;
      },
      header);
}

TEST(FairShareTest, ParsesTheFlagsChoicesAndNamesThemOtherwise) {
  EXPECT_EQ(*ParseFairShare("off"), FairShare::kOff);
  EXPECT_EQ(*ParseFairShare("peer"), FairShare::kPeer);
  EXPECT_EQ(*ParseFairShare("forwarded_for"), FairShare::kForwardedFor);
  EXPECT_EQ(*ParseFairShare("client_header"), FairShare::kClientHeader);
  const absl::Status bad = ParseFairShare("Peer").status();
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.message(), "\"Peer\" is not one of off, peer, forwarded_for, client_header");
}

TEST(FairShareTest, EachRuleReadsItsOwnHeader) {
  EXPECT_EQ(FairShareHeader(FairShare::kOff), nullptr);
  EXPECT_EQ(FairShareHeader(FairShare::kPeer), nullptr);
  EXPECT_STREQ(FairShareHeader(FairShare::kForwardedFor), "x-forwarded-for");
  EXPECT_STREQ(FairShareHeader(FairShare::kClientHeader), "x-worldgen-client");
}

TEST(FairShareTest, APeerIsItsAddressWithoutThePort) {
  EXPECT_EQ(Client(FairShare::kPeer, "ipv4:10.1.2.3:41000", ""), "10.1.2.3");
  EXPECT_EQ(Client(FairShare::kPeer, "ipv4:10.1.2.3:41001", "192.0.2.9"), "10.1.2.3");
  EXPECT_EQ(Client(FairShare::kPeer, "ipv6:[2001:db8::7]:50051", ""), "2001:db8::7");
  // Names that are not an address with a port are kept whole.
  EXPECT_EQ(Client(FairShare::kPeer, "unix:/run/worldgen.sock", ""), "unix:/run/worldgen.sock");
  EXPECT_EQ(Client(FairShare::kPeer, "fd:12 (closed)", ""), "fd:12 (closed)");
  EXPECT_EQ(Client(FairShare::kPeer, "ipv6:[broken", ""), "ipv6:[broken");
}

TEST(FairShareTest, ForwardedForTakesTheAddressTheLastProxySaw) {
  // A game server may send its own header; the balancer appends the address it saw.
  EXPECT_EQ(Client(FairShare::kForwardedFor, "ipv4:10.0.0.2:5000", "198.51.100.7, 203.0.113.5"),
            "203.0.113.5");
  EXPECT_EQ(Client(FairShare::kForwardedFor, "ipv4:10.0.0.2:5000", "203.0.113.5"), "203.0.113.5");
  // Without the header (or with an empty last entry) the peer is the client.
  EXPECT_EQ(Client(FairShare::kForwardedFor, "ipv4:10.0.0.2:5000", ""), "10.0.0.2");
  EXPECT_EQ(Client(FairShare::kForwardedFor, "ipv4:10.0.0.2:5000", "198.51.100.7, "), "10.0.0.2");
  // Client input: cut to kMaxClientNameBytes.
  EXPECT_EQ(Client(FairShare::kForwardedFor, "", std::string(300, 'x')), std::string(256, 'x'));
}

TEST(FairShareTest, ClientHeaderTakesTheBalancersNameWhole) {
  // The deployment's nginx: the address, and with mutual TLS the certificate's subject, whose
  // commas are part of it (not a list of proxies).
  EXPECT_EQ(Client(FairShare::kClientHeader, "ipv4:10.0.0.2:5000",
                   "203.0.113.5 CN=survival-eu-3,O=Example Studio"),
            "203.0.113.5 CN=survival-eu-3,O=Example Studio");
  EXPECT_EQ(Client(FairShare::kClientHeader, "ipv4:10.0.0.2:5000", " 203.0.113.5 "), "203.0.113.5");
  // Without the header the peer is the client.
  EXPECT_EQ(Client(FairShare::kClientHeader, "ipv4:10.0.0.2:5000", ""), "10.0.0.2");
  EXPECT_EQ(Client(FairShare::kClientHeader, "ipv4:10.0.0.2:5000", "  "), "10.0.0.2");
  // Two subjects that agree in their first 64 bytes are still two clients.
  const std::string subject = "203.0.113.5 CN=" + std::string(60, 'g');
  EXPECT_NE(Client(FairShare::kClientHeader, "", subject + "-1"),
            Client(FairShare::kClientHeader, "", subject + "-2"));
  EXPECT_EQ(Client(FairShare::kClientHeader, "", std::string(300, 'x')), std::string(256, 'x'));
}

TEST(FairShareTest, OffMakesEveryCallTheSameClient) {
  EXPECT_EQ(Client(FairShare::kOff, "ipv4:10.1.2.3:41000", "203.0.113.5"), "");
}

// Resolving a peer costs the server a lookup: it is asked for only when the rule needs it.
TEST(FairShareTest, ThePeerIsAskedForOnlyWhenTheRuleNeedsIt) {
  int asked = 0;
  Client(FairShare::kOff, "ipv4:10.1.2.3:41000", "", &asked);
  Client(FairShare::kForwardedFor, "ipv4:10.1.2.3:41000", "203.0.113.5", &asked);
  Client(FairShare::kClientHeader, "ipv4:10.1.2.3:41000", "203.0.113.5 CN=a", &asked);
  EXPECT_EQ(asked, 0);
  Client(FairShare::kForwardedFor, "ipv4:10.1.2.3:41000", "", &asked);
  Client(FairShare::kPeer, "ipv4:10.1.2.3:41000", "203.0.113.5", &asked);
  EXPECT_EQ(asked, 2);
}

}  // namespace
}  // namespace worldgen
