// Floor division for signed integers: the grid cell, tile or chunk that contains a coordinate,
// also for negative coordinates (C++'s `/` truncates toward zero). Header-only and dependency-free,
// so tools outside the engine library (the CLI's renderer) share this one definition.
#ifndef WORLDGEN_ENGINE_FLOOR_DIV_H_
#define WORLDGEN_ENGINE_FLOOR_DIV_H_

#include <cstdint>

namespace worldgen {

// floor(a / b) for b != 0.
constexpr int64_t FloorDiv(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

}  // namespace worldgen

#endif  // WORLDGEN_ENGINE_FLOOR_DIV_H_
