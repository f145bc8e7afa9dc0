#include "server/network/http2_frame_guard.h"

#include <algorithm>
#include <cstring>

namespace worldgen {
namespace {

constexpr int64_t kNanosPerSecond = 1'000'000'000;

void AppendBe32(std::string& out, uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>(value >> shift));
}

}  // namespace

std::string Http2GoawayFrame(uint32_t last_stream_id, Http2ErrorCode code) {
  std::string frame;
  frame.reserve(kHttp2FrameHeaderBytes + 8);
  frame.append({'\0', '\0', '\x08', static_cast<char>(Http2FrameType::kGoaway), '\0'});
  AppendBe32(frame, 0);  // Stream 0: the connection.
  AppendBe32(frame, last_stream_id & 0x7fffffffu);
  AppendBe32(frame, static_cast<uint32_t>(code));
  return frame;
}

Http2FrameReader::Http2FrameReader(bool expect_preface)
    : preface_left_(expect_preface ? kHttp2ClientPreface.size() : 0) {}

uint64_t Http2FrameReader::bytes_into_frame() const {
  if (payload_left_ > 0) return kHttp2FrameHeaderBytes + (payload_length_ - payload_left_);
  return header_filled_;
}

bool Http2FrameReader::Read(absl::string_view bytes,
                            absl::FunctionRef<bool(const Http2FrameHeader&)> on_frame) {
  if (stopped_) return false;
  const char* at = bytes.data();
  const char* const end = at + bytes.size();
  if (preface_left_ > 0) {
    const size_t matched = kHttp2ClientPreface.size() - preface_left_;
    const size_t n = std::min(preface_left_, bytes.size());
    if (std::memcmp(at, kHttp2ClientPreface.data() + matched, n) != 0) {
      stopped_ = not_http2_ = true;
      return false;
    }
    preface_left_ -= n;
    at += n;
  }
  while (at < end) {
    if (payload_left_ > 0) {
      const uint64_t skip = std::min<uint64_t>(payload_left_, static_cast<uint64_t>(end - at));
      payload_left_ -= skip;
      at += skip;
      continue;
    }
    const size_t take =
        std::min(kHttp2FrameHeaderBytes - header_filled_, static_cast<size_t>(end - at));
    std::memcpy(header_ + header_filled_, at, take);
    header_filled_ += take;
    at += take;
    if (header_filled_ < kHttp2FrameHeaderBytes) break;
    header_filled_ = 0;
    Http2FrameHeader header;
    header.length = (uint32_t{header_[0]} << 16) | (uint32_t{header_[1]} << 8) | header_[2];
    header.type = header_[3];
    header.flags = header_[4];
    header.stream_id = ((uint32_t{header_[5]} << 24) | (uint32_t{header_[6]} << 16) |
                        (uint32_t{header_[7]} << 8) | header_[8]) &
                       0x7fffffffu;
    payload_left_ = payload_length_ = header.length;
    if (!on_frame(header)) {
      stopped_ = true;
      return false;
    }
  }
  return true;
}

Http2FrameGuard::RateBucket::RateBucket(int64_t per_second)
    : interval_ns_(per_second > 0 ? std::max<int64_t>(1, kNanosPerSecond / per_second) : 0) {}

bool Http2FrameGuard::RateBucket::Take(int64_t now_ns) {
  if (interval_ns_ == 0) return true;
  const int64_t full_at = std::max(full_at_ns_, now_ns);
  if (full_at - now_ns > kNanosPerSecond - interval_ns_) return false;
  full_at_ns_ = full_at + interval_ns_;
  return true;
}

Http2FrameGuard::Http2FrameGuard(Http2FrameLimits limits)
    : resets_bucket_(limits.max_resets_per_second),
      control_bucket_(limits.max_control_frames_per_second) {}

Http2FrameGuard::Verdict Http2FrameGuard::Inspect(absl::string_view bytes, int64_t now_ns) {
  if (verdict_ != Verdict::kPass) return verdict_;
  const bool read = reader_.Read(bytes, [&](const Http2FrameHeader& frame) {
    switch (static_cast<Http2FrameType>(frame.type)) {
      case Http2FrameType::kHeaders:
        last_stream_id_ = std::max(last_stream_id_, frame.stream_id);
        return true;
      case Http2FrameType::kRstStream:
        ++resets_;
        if (resets_bucket_.Take(now_ns)) return true;
        verdict_ = Verdict::kResetFlood;
        return false;
      case Http2FrameType::kSettings:
      case Http2FrameType::kPing:
        if ((frame.flags & kHttp2AckFlag) != 0 || control_bucket_.Take(now_ns)) return true;
        verdict_ = Verdict::kControlFlood;
        return false;
      default:
        return true;
    }
  });
  if (!read && reader_.not_http2()) verdict_ = Verdict::kNotHttp2;
  return verdict_;
}

}  // namespace worldgen
