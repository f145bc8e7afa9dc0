#include "client/rgb_image.h"

#include <png.h>

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace worldgen {

namespace {

absl::Status WritePixels(int width, int height, uint32_t format, int channels,
                         const uint8_t* pixels, const std::string& path) {
  png_image png{};
  png.version = PNG_IMAGE_VERSION;
  png.width = static_cast<png_uint_32>(width);
  png.height = static_cast<png_uint_32>(height);
  png.format = format;
  if (!png_image_write_to_file(&png, path.c_str(), 0, pixels, width * channels, nullptr)) {
    std::string why = png.message;
    png_image_free(&png);
    return absl::UnknownError(absl::StrCat("writing ", path, ": ", why));
  }
  return absl::OkStatus();
}

// Decodes `path` as `format` into a buffer sized by `allocate(width, height)`.
template <typename Allocate>
absl::Status ReadPixels(const std::string& path, uint32_t format, Allocate allocate) {
  png_image png{};
  png.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&png, path.c_str())) {
    return absl::InvalidArgumentError(absl::StrCat("reading ", path, ": ", png.message));
  }
  png.format = format;
  uint8_t* pixels = allocate(static_cast<int>(png.width), static_cast<int>(png.height));
  if (!png_image_finish_read(&png, nullptr, pixels, 0, nullptr)) {
    std::string why = png.message;
    png_image_free(&png);
    return absl::InvalidArgumentError(absl::StrCat("decoding ", path, ": ", why));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status WritePng(const RgbImage& image, const std::string& path) {
  return WritePixels(image.width, image.height, PNG_FORMAT_RGB, 3, image.pixels.data(), path);
}

absl::StatusOr<std::string> EncodePng(const RgbImage& image) {
  png_image png{};
  png.version = PNG_IMAGE_VERSION;
  png.width = static_cast<png_uint_32>(image.width);
  png.height = static_cast<png_uint_32>(image.height);
  png.format = PNG_FORMAT_RGB;
  // Called with no buffer it measures, with one it writes.
  auto write = [&](void* buffer, png_alloc_size_t* size) -> absl::Status {
    if (png_image_write_to_memory(&png, buffer, size, 0, image.pixels.data(), image.width * 3,
                                  nullptr)) {
      return absl::OkStatus();
    }
    std::string why = png.message;
    png_image_free(&png);
    return absl::UnknownError(absl::StrCat("encoding a PNG: ", why));
  };
  png_alloc_size_t size = 0;
  if (absl::Status measured = write(nullptr, &size); !measured.ok()) return measured;
  std::string bytes(size, '\0');
  if (absl::Status written = write(bytes.data(), &size); !written.ok()) return written;
  bytes.resize(size);
  return bytes;
}

absl::StatusOr<RgbImage> ReadPng(const std::string& path) {
  RgbImage image;
  absl::Status read = ReadPixels(path, PNG_FORMAT_RGB, [&](int width, int height) {
    image = RgbImage(width, height);
    return image.pixels.data();
  });
  if (!read.ok()) return read;
  return image;
}

absl::Status WriteRgbaPng(int width, int height, std::span<const uint8_t> rgba,
                          const std::string& path) {
  if (rgba.size() != static_cast<size_t>(width) * height * 4) {
    return absl::InvalidArgumentError(absl::StrCat(
        "writing ", path, ": ", rgba.size(), " bytes for ", width, " x ", height, " RGBA texels"));
  }
  return WritePixels(width, height, PNG_FORMAT_RGBA, 4, rgba.data(), path);
}

absl::StatusOr<std::vector<uint8_t>> ReadRgbaPng(const std::string& path, int* width, int* height) {
  std::vector<uint8_t> rgba;
  absl::Status read = ReadPixels(path, PNG_FORMAT_RGBA, [&](int w, int h) {
    *width = w;
    *height = h;
    rgba.assign(static_cast<size_t>(w) * h * 4, 0);
    return rgba.data();
  });
  if (!read.ok()) return read;
  return rgba;
}

std::vector<float> ReliefLight(std::span<const float> heights, int width, int height) {
  float lowest = heights[0], highest = heights[0];
  for (float v : heights) {
    lowest = std::min(lowest, v);
    highest = std::max(highest, v);
  }
  return ReliefLight(heights, width, height, lowest, highest, 1.0f);
}

std::vector<float> ReliefLight(std::span<const float> heights, int width, int height, float lowest,
                               float highest, float spacing) {
  const size_t w = static_cast<size_t>(width) + 1;
  const float range = std::max(1.0f, highest - lowest);
  std::vector<float> light(static_cast<size_t>(width) * static_cast<size_t>(height));
  for (size_t y = 0; y < static_cast<size_t>(height); ++y) {
    for (size_t x = 0; x < static_cast<size_t>(width); ++x) {
      const size_t i = (y + 1) * w + (x + 1);
      // Slope towards a light in the north-west, plus a little brightness for altitude.
      const float slope = (heights[i] - heights[i - w - 1]) / spacing;
      const float altitude = std::clamp((heights[i] - lowest) / range, 0.0f, 1.0f);
      light[y * static_cast<size_t>(width) + x] =
          std::clamp(1.0f + 0.15f * slope, 0.55f, 1.45f) * (0.85f + 0.3f * altitude);
    }
  }
  return light;
}

}  // namespace worldgen
