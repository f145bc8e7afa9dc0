#include "server/network/http2_frame_guard.h"

#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/http2_frames.h"

namespace worldgen {
namespace {

using testing::Be32;
using testing::Frame;
using testing::FrameHeader;
using testing::Preface;
using testing::RstStream;

constexpr int64_t kSecond = 1'000'000'000;

struct Seen {
  uint32_t length;
  uint8_t type;
  uint8_t flags;
  uint32_t stream_id;
  bool operator==(const Seen&) const = default;
};

// The frame headers `reader` reports for `bytes` fed in pieces of `piece` bytes.
std::vector<Seen> ReadInPieces(Http2FrameReader& reader, const std::string& bytes, size_t piece) {
  std::vector<Seen> seen;
  for (size_t at = 0; at < bytes.size(); at += piece) {
    const bool more =
        reader.Read(absl::string_view(bytes).substr(at, piece), [&](const Http2FrameHeader& h) {
          seen.push_back({h.length, h.type, h.flags, h.stream_id});
          return true;
        });
    EXPECT_TRUE(more) << "at byte " << at;
  }
  return seen;
}

std::string SomeFrames() {
  return Frame(testing::kHeaders, testing::kEndHeaders, 1, testing::GenerateChunkHeaders()) +
         Frame(testing::kData, 0x1, 1, std::string(300, 'x')) + RstStream(1) +
         Frame(testing::kPing, 0, 0, std::string(8, '\7')) +
         Frame(testing::kHeaders, 0, 0x80000003u, "") +  // The reserved bit is not part of the id.
         Frame(testing::kSettings, 0x1, 0, "");
}

TEST(Http2FrameReaderTest, FramesSplitAnywhereReadTheSameAsWhole) {
  const std::string bytes = Preface() + SomeFrames();
  Http2FrameReader whole(/*expect_preface=*/true);
  const std::vector<Seen> expected = ReadInPieces(whole, bytes, bytes.size());
  ASSERT_EQ(expected.size(), 7u);  // SETTINGS of the preface + 6.
  EXPECT_EQ(expected[0], (Seen{0, testing::kSettings, 0, 0}));
  EXPECT_EQ(expected[2], (Seen{300, testing::kData, 0x1, 1}));
  EXPECT_EQ(expected[3], (Seen{4, testing::kRstStream, 0, 1}));
  EXPECT_EQ(expected[5], (Seen{0, testing::kHeaders, 0, 3}));
  for (size_t piece : {1, 2, 5, 8, 9, 10, 23, 24, 25, 100}) {
    Http2FrameReader split(/*expect_preface=*/true);
    EXPECT_EQ(ReadInPieces(split, bytes, piece), expected) << "pieces of " << piece;
    EXPECT_EQ(split.bytes_into_frame(), 0u);
  }
}

TEST(Http2FrameReaderTest, CountsTheBytesIntoTheCurrentFrame) {
  Http2FrameReader reader(/*expect_preface=*/false);
  const std::string frame = Frame(testing::kData, 0, 1, std::string(100, 'd'));
  ReadInPieces(reader, frame.substr(0, 4), 4);
  EXPECT_EQ(reader.bytes_into_frame(), 4u);  // Within the header.
  ReadInPieces(reader, frame.substr(4, 50), 50);
  EXPECT_EQ(reader.bytes_into_frame(), 54u);  // Within the payload.
  ReadInPieces(reader, frame.substr(54), 1000);
  EXPECT_EQ(reader.bytes_into_frame(), 0u);
}

TEST(Http2FrameReaderTest, HugeLengthFieldsAreSkippedByCounting) {
  Http2FrameReader reader(/*expect_preface=*/false);
  std::vector<Seen> seen;
  auto note = [&](const Http2FrameHeader& h) {
    seen.push_back({h.length, h.type, h.flags, h.stream_id});
    return true;
  };
  ASSERT_TRUE(reader.Read(FrameHeader(0xffffff, testing::kData, 0, 1), note));
  const std::string chunk(1 << 20, 'p');
  for (int i = 0; i < 15; ++i) ASSERT_TRUE(reader.Read(chunk, note));
  EXPECT_EQ(reader.bytes_into_frame(), 9u + 15 * chunk.size());
  // The payload's last bytes, then a frame header in the same piece.
  const std::string rest(0xffffff - 15 * chunk.size(), 'p');
  ASSERT_TRUE(reader.Read(rest + RstStream(5), note));
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0], (Seen{0xffffff, testing::kData, 0, 1}));
  EXPECT_EQ(seen[1], (Seen{4, testing::kRstStream, 0, 5}));
  EXPECT_EQ(reader.bytes_into_frame(), 0u);
}

TEST(Http2FrameReaderTest, StopsWhereTheCallbackSaysSo) {
  Http2FrameReader reader(/*expect_preface=*/false);
  int calls = 0;
  EXPECT_FALSE(reader.Read(RstStream(1) + RstStream(3), [&](const Http2FrameHeader&) {
    ++calls;
    return false;
  }));
  EXPECT_EQ(calls, 1);
  EXPECT_FALSE(reader.not_http2());
  EXPECT_FALSE(reader.Read(RstStream(5), [&](const Http2FrameHeader&) { return ++calls, true; }));
  EXPECT_EQ(calls, 1);
}

TEST(Http2FrameGuardTest, BytesThatAreNotHttp2AreRefused) {
  for (const std::string& garbage :
       {std::string("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), std::string("PRI * HTTP/1.1"),
        std::string(24, '\0'), std::string("\x16\x03\x01\x02\x00", 5) /* a TLS hello */,
        SomeFrames() /* frames without the preface */}) {
    Http2FrameGuard guard({});
    EXPECT_EQ(guard.Inspect(garbage, 0), Http2FrameGuard::Verdict::kNotHttp2) << garbage;
    EXPECT_EQ(guard.Inspect(Preface(), 0), Http2FrameGuard::Verdict::kNotHttp2) << "not sticky";
  }
  // The preface in pieces is fine; a wrong byte in its second half is not.
  Http2FrameGuard split({});
  const std::string preface = Preface();
  for (char byte : preface) {
    ASSERT_EQ(split.Inspect(std::string(1, byte), 0), Http2FrameGuard::Verdict::kPass);
  }
  Http2FrameGuard wrong({});
  EXPECT_EQ(wrong.Inspect(preface.substr(0, 20), 0), Http2FrameGuard::Verdict::kPass);
  EXPECT_EQ(wrong.Inspect("X", 0), Http2FrameGuard::Verdict::kNotHttp2);
}

TEST(Http2FrameGuardTest, ABurstOfTheBudgetPassesOneMoreIsAFlood) {
  Http2FrameGuard guard(Http2FrameLimits{.max_resets_per_second = 200});
  ASSERT_EQ(guard.Inspect(Preface(), 0), Http2FrameGuard::Verdict::kPass);
  std::string burst;
  for (uint32_t i = 0; i < 200; ++i) {
    burst += Frame(testing::kHeaders, testing::kEndHeaders, 1 + 2 * i, "h") + RstStream(1 + 2 * i);
  }
  EXPECT_EQ(guard.Inspect(burst, kSecond), Http2FrameGuard::Verdict::kPass);
  EXPECT_EQ(guard.resets(), 200);
  EXPECT_EQ(guard.last_stream_id(), 399u);
  EXPECT_EQ(guard.Inspect(RstStream(401), kSecond), Http2FrameGuard::Verdict::kResetFlood);
  // Sticky, whatever comes later.
  EXPECT_EQ(guard.Inspect(Frame(testing::kPing, 0, 0, std::string(8, 'p')), 100 * kSecond),
            Http2FrameGuard::Verdict::kResetFlood);
}

TEST(Http2FrameGuardTest, SettingsAndPingsHaveABudgetOfTheirOwnAndAcknowledgementsAreFree) {
  Http2FrameGuard guard(
      Http2FrameLimits{.max_resets_per_second = 10, .max_control_frames_per_second = 100});
  ASSERT_EQ(guard.Inspect(Preface(), kSecond), Http2FrameGuard::Verdict::kPass);
  std::string frames;
  // 50 SETTINGS and 49 PINGs (the preface's SETTINGS makes 100), any number of acknowledgements,
  // and resets within their own budget.
  for (int i = 0; i < 50; ++i) frames += Frame(testing::kSettings, 0, 0, "");
  for (int i = 0; i < 49; ++i) frames += Frame(testing::kPing, 0, 0, std::string(8, 'p'));
  for (int i = 0; i < 1000; ++i) {
    frames += Frame(testing::kSettings, kHttp2AckFlag, 0, "") +
              Frame(testing::kPing, kHttp2AckFlag, 0, std::string(8, 'a'));
  }
  for (uint32_t i = 0; i < 10; ++i) frames += RstStream(1 + 2 * i);
  EXPECT_EQ(guard.Inspect(frames, kSecond), Http2FrameGuard::Verdict::kPass);
  EXPECT_EQ(guard.Inspect(Frame(testing::kPing, 0, 0, std::string(8, 'p')), kSecond),
            Http2FrameGuard::Verdict::kControlFlood);
  EXPECT_EQ(guard.Inspect(RstStream(99), 100 * kSecond), Http2FrameGuard::Verdict::kControlFlood)
      << "sticky";
}

TEST(Http2FrameGuardTest, TheBudgetRefillsAtTheRate) {
  Http2FrameGuard guard(Http2FrameLimits{.max_resets_per_second = 100});
  ASSERT_EQ(guard.Inspect(Preface(), 0), Http2FrameGuard::Verdict::kPass);
  int64_t now = 0;
  // 100 at once, then one every 10 ms (the rate) for a minute: never over.
  for (uint32_t i = 0; i < 100; ++i)
    ASSERT_EQ(guard.Inspect(RstStream(1 + 2 * i), now), Http2FrameGuard::Verdict::kPass);
  for (uint32_t i = 0; i < 6000; ++i) {
    now += kSecond / 100;
    ASSERT_EQ(guard.Inspect(RstStream(201 + 2 * i), now), Http2FrameGuard::Verdict::kPass) << i;
  }
  // Half again as fast, with no burst left after the steady rate: over at once.
  int sent = 0;
  Http2FrameGuard::Verdict verdict = Http2FrameGuard::Verdict::kPass;
  while (verdict == Http2FrameGuard::Verdict::kPass && sent < 10000) {
    now += kSecond / 150;
    verdict = guard.Inspect(RstStream(1), now);
    ++sent;
  }
  EXPECT_EQ(verdict, Http2FrameGuard::Verdict::kResetFlood);
  EXPECT_EQ(sent, 1);
}

TEST(Http2FrameGuardTest, NoLimitWhenTheRateIsZero) {
  Http2FrameGuard guard(Http2FrameLimits{.max_resets_per_second = 0});
  std::string resets = Preface();
  for (uint32_t i = 0; i < 10000; ++i) resets += RstStream(1 + 2 * i);
  EXPECT_EQ(guard.Inspect(resets, 0), Http2FrameGuard::Verdict::kPass);
  EXPECT_EQ(guard.resets(), 10000);
}

TEST(Http2FrameGuardTest, TheGoawayFrameReadsBack) {
  const std::string goaway = Http2GoawayFrame(0x80000007u, Http2ErrorCode::kEnhanceYourCalm);
  EXPECT_EQ(goaway,
            FrameHeader(8, testing::kGoaway, 0, 0) + Be32(7) + Be32(testing::kEnhanceYourCalm));
}

}  // namespace
}  // namespace worldgen
