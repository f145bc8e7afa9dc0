// What the wire contract (proto/worldgen/v1/worldgen.proto) makes of request fields left at zero,
// read the same way by the client and the server (header only: both include it).
#ifndef WORLDGEN_PROTO_REQUEST_DEFAULTS_H_
#define WORLDGEN_PROTO_REQUEST_DEFAULTS_H_

#include <cstdint>

namespace worldgen {

// VerticalRange.cell_size 0: cells of 4 blocks, Minecraft's.
inline constexpr uint32_t kDefaultVolumeCellSize = 4;

}  // namespace worldgen

#endif  // WORLDGEN_PROTO_REQUEST_DEFAULTS_H_
