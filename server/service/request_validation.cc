#include "server/service/request_validation.h"

#include <cmath>
#include <sstream>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/numeric/int128.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "engine/splat.h"
#include "proto/request_defaults.h"

namespace worldgen {
namespace {

constexpr int64_t kWorldBound = static_cast<int64_t>(kMaxWorldCoordinate);

// Chunk coordinates whose columns [c*size, c*size + size - 1] all lie within ±kWorldBound.
// kWorldBound is a multiple of every allowed size, so the range is [-bound/size, bound/size - 1].
bool ChunkCoordInWorld(int64_t c, int size) {
  const int64_t limit = kWorldBound / size;
  return c >= -limit && c <= limit - 1;
}

absl::Status ChunkCoordError(absl::string_view field, int64_t value, int size) {
  const int64_t limit = kWorldBound / size;
  return absl::InvalidArgumentError(absl::StrCat(
      field, " = ", value, " is outside [", -limit, ", ", limit - 1, "]: with chunk_size ", size,
      " its columns would leave the world bound of +-", kWorldBound));
}

absl::Status CheckCoord(absl::string_view field, double value) {
  if (!std::isfinite(value)) {
    return absl::InvalidArgumentError(absl::StrFormat("%s = %g is not finite", field, value));
  }
  if (std::fabs(value) > kMaxWorldCoordinate) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s = %.17g is outside the world bound of +-%d", field, value, kWorldBound));
  }
  return absl::OkStatus();
}

// The vertical range of `request` (engine rules, field names prefixed "vertical."), its sections
// per request, and no per-column outputs beside it.
absl::Status CheckVertical(const v1::GenerateChunkRequest& request, const RequestLimits& limits,
                           ChunkSelection::Vertical* out, int size, int64_t chunks) {
  const v1::VerticalRange& v = request.vertical();
  const uint32_t cell = v.cell_size() == 0 ? kDefaultVolumeCellSize : v.cell_size();
  if (cell > static_cast<uint32_t>(kSectionHeight)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "vertical.cell_size = ", cell, " is larger than the section height ", kSectionHeight));
  }
  if (absl::Status s = World::ValidateVolume(size, v.min_y(), v.max_y(), static_cast<int>(cell));
      !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("vertical.", s.message()));
  }
  for (const auto& [asked, field] : {std::pair{request.include_heights(), "include_heights"},
                                     std::pair{request.include_splat(), "include_splat"}}) {
    if (asked) {
      return absl::InvalidArgumentError(absl::StrCat(
          field, " is per column and cannot go with vertical: ask for it in a 2D request"));
    }
  }
  *out = {v.min_y(), v.max_y(), static_cast<int>(cell)};
  // Both factors are bounded (chunks by max_chunks_per_request, sections by kMaxWorldY).
  const int64_t sections = chunks * out->sections();
  if (sections > limits.max_sections_per_request) {
    return absl::InvalidArgumentError(absl::StrCat(
        "vertical: ", chunks, " chunks x ", out->sections(), " sections = ", sections,
        " sections; the limit is max_sections_per_request = ", limits.max_sections_per_request));
  }
  return absl::OkStatus();
}

}  // namespace

ChunkSelection::Coord ChunkSelection::at(int64_t index) const {
  if (!list_.empty()) return list_[static_cast<size_t>(index)];
  return Coord{region_min_x_ + index % region_width_, region_min_z_ + index / region_width_};
}

absl::StatusOr<ChunkSelection> ValidateChunkRequest(const v1::GenerateChunkRequest& request,
                                                    int world_chunk_size,
                                                    const RequestLimits& limits) {
  ChunkSelection selection;
  if (request.chunk_size() == 0) {
    selection.size_ = world_chunk_size;
  } else {
    if (!IsServedChunkSize(request.chunk_size())) {
      return absl::InvalidArgumentError(
          absl::StrCat("chunk_size = ", request.chunk_size(), " is not a power of two in [",
                       kMinServedChunkSize, ", ", kMaxServedChunkSize, "]"));
    }
    selection.size_ = static_cast<int>(request.chunk_size());
  }
  const int size = selection.size_;

  switch (request.selection_case()) {
    case v1::GenerateChunkRequest::kChunks: {
      const auto& coords = request.chunks().coords();
      if (coords.empty()) {
        return absl::InvalidArgumentError("chunks.coords is empty: name at least one chunk");
      }
      if (coords.size() > limits.max_chunks_per_request) {
        return absl::InvalidArgumentError(absl::StrCat(
            "chunks.coords has ", coords.size(),
            " entries; the limit is max_chunks_per_request = ", limits.max_chunks_per_request));
      }
      selection.list_.reserve(coords.size());
      for (int i = 0; i < coords.size(); ++i) {
        const v1::ChunkCoord& c = coords[i];
        if (!ChunkCoordInWorld(c.x(), size)) {
          return ChunkCoordError(absl::StrCat("chunks.coords[", i, "].x"), c.x(), size);
        }
        if (!ChunkCoordInWorld(c.z(), size)) {
          return ChunkCoordError(absl::StrCat("chunks.coords[", i, "].z"), c.z(), size);
        }
        selection.list_.push_back({c.x(), c.z()});
      }
      // Duplicates are refused, not answered once: a client that lists a chunk twice has a bug it
      // should hear about, and the reply stays one message per listed coordinate.
      absl::flat_hash_map<std::pair<int64_t, int64_t>, int> first_index;
      first_index.reserve(coords.size());
      for (int i = 0; i < coords.size(); ++i) {
        auto [it, inserted] = first_index.try_emplace({coords[i].x(), coords[i].z()}, i);
        if (!inserted) {
          return absl::InvalidArgumentError(
              absl::StrCat("chunks.coords[", i, "] = (", coords[i].x(), ", ", coords[i].z(),
                           ") repeats chunks.coords[", it->second, "]: list each chunk once"));
        }
      }
      selection.count_ = coords.size();
      break;
    }
    case v1::GenerateChunkRequest::kRegion: {
      const v1::ChunkRegion& r = request.region();
      if (r.min_x() > r.max_x()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "region.min_x = ", r.min_x(), " is greater than region.max_x = ", r.max_x()));
      }
      if (r.min_z() > r.max_z()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "region.min_z = ", r.min_z(), " is greater than region.max_z = ", r.max_z()));
      }
      const struct {
        const char* field;
        int64_t value;
      } corners[] = {{"region.min_x", r.min_x()},
                     {"region.max_x", r.max_x()},
                     {"region.min_z", r.min_z()},
                     {"region.max_z", r.max_z()}};
      for (const auto& corner : corners) {
        if (!ChunkCoordInWorld(corner.value, size)) {
          return ChunkCoordError(corner.field, corner.value, size);
        }
      }
      // Corners inside the world keep widths below 2^23, but compute in 128 bits anyway and compare
      // each width with the limit before multiplying.
      const absl::int128 width = absl::int128(r.max_x()) - absl::int128(r.min_x()) + 1;
      const absl::int128 depth = absl::int128(r.max_z()) - absl::int128(r.min_z()) + 1;
      const absl::int128 limit = limits.max_chunks_per_request;
      if (width > limit || depth > limit || width * depth > limit) {
        std::ostringstream covers;
        covers << width << " x " << depth;
        if (width <= limit && depth <= limit) covers << " = " << width * depth;
        return absl::InvalidArgumentError(absl::StrCat(
            "region covers ", covers.str(),
            " chunks; the limit is max_chunks_per_request = ", limits.max_chunks_per_request));
      }
      selection.region_min_x_ = r.min_x();
      selection.region_min_z_ = r.min_z();
      selection.region_width_ = static_cast<int64_t>(width);
      selection.count_ = static_cast<int64_t>(width * depth);
      break;
    }
    case v1::GenerateChunkRequest::SELECTION_NOT_SET:
      return absl::InvalidArgumentError(
          "selection is not set: give either chunks (a list of coordinates) or region");
  }
  if (request.has_vertical()) {
    ChunkSelection::Vertical vertical;
    if (absl::Status s = CheckVertical(request, limits, &vertical, size, selection.count_);
        !s.ok()) {
      return s;
    }
    selection.vertical_ = vertical;
  }
  return selection;
}

absl::Status ValidateSplatRequest(const v1::GenerateChunkRequest& request,
                                  const ChunkSelection& selection, int biome_count) {
  if (!request.include_splat()) return absl::OkStatus();
  absl::Status fits = ValidateSplatSize(biome_count, selection.size());
  if (fits.ok()) return fits;
  return absl::InvalidArgumentError(absl::StrCat("include_splat: ", fits.message()));
}

absl::Status ValidateSampleRequest(const v1::SampleWeightsRequest& request,
                                   const RequestLimits& limits) {
  if (request.points_size() > limits.max_points_per_request) {
    return absl::InvalidArgumentError(absl::StrCat(
        "points has ", request.points_size(),
        " entries; the limit is max_points_per_request = ", limits.max_points_per_request));
  }
  for (int i = 0; i < request.points_size(); ++i) {
    absl::Status x = CheckCoord(absl::StrCat("points[", i, "].x"), request.points(i).x());
    if (!x.ok()) return x;
    absl::Status z = CheckCoord(absl::StrCat("points[", i, "].z"), request.points(i).z());
    if (!z.ok()) return z;
    if (request.points(i).has_y()) {
      const double y = request.points(i).y();
      if (!std::isfinite(y) || std::fabs(y) > static_cast<double>(kMaxWorldY)) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "points[%d].y = %.17g is not finite or outside the y bound of +-%d", i, y, kMaxWorldY));
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<BlockBox> ValidateSamplingPointsRequest(const v1::ListSamplingPointsRequest& request,
                                                       const Blender& blender,
                                                       const RequestLimits& limits) {
  const BlockBox box{request.min_x(), request.min_z(), request.max_x(), request.max_z()};
  for (const auto& [field, value] :
       {std::pair{"min_x", box.min_x}, std::pair{"min_z", box.min_z}, std::pair{"max_x", box.max_x},
        std::pair{"max_z", box.max_z}}) {
    if (absl::Status s = CheckCoord(field, value); !s.ok()) return s;
  }
  if (!(box.min_x < box.max_x) || !(box.min_z < box.max_z)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the box [%.17g, %.17g) x [%.17g, %.17g) is empty: min_x < max_x and min_z < max_z are "
        "required",
        box.min_x, box.max_x, box.min_z, box.max_z));
  }
  const double bound = blender.SamplingPointBound(box);
  if (bound > static_cast<double>(limits.max_sampling_points_per_request)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the box [%.17g, %.17g) x [%.17g, %.17g) may hold up to %.0f sampling points of this "
        "world's %s blender; the limit is max_sampling_points_per_request = %d: ask for a smaller "
        "box",
        box.min_x, box.max_x, box.min_z, box.max_z, bound, BlenderName(blender.kind()),
        limits.max_sampling_points_per_request));
  }
  return box;
}

}  // namespace worldgen
