#include "server/service/fair_share.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"

namespace worldgen {
namespace {

// FairShareClient with the peer `peer`, counting in `asked` (if given) how often it was asked for.
std::string Client(FairShare rule, const std::string& peer, absl::string_view forwarded_for,
                   int* asked = nullptr) {
  return FairShareClient(
      rule,
      [&] {
        if (asked != nullptr) ++*asked;
        return peer;
      },
      forwarded_for);
}

TEST(FairShareTest, ParsesTheFlagsChoicesAndNamesThemOtherwise) {
  EXPECT_EQ(*ParseFairShare("off"), FairShare::kOff);
  EXPECT_EQ(*ParseFairShare("peer"), FairShare::kPeer);
  EXPECT_EQ(*ParseFairShare("forwarded_for"), FairShare::kForwardedFor);
  const absl::Status bad = ParseFairShare("Peer").status();
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.message(), "\"Peer\" is not one of off, peer, forwarded_for");
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
  // Client input: cut to 64 bytes.
  EXPECT_EQ(Client(FairShare::kForwardedFor, "", std::string(100, 'x')), std::string(64, 'x'));
}

TEST(FairShareTest, OffMakesEveryCallTheSameClient) {
  EXPECT_EQ(Client(FairShare::kOff, "ipv4:10.1.2.3:41000", "203.0.113.5"), "");
}

// Resolving a peer costs the server a lookup: it is asked for only when the rule needs it.
TEST(FairShareTest, ThePeerIsAskedForOnlyWhenTheRuleNeedsIt) {
  int asked = 0;
  Client(FairShare::kOff, "ipv4:10.1.2.3:41000", "", &asked);
  Client(FairShare::kForwardedFor, "ipv4:10.1.2.3:41000", "203.0.113.5", &asked);
  EXPECT_EQ(asked, 0);
  Client(FairShare::kForwardedFor, "ipv4:10.1.2.3:41000", "", &asked);
  Client(FairShare::kPeer, "ipv4:10.1.2.3:41000", "203.0.113.5", &asked);
  EXPECT_EQ(asked, 2);
}

}  // namespace
}  // namespace worldgen
