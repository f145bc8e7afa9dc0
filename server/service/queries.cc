#include "server/service/queries.h"

#include <cstdio>
#include <string>
#include <vector>

#include "engine/splat.h"
#include "proto/world_config.h"
#include "server/service/wire_encoding.h"

namespace worldgen {

int64_t VolumePoints(const v1::SampleWeightsRequest& request) {
  int64_t volume = 0;
  for (const v1::Point& point : request.points()) volume += point.has_y();
  return volume;
}

absl::StatusOr<v1::SampleWeightsResponse> SamplePoints(const World& world,
                                                       const v1::SampleWeightsRequest& request,
                                                       BiomeSampleCache* cache,
                                                       absl::FunctionRef<bool()> cancelled,
                                                       absl::FunctionRef<absl::Duration()> lend,
                                                       PointTimes* times) {
  BlendOptions options;
  options.heights = request.include_heights();
  options.dominant_biome = true;
  options.source_biome = request.include_source_biome();
  v1::SampleWeightsResponse response;
  response.mutable_samples()->Reserve(request.points_size());
  // The current run of points of one kind: when it began and whether its points have a y.
  absl::Time run_start = times != nullptr ? absl::Now() : absl::InfinitePast();
  bool run_volume = request.points_size() > 0 && request.points(0).has_y();
  // Charges the time since run_start to the current run's kind; does nothing without times.
  const auto end_run = [&] {
    if (times == nullptr) return;
    const absl::Time now = absl::Now();
    (run_volume ? times->volume_time : times->planar_time) += now - run_start;
    run_start = now;
  };
  for (int i = 0; i < request.points_size(); ++i) {
    if (i > 0 && i % kPointsPerLend == 0) run_start += lend();  // Not this run's time.
    if (i % kPointsPerCancellationCheck == 0 && cancelled()) {
      end_run();
      return absl::CancelledError("call cancelled");
    }
    const v1::Point& point = request.points(i);
    if (times != nullptr) {
      if (point.has_y() != run_volume) {
        end_run();
        run_volume = point.has_y();
      }
      ++(run_volume ? times->volume : times->planar);
    }
    absl::StatusOr<PointBlend> blend =
        point.has_y() ? world.BlendPoint(point.x(), point.y(), point.z(), options, cache)
                      : world.BlendPoint(point.x(), point.z(), options, cache);
    if (!blend.ok()) {
      std::fprintf(stderr, "worldgen-server: SampleWeights point (%.17g, %.17g): %s\n", point.x(),
                   point.z(), blend.status().ToString().c_str());
      std::fflush(stderr);
      end_run();
      return absl::InternalError(blend.status().message());
    }
    EncodePoint(*blend, options, response.add_samples());
  }
  end_run();
  return response;
}

v1::ListSamplingPointsResponse SamplingPointsReply(const World& world, const BlockBox& box,
                                                   BiomeSampleCache* cache) {
  std::vector<SamplingPoint> points;
  world.blender().SamplingPoints(box, cache, &points);
  const std::vector<BiomeSpec>& biomes = world.spec().biomes;  // Dense index = position.
  v1::ListSamplingPointsResponse response;
  response.mutable_points()->Reserve(static_cast<int>(points.size()));
  for (const SamplingPoint& point : points) {
    v1::SamplingPoint* out = response.add_points();
    out->set_x(point.x);
    out->set_z(point.z);
    out->set_biome_id(biomes[static_cast<size_t>(point.biome)].id);
  }
  return response;
}

v1::WorldDescription DescribeWorldReply(const World& world, const WorldRegistry& worlds,
                                        const RequestLimits& request_limits) {
  v1::WorldDescription response;
  const WorldSpec& spec = world.spec();
  *response.mutable_config() = WorldConfigFromSpec(spec);
  const Blender& blender = world.blender();
  response.set_blender(std::string(BlenderName(blender.kind())));
  for (const BlenderFigure& figure : blender.Describe()) {
    if (figure.name == "min_blend_radius") response.set_min_blend_radius(figure.value);
    v1::BlenderFigure* out = response.add_blender_figures();
    out->set_name(figure.name);
    out->set_value(figure.value);
  }
  constexpr double kProbeSide = 4096.0;
  const double bound = blender.SamplingPointBound({0.0, 0.0, kProbeSide, kProbeSide});
  response.set_blocks_per_sampling_point(bound > 0.0 ? kProbeSide * kProbeSide / bound : 0.0);
  v1::ServerLimits* limits = response.mutable_limits();
  limits->set_min_chunk_size(kMinServedChunkSize);
  limits->set_max_chunk_size(kMaxServedChunkSize);
  limits->set_max_chunks_per_request(static_cast<uint32_t>(request_limits.max_chunks_per_request));
  limits->set_max_points_per_request(static_cast<uint32_t>(request_limits.max_points_per_request));
  limits->set_world_coordinate_bound(kMaxWorldCoordinate);
  limits->set_max_splat_bytes_per_chunk(static_cast<uint64_t>(kMaxSplatBytesPerChunk));
  limits->set_max_sampling_points_per_request(
      static_cast<uint32_t>(request_limits.max_sampling_points_per_request));
  limits->set_world_y_bound(kMaxWorldY);
  limits->set_max_cells_per_chunk(static_cast<uint32_t>(kMaxVolumeCells));
  limits->set_max_sections_per_request(
      static_cast<uint32_t>(request_limits.max_sections_per_request));
  for (const BiomeSpec& biome : spec.biomes) response.add_splat_channel_biome_ids(biome.id);
  for (const std::string& name : worlds.names()) response.add_available_worlds(name);
  response.set_fingerprint(worlds.fingerprint(spec.name));
  return response;
}

}  // namespace worldgen
