#include "bench/lab/lab_views.h"

#include <algorithm>
#include <cmath>

namespace worldgen::lab {
namespace {

uint8_t Channel(double v) { return static_cast<uint8_t>(std::clamp(std::lround(v), 0L, 255L)); }

void Paint(RgbImage& image, int x, int y, double r, double g, double b) {
  uint8_t* px = image.at(x, y);
  px[0] = Channel(r);
  px[1] = Channel(g);
  px[2] = Channel(b);
}

// ReliefLight of the region's heights, the missing row above and column to the left repeating the
// region's first row and column (flat there).
std::vector<float> Light(const RegionBlend& blend) {
  const int w = blend.weights.width, h = blend.weights.height;
  std::vector<float> padded(static_cast<size_t>(w + 1) * static_cast<size_t>(h + 1));
  for (int y = 0; y <= h; ++y) {
    for (int x = 0; x <= w; ++x) {
      const int sx = std::max(0, x - 1), sy = std::max(0, y - 1);
      padded[static_cast<size_t>(y) * (w + 1) + x] =
          blend.heights[static_cast<size_t>(sy) * w + sx];
    }
  }
  return ReliefLight(padded, w, h);
}

}  // namespace

int DenseBiomeIndex(const std::vector<BiomeSpec>& biomes, uint32_t id) {
  return static_cast<int>(
      std::lower_bound(biomes.begin(), biomes.end(), id,
                       [](const BiomeSpec& b, uint32_t biome_id) { return b.id < biome_id; }) -
      biomes.begin());
}

RgbImage BlendColours(const RegionBlend& blend, const std::vector<BiomeSpec>& biomes) {
  return BlendColours(blend.weights, biomes);
}

RgbImage BlendColours(const quality::RegionWeights& f, const std::vector<BiomeSpec>& biomes) {
  RgbImage image(f.width, f.height);
  for (int y = 0; y < f.height; ++y) {
    for (int x = 0; x < f.width; ++x) {
      double r = 0, g = 0, b = 0;
      for (int k = 0; k < f.biome_count; ++k) {
        const double wk = f.at(k, x, y);
        r += wk * biomes[k].color_r;
        g += wk * biomes[k].color_g;
        b += wk * biomes[k].color_b;
      }
      Paint(image, x, y, r, g, b);
    }
  }
  return image;
}

RgbImage DominantWithSourceBorders(const RegionBlend& blend, const std::vector<BiomeSpec>& biomes) {
  const int w = blend.weights.width, h = blend.weights.height;
  RgbImage image(w, h);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      const size_t i = static_cast<size_t>(y) * w + x;
      const bool border = (x + 1 < w && blend.source[i] != blend.source[i + 1]) ||
                          (y + 1 < h && blend.source[i] != blend.source[i + w]);
      const BiomeSpec& b = biomes[blend.dominant[i]];
      if (border) {
        Paint(image, x, y, 0, 0, 0);
      } else {
        Paint(image, x, y, b.color_r, b.color_g, b.color_b);
      }
    }
  }
  return image;
}

RgbImage ShadedHeights(const RegionBlend& blend) {
  const int w = blend.weights.width, h = blend.weights.height;
  const std::vector<float> light = Light(blend);
  RgbImage image(w, h);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      const double v = 150.0 * light[static_cast<size_t>(y) * w + x];
      Paint(image, x, y, v, v, v);
    }
  }
  return image;
}

RgbImage ZoomedCrop(const RegionBlend& blend, const std::vector<BiomeSpec>& biomes, int side,
                    int zoom) {
  const int w = blend.weights.width, h = blend.weights.height;
  const int cw = std::min(side, w), ch = std::min(side, h);
  const int x0 = (w - cw) / 2, y0 = (h - ch) / 2;
  const RgbImage colours = BlendColours(blend, biomes);
  const std::vector<float> light = Light(blend);
  RgbImage image(cw * zoom, ch * zoom);
  for (int y = 0; y < ch * zoom; ++y) {
    for (int x = 0; x < cw * zoom; ++x) {
      const int sx = x0 + x / zoom, sy = y0 + y / zoom;
      const double l = light[static_cast<size_t>(sy) * w + sx];
      const uint8_t* c = colours.at(sx, sy);
      Paint(image, x, y, c[0] * l, c[1] * l, c[2] * l);
    }
  }
  return image;
}

RgbImage Montage(const std::vector<std::vector<const RgbImage*>>& columns, int gap) {
  int width = gap, height = gap;
  for (const auto& column : columns) {
    int column_width = 0, column_height = gap;
    for (const RgbImage* view : column) {
      column_width = std::max(column_width, view->width);
      column_height += view->height + gap;
    }
    width += column_width + gap;
    height = std::max(height, column_height);
  }
  RgbImage montage(width, height);
  std::fill(montage.pixels.begin(), montage.pixels.end(), uint8_t{40});
  int x0 = gap;
  for (const auto& column : columns) {
    int y0 = gap, column_width = 0;
    for (const RgbImage* view : column) {
      for (int y = 0; y < view->height; ++y) {
        std::copy_n(view->at(0, y), static_cast<size_t>(view->width) * 3, montage.at(x0, y0 + y));
      }
      y0 += view->height + gap;
      column_width = std::max(column_width, view->width);
    }
    x0 += column_width + gap;
  }
  return montage;
}

}  // namespace worldgen::lab
