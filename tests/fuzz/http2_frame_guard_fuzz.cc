// Fuzz target: bytes a client might send -> Http2FrameGuard and Http2FrameReader. The first byte
// picks the size of the pieces the rest is fed in and whether the client preface is put in front
// (so most inputs reach the frame parsing). Fed whole or in pieces, the bytes must give the same
// verdict, reset count, last stream and frame headers; nothing may crash or read out of bounds.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "server/network/http2_frame_guard.h"

namespace {

struct Seen {
  uint32_t length, stream_id;
  uint8_t type, flags;
  bool operator==(const Seen&) const = default;
};

std::vector<Seen> Frames(absl::string_view bytes, size_t piece, uint64_t* into_frame) {
  worldgen::Http2FrameReader reader(/*expect_preface=*/false);
  std::vector<Seen> seen;
  for (size_t at = 0; at < bytes.size(); at += piece) {
    reader.Read(bytes.substr(at, piece), [&](const worldgen::Http2FrameHeader& h) {
      seen.push_back({h.length, h.stream_id, h.type, h.flags});
      return true;
    });
  }
  *into_frame = reader.bytes_into_frame();
  return seen;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const size_t piece = 1 + data[0] % 32;
  const absl::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::string bytes = (data[0] & 0x80) != 0
                                ? std::string(worldgen::kHttp2ClientPreface) + std::string(rest)
                                : std::string(rest);
  const worldgen::Http2FrameLimits limit{.max_resets_per_second = 3,
                                         .max_control_frames_per_second = 3};
  worldgen::Http2FrameGuard whole(limit);
  const worldgen::Http2FrameGuard::Verdict verdict = whole.Inspect(bytes, 0);
  worldgen::Http2FrameGuard split(limit);
  worldgen::Http2FrameGuard::Verdict split_verdict = worldgen::Http2FrameGuard::Verdict::kPass;
  for (size_t at = 0; at < bytes.size(); at += piece) {
    split_verdict = split.Inspect(absl::string_view(bytes).substr(at, piece), 0);
  }
  if (bytes.empty()) split_verdict = split.Inspect("", 0);
  if (split_verdict != verdict || split.resets() != whole.resets() ||
      split.last_stream_id() != whole.last_stream_id() || whole.resets() > 4) {
    std::abort();
  }
  uint64_t whole_into = 0, split_into = 0;
  if (Frames(rest, rest.size() + 1, &whole_into) != Frames(rest, piece, &split_into) ||
      whole_into != split_into) {
    std::abort();
  }
  return 0;
}
