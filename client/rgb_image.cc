#include "client/rgb_image.h"

#include <png.h>

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace worldgen {

absl::Status WritePng(const RgbImage& image, const std::string& path) {
  png_image png{};
  png.version = PNG_IMAGE_VERSION;
  png.width = static_cast<png_uint_32>(image.width);
  png.height = static_cast<png_uint_32>(image.height);
  png.format = PNG_FORMAT_RGB;
  if (!png_image_write_to_file(&png, path.c_str(), 0, image.pixels.data(), image.width * 3, nullptr)) {
    std::string why = png.message;
    png_image_free(&png);
    return absl::UnknownError(absl::StrCat("writing ", path, ": ", why));
  }
  return absl::OkStatus();
}

absl::StatusOr<RgbImage> ReadPng(const std::string& path) {
  png_image png{};
  png.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&png, path.c_str())) {
    return absl::InvalidArgumentError(absl::StrCat("reading ", path, ": ", png.message));
  }
  png.format = PNG_FORMAT_RGB;
  RgbImage image(static_cast<int>(png.width), static_cast<int>(png.height));
  if (!png_image_finish_read(&png, nullptr, image.pixels.data(), 0, nullptr)) {
    std::string why = png.message;
    png_image_free(&png);
    return absl::InvalidArgumentError(absl::StrCat("decoding ", path, ": ", why));
  }
  return image;
}

std::vector<float> ReliefLight(std::span<const float> heights, int width, int height) {
  const size_t w = static_cast<size_t>(width) + 1;
  float lowest = heights[0], highest = heights[0];
  for (float v : heights) {
    lowest = std::min(lowest, v);
    highest = std::max(highest, v);
  }
  const float range = std::max(1.0f, highest - lowest);
  std::vector<float> light(static_cast<size_t>(width) * static_cast<size_t>(height));
  for (size_t y = 0; y < static_cast<size_t>(height); ++y) {
    for (size_t x = 0; x < static_cast<size_t>(width); ++x) {
      const size_t i = (y + 1) * w + (x + 1);
      // Slope towards a light in the north-west, plus a little brightness for altitude.
      const float slope = heights[i] - heights[i - w - 1];
      light[y * static_cast<size_t>(width) + x] = std::clamp(1.0f + 0.15f * slope, 0.55f, 1.45f) *
                                                  (0.85f + 0.3f * (heights[i] - lowest) / range);
    }
  }
  return light;
}

}  // namespace worldgen
