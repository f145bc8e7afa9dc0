#include "engine/quality/coast_metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace worldgen::quality {
namespace {

struct Point {
  double x, z;
};

// Points bucketed into square cells for nearest-point queries.
class PointGrid {
 public:
  static constexpr int kCell = 8;

  PointGrid(const std::vector<Point>& points, int width, int height)
      : cells_x_(width / kCell + 1), cells_z_(height / kCell + 1) {
    buckets_.resize(static_cast<size_t>(cells_x_) * static_cast<size_t>(cells_z_));
    for (const Point& p : points) buckets_[Cell(CellOf(p.x), CellOf(p.z))].push_back(p);
  }

  // Distance from p to the nearest point, searching rings of cells outward until no cell can hold
  // a nearer one; +infinity if there are no points.
  double Nearest(const Point& p) const {
    const int cx = CellOf(p.x), cz = CellOf(p.z);
    double best = std::numeric_limits<double>::infinity();
    const int rings = std::max(cells_x_, cells_z_);
    for (int r = 0; r <= rings; ++r) {
      // Every point of ring r is at least (r - 1) cells away.
      const double reach = static_cast<double>(r - 1) * kCell;
      if (r > 1 && reach * reach > best) break;
      for (int z = cz - r; z <= cz + r; ++z) {
        for (int x = cx - r; x <= cx + r; ++x) {
          if (std::max(std::abs(x - cx), std::abs(z - cz)) != r) continue;
          if (x < 0 || z < 0 || x >= cells_x_ || z >= cells_z_) continue;
          for (const Point& q : buckets_[Cell(x, z)]) {
            const double dx = q.x - p.x, dz = q.z - p.z;
            best = std::min(best, dx * dx + dz * dz);
          }
        }
      }
    }
    return std::sqrt(best);
  }

 private:
  int CellOf(double v) const {
    return std::clamp(static_cast<int>(std::floor(v / kCell)), 0, std::max(cells_x_, cells_z_));
  }
  size_t Cell(int x, int z) const {
    return static_cast<size_t>(std::min(z, cells_z_ - 1)) * static_cast<size_t>(cells_x_) +
           static_cast<size_t>(std::min(x, cells_x_ - 1));
  }
  int cells_x_, cells_z_;
  std::vector<std::vector<Point>> buckets_;
};

}  // namespace

CoastFigures MeasureCoast(const std::vector<uint8_t>& land, const std::vector<float>& heights,
                          int width, int height, double sea_level) {
  CoastFigures figures;
  std::vector<Point> border, contour;
  auto at = [&](int x, int z) { return static_cast<size_t>(z) * width + static_cast<size_t>(x); };
  for (int z = 0; z < height; ++z) {
    for (int x = 0; x < width; ++x) {
      const size_t a = at(x, z);
      for (auto [dx, dz] : {std::pair{1, 0}, std::pair{0, 1}}) {
        if (x + dx >= width || z + dz >= height) continue;
        const size_t b = at(x + dx, z + dz);
        if (land[a] != land[b]) border.push_back({x + 0.5 * dx, z + 0.5 * dz});
        const double ha = heights[a], hb = heights[b];
        figures.steepest_slope = std::max(figures.steepest_slope, std::fabs(ha - hb));
        if ((ha > sea_level) != (hb > sea_level)) {
          const double t = (sea_level - ha) / (hb - ha);
          contour.push_back({x + t * dx, z + t * dz});
        }
      }
    }
  }
  figures.border_points = static_cast<int64_t>(border.size());
  figures.contour_points = static_cast<int64_t>(contour.size());
  if (border.empty() && contour.empty()) return figures;
  if (border.empty() || contour.empty()) {
    figures.max_error = figures.rms_error = std::numeric_limits<double>::infinity();
    return figures;
  }
  const PointGrid border_grid(border, width, height), contour_grid(contour, width, height);
  double sum_sq = 0.0;
  for (const auto& [points, other] :
       {std::pair{&contour, &border_grid}, std::pair{&border, &contour_grid}}) {
    for (const Point& p : *points) {
      const double d = other->Nearest(p);
      figures.max_error = std::max(figures.max_error, d);
      sum_sq += d * d;
    }
  }
  figures.rms_error = std::sqrt(sum_sq / static_cast<double>(border.size() + contour.size()));
  return figures;
}

}  // namespace worldgen::quality
