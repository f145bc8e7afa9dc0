// HTTP/2 frames encoded by hand for tests (RFC 9113 section 4.1; HPACK literals, RFC 7541 6.2.2):
// what abusive or hand-rolled clients write on raw sockets.
#ifndef WORLDGEN_TESTS_SUPPORT_HTTP2_FRAMES_H_
#define WORLDGEN_TESTS_SUPPORT_HTTP2_FRAMES_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace worldgen::testing {

enum Http2Type : uint8_t {
  kData = 0,
  kHeaders = 1,
  kRstStream = 3,
  kSettings = 4,
  kPing = 6,
  kGoaway = 7,
  kWindowUpdate = 8
};
inline constexpr uint8_t kAck = 0x1;  // SETTINGS and PING
inline constexpr uint8_t kEndHeaders = 0x4;
inline constexpr uint32_t kCancel = 0x8;
inline constexpr uint32_t kEnhanceYourCalm = 0xb;

inline std::string Be32(uint32_t value) {
  std::string out;
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>(value >> shift));
  return out;
}

// A frame header announcing `length` payload bytes (for lengths a test does not want to allocate).
inline std::string FrameHeader(uint32_t length, uint8_t type, uint8_t flags, uint32_t stream) {
  std::string out;
  out.push_back(static_cast<char>(length >> 16));
  out.push_back(static_cast<char>(length >> 8));
  out.push_back(static_cast<char>(length));
  out.push_back(static_cast<char>(type));
  out.push_back(static_cast<char>(flags));
  return out + Be32(stream);
}

inline std::string Frame(uint8_t type, uint8_t flags, uint32_t stream, const std::string& payload) {
  return FrameHeader(static_cast<uint32_t>(payload.size()), type, flags, stream) + payload;
}

inline std::string RstStream(uint32_t stream) {
  return Frame(kRstStream, 0, stream, Be32(kCancel));
}

// The client connection preface and an empty SETTINGS frame.
inline std::string Preface() {
  return std::string("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") + Frame(kSettings, 0, 0, "");
}

// A header block of literal fields without indexing, new names (all shorter than 127 bytes), of a
// gRPC call of `path` ("/package.Service/Method") with `extra` fields after the standard ones.
inline std::string GrpcRequestHeaders(
    const std::string& path, const std::vector<std::pair<std::string, std::string>>& extra = {}) {
  std::vector<std::pair<std::string, std::string>> fields = {{":method", "POST"},
                                                             {":scheme", "http"},
                                                             {":path", path},
                                                             {":authority", "127.0.0.1"},
                                                             {"content-type", "application/grpc"},
                                                             {"te", "trailers"}};
  fields.insert(fields.end(), extra.begin(), extra.end());
  std::string block;
  for (const auto& [name, value] : fields) {
    block.push_back('\0');
    block.push_back(static_cast<char>(name.size()));
    block += name;
    block.push_back(static_cast<char>(value.size()));
    block += value;
  }
  return block;
}

// The header block of a GenerateChunk call.
inline std::string GenerateChunkHeaders() {
  return GrpcRequestHeaders("/worldgen.v1.WorldGen/GenerateChunk");
}

}  // namespace worldgen::testing

#endif  // WORLDGEN_TESTS_SUPPORT_HTTP2_FRAMES_H_
