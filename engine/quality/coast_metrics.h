// Figures of a height map against its raw land/water map: where the sea-level contour runs
// compared with the raw coastline, and how steep the terrain gets.
//
// Pure functions over a rectangle of columns, row-major with x fastest. Used by worldgen-lab and
// the tests (HeightMode::kCoastal, engine/coast.h).
#ifndef WORLDGEN_ENGINE_QUALITY_COAST_METRICS_H_
#define WORLDGEN_ENGINE_QUALITY_COAST_METRICS_H_

#include <cstdint>
#include <vector>

namespace worldgen::quality {

struct CoastFigures {
  // Points of the raw coastline: midpoints between x- or z-neighbouring columns of different class.
  int64_t border_points = 0;
  // Points of the sea-level contour: between neighbours with one height above sea level and the
  // other not, where the line between their heights crosses it.
  int64_t contour_points = 0;
  // Symmetric distances between the two sets, in blocks: every contour point's distance to the
  // nearest border point and every border point's to the nearest contour point (a coast the heights
  // lose counts as much as one they invent). Max and root mean square over both; 0 when both sets
  // are empty, +infinity when only one is.
  double max_error = 0.0, rms_error = 0.0;
  // max over x- or z-neighbouring columns of |h(a) - h(b)|: blocks per block.
  double steepest_slope = 0.0;
};

// `land` (1 = land) and `heights` hold width * height columns.
CoastFigures MeasureCoast(const std::vector<uint8_t>& land, const std::vector<float>& heights,
                          int width, int height, double sea_level);

}  // namespace worldgen::quality

#endif  // WORLDGEN_ENGINE_QUALITY_COAST_METRICS_H_
