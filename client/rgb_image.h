// RGB images for the tools that draw maps (the `worldgen render` CLI command, worldgen-lab): the
// pixel buffer, PNG files in and out (libpng; RGBA too, for `worldgen chunk --splat-png`), and the
// relief shading both tools light heights with.
//
// No dependency on the service or the engine: a tool links this target and libpng only.
// Thread safety: free functions without shared state.
#ifndef WORLDGEN_CLIENT_RGB_IMAGE_H_
#define WORLDGEN_CLIENT_RGB_IMAGE_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace worldgen {

struct RgbImage {
  RgbImage() = default;
  RgbImage(int width, int height)
      : width(width), height(height), pixels(static_cast<size_t>(width) * height * 3, 0) {}

  int width = 0;
  int height = 0;
  std::vector<uint8_t> pixels;  // width * height * 3 bytes, rows top to bottom.

  uint8_t* at(int x, int y) { return &pixels[(static_cast<size_t>(y) * width + x) * 3]; }
  const uint8_t* at(int x, int y) const {
    return &pixels[(static_cast<size_t>(y) * width + x) * 3];
  }
};

// Writes an 8-bit RGB PNG.
absl::Status WritePng(const RgbImage& image, const std::string& path);

// Reads any PNG as 8-bit RGB.
absl::StatusOr<RgbImage> ReadPng(const std::string& path);

// Writes width x height texels of 4 bytes (`rgba`, rows top to bottom) as an 8-bit RGBA PNG, bytes
// unchanged (straight alpha, no colour conversion): data in image form, such as splat textures,
// reads back bit-for-bit with ReadRgbaPng.
absl::Status WriteRgbaPng(int width, int height, std::span<const uint8_t> rgba,
                          const std::string& path);

// Reads any PNG as 8-bit RGBA texels; sets *width and *height.
absl::StatusOr<std::vector<uint8_t>> ReadRgbaPng(const std::string& path, int* width, int* height);

// Brightness factors (about 0.5..1.7) that light a height map from the north-west: steeper towards
// the light is brighter, and higher ground a little brighter. `heights` holds (width + 1) x (height
// + 1) values, row-major: the lit width x height columns plus one row above and one column to the
// left, whose heights the slope needs. Returns width * height factors, row-major.
std::vector<float> ReliefLight(std::span<const float> heights, int width, int height);
// The same with altitude measured against [lowest, highest] (clamped to it) instead of the heights'
// own range, so that the light of a column does not depend on which region is lit, and neighbours
// `spacing` blocks apart (a map of one pixel per `spacing` columns: the slope is per block).
std::vector<float> ReliefLight(std::span<const float> heights, int width, int height, float lowest,
                               float highest, float spacing);
// The image as the bytes of an 8-bit RGB PNG file.
absl::StatusOr<std::string> EncodePng(const RgbImage& image);

}  // namespace worldgen

#endif  // WORLDGEN_CLIENT_RGB_IMAGE_H_
