// worldgen-lab: every blender of the engine on one region of one world, side by side, in pictures
// and numbers. Runs the engine in-process (no server).
//
//   worldgen-lab [--world=FILE.json|anchor] [--region=minx,minz,maxx,maxz] [--out=DIR]
//                [--methods=a,b] [--interval=N] [--radius=R] [--chunk_size=N] [--repeat=N]
//                [--json] [--equal_density] [--height_mode=MODE]
//   worldgen-lab --slices --world=FILE.json [--region=...] [--slice_y=Y] [--slice_y_range=LO,HI]
//                [--layered=H,...] [--out=DIR] [--repeat=N] [--json]
//
// A method entry is a blender's name, optionally with parameters of its own that the row sets
// (e.g. lerped_grid:interpolation=1); the default list is every method, then
// bench::kMethodVariants.
//
// Each method blends the world's biome source: the same world, only its blender replaced by the
// method with the world's sampling interval and blend radius where the method declares such
// parameters (the world's own method keeps all of its parameters), others at their defaults.
// --interval / --radius override both. The region is widened to whole chunks.
//
// --equal_density is seed 001's like-for-like comparison: every method that samples the source at
// points of the world has its interval scaled so that it reads as many points per area as a
// square grid at the lab's interval (1 per interval^2); the triangular lattice, which reads
// 2/sqrt(3) ~ 1.155 times as many at the same interval, gets an interval ~1.075 times longer. The
// density is counted from the method's own SamplingPoints, so no method is special-cased. The
// kernel radius is the same for every method in either mode (all use max(0, r^2 - d^2)^2 with the
// same r), so the seed's "equal inner radius" holds already.
//
// Coast figures, for a world whose biomes declare land or water (BiomeSpec::surface): how far the
// sea-level contour of each method's heights runs from the raw land/water border (max and RMS,
// quality::MeasureCoast) and the steepest slope. The world's height mode applies; --height_mode
// replaces it (blended_weights, chunk_interpolated or coastal), so one world gives the figures of
// today's blended heights and of the coastal heights (engine/coast.h) side by side.
//
// Writes to --out, per method: <method>_blend.png (biome colours mixed by weight),
// <method>_dominant.png (dominant biome, raw map borders in black), <method>_height.png (shaded
// heights), <method>_crop.png (the centre, lit blend colours, zoomed); and montage.png (one column
// per method in table order: blend, dominant, heights). Prints one table row per method (--json:
// one JSON object), see PrintTable for the columns.
//
// --slices is the 3D mode, for a world with cave biomes (issue 25): instead of the 2D methods, the
// world's own 3D blend (World::BlendPoint(x, y, z)) against the full-resolution 3D reference
// (engine/quality/full_resolution_volume.h) on two slices: "horizontal", the region's columns at
// y = --slice_y, and "vertical", the plane through the region's middle column x along z, y over
// --slice_y_range. The reference sums about 19,000 blocks per cell at radius 24 and vertical
// radius 8 (docker/worlds/caves.json), about 0.15 ms, so keep the region small: 128 x 128
// columns and 128 heights take about 10 s, the default region a minute or more. Writes
// <slice>_map.png (the raw 3D map), <slice>_scattered.png, <slice>_full_resolution_3d.png (biome
// colours mixed by weight), <slice>_montage.png (the three side by side) and montage.png (both
// slices); prints a row per slice, see PrintSliceTable. --layered adds candidate 3D methods that
// the engine does not have (bench/lab/layered_volume.h): their distance from the reference and
// their kernel terms per cell, for the same two slices.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "bench/anchor_world.h"
#include "bench/lab/lab_views.h"
#include "bench/lab/volume_slices.h"
#include "bench/method_entry.h"
#include "client/cli/render.h"
#include "client/rgb_image.h"
#include "engine/blender.h"
#include "engine/floor_div.h"
#include "engine/quality/blend_metrics.h"
#include "engine/quality/coast_metrics.h"
#include "engine/quality/isotropy.h"
#include "engine/world.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "proto/world_config.h"

ABSL_FLAG(std::string, world, "",
          "World config (protobuf JSON WorldConfig); empty = the embedded default; \"anchor\" = "
          "the benchmarks' anchor world (bench/anchor_world.h), scattered at the lab's interval "
          "and radius");
ABSL_FLAG(std::string, region, "-256,-256,255,255",
          "Block columns minx,minz,maxx,maxz (inclusive)");
ABSL_FLAG(std::string, out, "lab-out", "Directory for the PNGs (created)");
ABSL_FLAG(std::string, methods, "",
          "Comma-separated blender names, each optionally with :param=value parts (e.g. "
          "lerped_grid:interpolation=1); empty = every method and the listed variants");
ABSL_FLAG(int, interval, 0,
          "Sampling interval for every method declaring one; 0 = the world's (else 8)");
ABSL_FLAG(double, radius, 0,
          "blend_radius for every method declaring one; 0 = the world's (else 24)");
ABSL_FLAG(int, chunk_size, 16, "Chunk size (columns per side) blended at a time");
ABSL_FLAG(int, repeat, 3, "Timing passes per method (the fastest counts)");
ABSL_FLAG(bool, json, false, "Print the table as one JSON object");
ABSL_FLAG(bool, equal_density, false,
          "Scale each point-sampling method's interval so it reads 1 point per interval^2 "
          "(seed 001's like-for-like comparison)");
ABSL_FLAG(std::string, height_mode, "",
          "Height mode for every row: blended_weights, chunk_interpolated or coastal; empty = the "
          "world's");
ABSL_FLAG(bool, slices, false,
          "3D mode, for a world with cave biomes: a horizontal and a vertical slice of its 3D "
          "blend against the full-resolution 3D reference, instead of the 2D methods");
ABSL_FLAG(int, slice_y, -40, "--slices: the horizontal slice's block y (over the region)");
ABSL_FLAG(std::string, slice_y_range, "-80,47",
          "--slices: the vertical slice's blocks min_y,max_y (inclusive), through the region's "
          "middle column x along its z range");

ABSL_FLAG(std::string, layered, "",
          "--slices: candidate layered 3D methods to measure too (bench/lab/layered_volume.h), "
          "as layer spacings in blocks, each optionally followed by s (separable kernel) or r "
          "(radial; both when neither), e.g. 2,4");

namespace worldgen::lab {
namespace {

constexpr double kDefaultInterval = 8.0, kDefaultRadius = 24.0;
constexpr const char* kIntervalNames[] = {"sampling_interval", "interval"};
constexpr const char* kReference = "full_resolution";
constexpr const char* kAnchorWorld = "anchor";
using bench::kMethodVariants;
using bench::MethodEntry;

// The value in force of the first of `names` the spec's method declares, or nullopt.
std::optional<double> DeclaredParam(const WorldSpec& spec,
                                    std::initializer_list<const char*> names) {
  const BlenderMethod& method = MethodOf(spec.blender.kind);
  for (const char* name : names) {
    if (FindParam(method, name) != nullptr) return BlenderParam(spec, name);
  }
  return std::nullopt;
}

constexpr std::pair<HeightMode, const char*> kHeightModeNames[] = {
    {HeightMode::kBlendedWeights, "blended_weights"},
    {HeightMode::kChunkInterpolated, "chunk_interpolated"},
    {HeightMode::kCoastal, "coastal"}};

const char* HeightModeName(HeightMode mode) {
  for (const auto& [m, name] : kHeightModeNames) {
    if (m == mode) return name;
  }
  return "?";
}

std::optional<HeightMode> ParseHeightMode(absl::string_view name) {
  for (const auto& [m, n] : kHeightModeNames) {
    if (name == n) return m;
  }
  return std::nullopt;
}

struct Row {
  std::string label;
  std::string error;    // Non-empty: the method could not run on this world (the reason).
  bool failed = false;  // Writing its pictures failed (error says why).
  std::vector<BlenderFigure> params;
  double ns_per_column = 0;
  quality::ChunkCoverage chunks;
  double max_sum_error = 0, max_jump = 0, grid_lock = 0;
  double rms_from_reference = std::numeric_limits<double>::quiet_NaN();
  std::optional<quality::CoastFigures> coast;  // Set when the world's biomes declare land/water.
  std::vector<std::string> pngs;
};

struct Lab {
  WorldSpec world;  // Biomes sorted by id.
  int64_t x0 = 0, z0 = 0;
  int width = 0, height = 0, chunk_size = 16, repeat = 3;
  double interval = kDefaultInterval, radius = kDefaultRadius;
  bool interval_set = false, radius_set = false;
  bool equal_density = false;
  bool slices = false;
  int64_t slice_y = 0, slice_min_y = 0, slice_max_y = 0;  // --slices only.
  std::vector<LayeredMethod> layered;                     // --slices only.
  std::filesystem::path out;

  // The world with the entry's method as its blender (see the file comment), then the entry's
  // own parameters.
  WorldSpec SpecFor(const MethodEntry& entry) const {
    const BlenderMethod& method = *entry.method;
    WorldSpec spec = world;
    if (method.kind != world.blender.kind) {
      spec.blender = quality::KernelBlenderSpec(method.kind, interval, radius);
    } else {
      for (const char* name : kIntervalNames) {
        if (interval_set && FindParam(method, name) != nullptr) {
          spec.blender.params[name] = interval;
        }
      }
      if (radius_set && FindParam(method, "blend_radius") != nullptr)
        spec.blender.params["blend_radius"] = radius;
    }
    for (const auto& [name, value] : entry.params) spec.blender.params[name] = value;
    return spec;
  }

  // SpecFor(entry); under --equal_density with the method's interval scaled so that it reads one
  // sampling point per interval^2, counted from its SamplingPoints over a square of kDensitySide
  // blocks at the region's centre. Methods without sampling points or an interval are unchanged.
  absl::StatusOr<WorldSpec> RowSpec(const MethodEntry& entry) const {
    WorldSpec spec = SpecFor(entry);
    if (!equal_density) return spec;
    const char* name = nullptr;
    for (const char* n : kIntervalNames) {
      if (name == nullptr && FindParam(*entry.method, n) != nullptr) name = n;
    }
    if (name == nullptr) return spec;
    absl::StatusOr<std::shared_ptr<const World>> w = World::Create(spec);
    if (!w.ok()) return w.status();
    constexpr double kDensitySide = 2048;
    const double cx = static_cast<double>(x0) + width / 2.0;
    const double cz = static_cast<double>(z0) + height / 2.0;
    const BlockBox box{cx - kDensitySide / 2, cz - kDensitySide / 2, cx + kDensitySide / 2,
                       cz + kDensitySide / 2};
    BiomeSampleCache cache(64 << 20);
    std::vector<SamplingPoint> points;
    (*w)->blender().SamplingPoints(box, &cache, &points);
    if (points.empty()) return spec;
    const double density = static_cast<double>(points.size()) / (kDensitySide * kDensitySide);
    const double scale = std::sqrt(density) * interval;
    if (std::abs(scale - 1) > 1e-9) spec.blender.params[name] = BlenderParam(spec, name) * scale;
    return spec;
  }

  int Index(uint32_t biome_id) const { return DenseBiomeIndex(world.biomes, biome_id); }

  // Fastest of `repeat` passes over the region, each with a fresh cache: ns per column.
  double TimeBlend(const Blender& blender) const {
    double best = std::numeric_limits<double>::infinity();
    std::vector<IndexedLayer> layers;
    for (int pass = 0; pass < repeat; ++pass) {
      BiomeSampleCache cache(64 << 20);
      const auto start = std::chrono::steady_clock::now();
      for (int cz = 0; cz < height; cz += chunk_size) {
        for (int cx = 0; cx < width; cx += chunk_size) {
          blender.BlendColumns(x0 + cx, z0 + cz, chunk_size, &cache, &layers);
        }
      }
      const std::chrono::duration<double, std::nano> took =
          std::chrono::steady_clock::now() - start;
      best = std::min(best, took.count() / (static_cast<double>(width) * height));
    }
    return best;
  }

  bool HasSurfaces() const {
    return std::any_of(world.biomes.begin(), world.biomes.end(),
                       [](const BiomeSpec& b) { return b.surface != BiomeSurface::kUnspecified; });
  }

  quality::CoastFigures MeasureCoast(const RegionBlend& blend) const {
    std::vector<uint8_t> land(blend.source.size());
    for (size_t i = 0; i < land.size(); ++i) {
      land[i] = world.biomes[static_cast<size_t>(blend.source[i])].surface == BiomeSurface::kLand;
    }
    return quality::MeasureCoast(land, blend.heights, width, height, world.heights.sea_level);
  }

  absl::StatusOr<RegionBlend> Blend(const World& w) const {
    BiomeSampleCache cache(64 << 20);
    RegionBlend blend{quality::BlendRegion(
                          [&](int64_t bx, int64_t bz, int size, std::vector<IndexedLayer>* layers) {
                            w.blender().BlendColumns(bx, bz, size, &cache, layers);
                          },
                          x0, z0, width, height, chunk_size, static_cast<int>(world.biomes.size())),
                      {},
                      {},
                      {}};
    const size_t n = static_cast<size_t>(width) * height;
    blend.heights.resize(n);
    blend.dominant.resize(n);
    blend.source.resize(n);
    const BlendOptions options{.heights = true, .dominant_biome = true, .source_biome = true};
    for (int cz = 0; cz < height; cz += chunk_size) {
      for (int cx = 0; cx < width; cx += chunk_size) {
        absl::StatusOr<ChunkBlend> chunk = w.BlendChunk(
            (x0 + cx) / chunk_size, (z0 + cz) / chunk_size, chunk_size, options, &cache);
        if (!chunk.ok()) return chunk.status();
        for (int lz = 0; lz < chunk_size; ++lz) {
          for (int lx = 0; lx < chunk_size; ++lx) {
            const size_t i = static_cast<size_t>(cz + lz) * width + (cx + lx);
            const size_t c = static_cast<size_t>(ColumnIndex(chunk_size, lx, lz));
            blend.heights[i] = chunk->heights[c];
            blend.dominant[i] = Index(chunk->dominant_biome[c]);
            blend.source[i] = Index(chunk->source_biome[c]);
          }
        }
      }
    }
    return blend;
  }
};

// Writes `image` to `path` and, once written, adds its file name to `pngs`.
absl::Status WriteView(const RgbImage& image, const std::filesystem::path& path,
                       std::vector<std::string>* pngs) {
  absl::Status status = WritePng(image, path.string());
  if (status.ok()) pngs->push_back(path.filename().string());
  return status;
}

std::string Fixed(double v, int precision) {
  return std::isnan(v) ? "-" : absl::StrFormat("%.*f", precision, v);
}

void PrintTable(const Lab& lab, const std::vector<Row>& rows) {
  std::printf(
      "world %s, region [%lld, %lld] + %d x %d columns, chunk %d, interval %g, radius %g%s\n",
      lab.world.name.c_str(), static_cast<long long>(lab.x0), static_cast<long long>(lab.z0),
      lab.width, lab.height, lab.chunk_size, lab.interval, lab.radius,
      lab.equal_density ? ", equal density (1 sampling point per interval^2)" : "");
  const bool coast = lab.HasSurfaces();
  if (coast) {
    std::printf(
        "heights %s, sea level %g; coast max/rms: blocks between the sea-level contour and "
        "the raw land/water border; slope: steepest, blocks per block\n",
        HeightModeName(lab.world.heights.mode), lab.world.heights.sea_level);
  }
  std::printf("%-27s %10s %13s %8s %12s %9s %9s %12s%s\n", "method", "ns/column", "biomes/chunk",
              "single", "max|sum-1|", "max jump", "grid lock", "rms vs full",
              coast ? "  coast max  coast rms    slope" : "");
  for (const Row& row : rows) {
    if (!row.error.empty()) {
      std::printf("%-27s not run: %s\n", row.label.c_str(), row.error.c_str());
      continue;
    }
    std::printf("%-27s %10s %13s %8s %12.2e %9s %9s %12s", row.label.c_str(),
                Fixed(row.ns_per_column, 1).c_str(), Fixed(row.chunks.biomes_per_chunk, 2).c_str(),
                Fixed(row.chunks.single_biome_share, 3).c_str(), row.max_sum_error,
                Fixed(row.max_jump, 4).c_str(), Fixed(row.grid_lock, 3).c_str(),
                Fixed(row.rms_from_reference, 4).c_str());
    if (row.coast) {
      std::printf(" %10s %10s %8s", Fixed(row.coast->max_error, 2).c_str(),
                  Fixed(row.coast->rms_error, 3).c_str(),
                  Fixed(row.coast->steepest_slope, 2).c_str());
    }
    std::printf("\n");
  }
}

using google::protobuf::Struct;
using google::protobuf::Value;

Value JsonNumber(double v) {  // JSON has no NaN or infinity (a lost coast): null.
  Value value;
  if (!std::isfinite(v)) {
    value.set_null_value(google::protobuf::NULL_VALUE);
  } else {
    value.set_number_value(v);
  }
  return value;
}

Value JsonText(absl::string_view v) {
  Value value;
  value.set_string_value(std::string(v));
  return value;
}

absl::Status PrintStruct(const Struct& report) {
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  if (auto status = google::protobuf::util::MessageToJsonString(report, &json, options);
      !status.ok()) {
    return absl::InternalError(std::string(status.message()));
  }
  std::fputs(json.c_str(), stdout);
  return absl::OkStatus();
}

absl::Status PrintJson(const Lab& lab, const std::vector<Row>& rows) {
  Struct report;
  auto& top = *report.mutable_fields();
  top["world"] = JsonText(lab.world.name);
  Value region;
  for (double v : {static_cast<double>(lab.x0), static_cast<double>(lab.z0),
                   static_cast<double>(lab.x0 + lab.width - 1),
                   static_cast<double>(lab.z0 + lab.height - 1)}) {
    *region.mutable_list_value()->add_values() = JsonNumber(v);
  }
  top["region"] = region;
  top["chunk_size"] = JsonNumber(lab.chunk_size);
  top["interval"] = JsonNumber(lab.interval);
  top["radius"] = JsonNumber(lab.radius);
  Value equal_density;
  equal_density.set_bool_value(lab.equal_density);
  top["equal_density"] = equal_density;
  top["height_mode"] = JsonText(HeightModeName(lab.world.heights.mode));
  top["sea_level"] = JsonNumber(lab.world.heights.sea_level);
  top["out"] = JsonText(lab.out.string());
  Value list;
  for (const Row& row : rows) {
    Value entry;
    auto& f = *entry.mutable_struct_value()->mutable_fields();
    f["method"] = JsonText(row.label);
    if (!row.error.empty()) {
      f["error"] = JsonText(row.error);
    } else {
      Value params;
      for (const BlenderFigure& p : row.params)
        (*params.mutable_struct_value()->mutable_fields())[p.name] = JsonNumber(p.value);
      f["params"] = params;
      f["ns_per_column"] = JsonNumber(row.ns_per_column);
      f["biomes_per_chunk"] = JsonNumber(row.chunks.biomes_per_chunk);
      f["single_biome_share"] = JsonNumber(row.chunks.single_biome_share);
      f["max_sum_error"] = JsonNumber(row.max_sum_error);
      f["max_neighbour_jump"] = JsonNumber(row.max_jump);
      f["grid_lock"] = JsonNumber(row.grid_lock);
      f["rms_from_full_resolution"] = JsonNumber(row.rms_from_reference);
      if (row.coast) {
        f["coast_max_error"] = JsonNumber(row.coast->max_error);
        f["coast_rms_error"] = JsonNumber(row.coast->rms_error);
        f["steepest_slope"] = JsonNumber(row.coast->steepest_slope);
      }
      Value pngs;
      for (const std::string& png : row.pngs)
        *pngs.mutable_list_value()->add_values() = JsonText(png);
      f["pngs"] = pngs;
    }
    *list.mutable_list_value()->add_values() = entry;
  }
  top["methods"] = list;
  return PrintStruct(report);
}

absl::StatusOr<MethodEntry> ParseMethod(absl::string_view text) {
  return bench::ParseMethodEntry(text, "--methods");
}

absl::StatusOr<std::vector<MethodEntry>> SelectMethods(absl::string_view names) {
  std::vector<std::string> entries;
  if (names.empty()) {
    for (const BlenderMethod* m : BlenderMethods()) entries.emplace_back(m->name);
    for (const char* variant : kMethodVariants) entries.emplace_back(variant);
  } else {
    for (absl::string_view name : absl::StrSplit(names, ',', absl::SkipEmpty())) {
      entries.emplace_back(name);
    }
  }
  std::vector<MethodEntry> methods;
  for (const std::string& text : entries) {
    absl::StatusOr<MethodEntry> entry = ParseMethod(text);
    if (!entry.ok()) return entry.status();
    methods.push_back(*std::move(entry));
  }
  return methods;
}

absl::StatusOr<Lab> Configure() {
  Lab lab;
  const std::string world_path = absl::GetFlag(FLAGS_world);
  WorldSpec spec = DefaultWorldSpec();
  if (world_path == kAnchorWorld) {
    const int interval = absl::GetFlag(FLAGS_interval);
    const double radius = absl::GetFlag(FLAGS_radius);
    spec = bench::AnchorWorldSpec(quality::KernelBlenderSpec(
        BlenderKind::kScattered, interval != 0 ? interval : kDefaultInterval,
        radius != 0 ? radius : kDefaultRadius));
  } else if (!world_path.empty()) {
    absl::StatusOr<std::vector<WorldSpec>> specs = LoadWorldSpecs({world_path});
    if (!specs.ok()) return specs.status();
    if (specs->size() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("--world=", world_path, " holds ", specs->size(), " worlds; name one file"));
    }
    spec = (*specs)[0];
  }
  const std::string height_mode = absl::GetFlag(FLAGS_height_mode);
  if (!height_mode.empty()) {
    std::optional<HeightMode> mode = ParseHeightMode(height_mode);
    if (!mode) {
      return absl::InvalidArgumentError(
          absl::StrCat("--height_mode=", height_mode,
                       " is not one of blended_weights, chunk_interpolated, coastal"));
    }
    spec.heights.mode = *mode;
  }
  absl::StatusOr<std::shared_ptr<const World>> world = World::Create(spec);
  if (!world.ok()) return world.status();
  lab.world = (*world)->spec();

  lab.chunk_size = absl::GetFlag(FLAGS_chunk_size);
  if (!IsServedChunkSize(lab.chunk_size)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--chunk_size=%d is not a power of two in [%d, %d]", lab.chunk_size,
                        kMinServedChunkSize, kMaxServedChunkSize));
  }
  lab.repeat = std::max(1, absl::GetFlag(FLAGS_repeat));
  absl::StatusOr<cli::BlockRegion> region = cli::ParseBlockRegion(absl::GetFlag(FLAGS_region));
  if (!region.ok()) return region.status();
  if (std::max(std::abs(region->min_x), std::abs(region->max_x)) >
          kMaxWorldCoordinate - 2 * kMaxServedChunkSize ||
      std::max(std::abs(region->min_z), std::abs(region->max_z)) >
          kMaxWorldCoordinate - 2 * kMaxServedChunkSize) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--region: columns must lie within +-%g", kMaxWorldCoordinate));
  }
  const int64_t n = lab.chunk_size;
  lab.x0 = FloorDiv(region->min_x, n) * n;
  lab.z0 = FloorDiv(region->min_z, n) * n;
  lab.width = static_cast<int>((FloorDiv(region->max_x, n) + 1) * n - lab.x0);
  lab.height = static_cast<int>((FloorDiv(region->max_z, n) + 1) * n - lab.z0);

  const int interval_flag = absl::GetFlag(FLAGS_interval);
  const double radius_flag = absl::GetFlag(FLAGS_radius);
  lab.interval_set = interval_flag != 0;
  lab.radius_set = radius_flag != 0;
  lab.interval = lab.interval_set ? interval_flag
                                  : DeclaredParam(lab.world, {kIntervalNames[0], kIntervalNames[1]})
                                        .value_or(kDefaultInterval);
  lab.radius = lab.radius_set ? radius_flag
                              : DeclaredParam(lab.world, {"blend_radius"}).value_or(kDefaultRadius);

  lab.equal_density = absl::GetFlag(FLAGS_equal_density);
  lab.out = absl::GetFlag(FLAGS_out);

  lab.slices = absl::GetFlag(FLAGS_slices);
  if (lab.slices) {
    lab.slice_y = absl::GetFlag(FLAGS_slice_y);
    const std::string range = absl::GetFlag(FLAGS_slice_y_range);
    const std::vector<std::string> parts = absl::StrSplit(range, ',');
    if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &lab.slice_min_y) ||
        !absl::SimpleAtoi(parts[1], &lab.slice_max_y) || lab.slice_min_y > lab.slice_max_y) {
      return absl::InvalidArgumentError(
          absl::StrCat("--slice_y_range=", range, " is not MIN_Y,MAX_Y with MIN_Y <= MAX_Y"));
    }
    absl::StatusOr<std::vector<LayeredMethod>> layered =
        ParseLayeredMethods(absl::GetFlag(FLAGS_layered));
    if (!layered.ok()) return layered.status();
    lab.layered = *std::move(layered);
    for (const int64_t y : {lab.slice_y, lab.slice_min_y, lab.slice_max_y}) {
      if (std::abs(y) > kMaxWorldY) {
        return absl::InvalidArgumentError(
            absl::StrFormat("--slice_y, --slice_y_range: y must lie within +-%d", kMaxWorldY));
      }
    }
  }
  return lab;
}

// Runs one method: its row, and its views into `views` (blend, dominant, heights) for the montage.
Row RunMethod(const Lab& lab, const MethodEntry& method, const quality::RegionWeights* reference,
              std::optional<quality::RegionWeights>* weights_out, std::vector<RgbImage>* views) {
  Row row;
  row.label = method.label;
  absl::StatusOr<WorldSpec> spec = lab.RowSpec(method);
  absl::StatusOr<std::shared_ptr<const World>> world =
      spec.ok() ? World::Create(*spec) : spec.status();
  if (!world.ok()) {
    row.error = std::string(world.status().message());
    return row;
  }
  row.params = (*world)->blender().Describe();
  row.ns_per_column = lab.TimeBlend((*world)->blender());
  absl::StatusOr<RegionBlend> blend = lab.Blend(**world);
  if (!blend.ok()) {
    row.error = std::string(blend.status().message());
    row.failed = true;
    return row;
  }
  const quality::RegionWeights& w = blend->weights;
  row.chunks = quality::MeasureChunks(w, lab.chunk_size);
  row.max_sum_error = quality::MaxSumError(w);
  row.max_jump = quality::MaxNeighbourJump(w);
  const int period = static_cast<int>(std::lround(lab.interval));
  row.grid_lock =
      period >= 2 ? quality::IntervalGridLock(w, period) : std::numeric_limits<double>::quiet_NaN();
  if (reference != nullptr) row.rms_from_reference = quality::RmsDistance(w, *reference);
  if (lab.HasSurfaces()) row.coast = lab.MeasureCoast(*blend);

  const std::string name = method.FileName();
  views->push_back(BlendColours(*blend, lab.world.biomes));
  views->push_back(DominantWithSourceBorders(*blend, lab.world.biomes));
  views->push_back(ShadedHeights(*blend));
  const RgbImage crop = ZoomedCrop(*blend, lab.world.biomes, 64, 4);
  for (const auto& [image, suffix] :
       {std::pair<const RgbImage*, const char*>{&(*views)[0], "blend"},
        {&(*views)[1], "dominant"},
        {&(*views)[2], "height"},
        {&crop, "crop"}}) {
    if (absl::Status s =
            WriteView(*image, lab.out / absl::StrCat(name, "_", suffix, ".png"), &row.pngs);
        !s.ok()) {
      row.error = std::string(s.message());
      row.failed = true;
      return row;
    }
  }
  if (weights_out != nullptr) weights_out->emplace(std::move(blend->weights));
  return row;
}

// --slices: one slice's row.
struct SliceRow {
  std::string name, where;
  size_t cells = 0;
  double cave_share = 0, ns_per_cell_scattered = 0, ns_per_cell_reference = 0;
  // quality::RmsDistance from the reference of the 3D blend and of the 2D blend alone (what the
  // 3D blend changes), and the reference's own largest |sum of weights - 1|.
  double rms = 0, rms_2d = 0, max_sum_error = 0;
  // Per --layered method: its distance from the reference and its kernel terms per cell.
  std::vector<std::pair<double, double>> layered;
  std::vector<std::string> pngs;
};

void PrintSliceTable(const Lab& lab, double y_scale, const std::vector<SliceRow>& rows) {
  const VolumeBlendParams& p = lab.world.caves.blending;
  std::printf(
      "world %s, 3D blend against the full-resolution 3D reference; cave blending interval %g, "
      "jitter %g, radius %g, vertical radius %g (y scale %g)\n",
      lab.world.name.c_str(), p.sampling_interval, p.jitter, p.blend_radius,
      p.vertical_blend_radius, y_scale);
  std::printf(
      "rms: root mean square over cells of the distance between weight vectors (as the 2D "
      "table's rms vs full); 2D only: the world's 2D blend of each cell's column\n");
  std::printf("%-11s %7s %10s %17s %15s %14s %18s %18s\n", "slice", "cells", "cave cells",
              "ns/cell scattered", "ns/cell full 3D", "rms vs full 3D", "2D only vs full 3D",
              "max|sum-1| full 3D");
  for (const SliceRow& row : rows) {
    std::printf("%-11s %7zu %10s %17s %15s %14s %18s %18.2e\n", row.name.c_str(), row.cells,
                Fixed(row.cave_share, 3).c_str(), Fixed(row.ns_per_cell_scattered, 1).c_str(),
                Fixed(row.ns_per_cell_reference, 1).c_str(), Fixed(row.rms, 4).c_str(),
                Fixed(row.rms_2d, 4).c_str(), row.max_sum_error);
  }
  for (const SliceRow& row : rows) std::printf("%s: %s\n", row.name.c_str(), row.where.c_str());
  if (lab.layered.empty()) return;
  std::printf(
      "candidate layered methods (bench/lab/layered_volume.h), against the full-resolution 3D "
      "reference\n%-11s %-34s %14s %15s\n",
      "slice", "method", "rms vs full 3D", "terms per cell");
  for (const SliceRow& row : rows) {
    for (size_t m = 0; m < lab.layered.size(); ++m) {
      std::printf("%-11s %-34s %14s %15s\n", row.name.c_str(), lab.layered[m].Name().c_str(),
                  Fixed(row.layered[m].first, 4).c_str(), Fixed(row.layered[m].second, 1).c_str());
    }
  }
}

absl::Status PrintSliceJson(const Lab& lab, double y_scale, const std::vector<SliceRow>& rows) {
  const VolumeBlendParams& p = lab.world.caves.blending;
  Struct report;
  auto& top = *report.mutable_fields();
  top["world"] = JsonText(lab.world.name);
  Value blending;
  auto& b = *blending.mutable_struct_value()->mutable_fields();
  b["sampling_interval"] = JsonNumber(p.sampling_interval);
  b["jitter"] = JsonNumber(p.jitter);
  b["blend_radius"] = JsonNumber(p.blend_radius);
  b["vertical_blend_radius"] = JsonNumber(p.vertical_blend_radius);
  b["y_scale"] = JsonNumber(y_scale);
  top["cave_blending"] = blending;
  top["out"] = JsonText(lab.out.string());
  Value list;
  for (const SliceRow& row : rows) {
    Value entry;
    auto& f = *entry.mutable_struct_value()->mutable_fields();
    f["slice"] = JsonText(row.name);
    f["where"] = JsonText(row.where);
    f["cells"] = JsonNumber(static_cast<double>(row.cells));
    f["cave_share"] = JsonNumber(row.cave_share);
    f["ns_per_cell_scattered"] = JsonNumber(row.ns_per_cell_scattered);
    f["ns_per_cell_full_resolution_3d"] = JsonNumber(row.ns_per_cell_reference);
    f["rms_from_full_resolution_3d"] = JsonNumber(row.rms);
    f["rms_2d_from_full_resolution_3d"] = JsonNumber(row.rms_2d);
    f["max_sum_error_full_resolution_3d"] = JsonNumber(row.max_sum_error);
    Value layered;
    for (size_t m = 0; m < lab.layered.size(); ++m) {
      Value method;
      auto& l = *method.mutable_struct_value()->mutable_fields();
      l["method"] = JsonText(lab.layered[m].Name());
      l["rms_from_full_resolution_3d"] = JsonNumber(row.layered[m].first);
      l["terms_per_cell"] = JsonNumber(row.layered[m].second);
      *layered.mutable_list_value()->add_values() = method;
    }
    f["layered"] = layered;
    Value pngs;
    for (const std::string& png : row.pngs)
      *pngs.mutable_list_value()->add_values() = JsonText(png);
    f["pngs"] = pngs;
    *list.mutable_list_value()->add_values() = entry;
  }
  top["slices"] = list;
  return PrintStruct(report);
}

// The --slices run (see the file comment): 0, 1 if a picture could not be written, 2 if the world
// or the slices are refused (before anything is written).
int RunSlices(const Lab& lab) {
  absl::StatusOr<std::shared_ptr<const World>> world = World::Create(lab.world);
  std::vector<SliceBlend> blends;
  for (const VolumeSlice& slice :
       {HorizontalSlice(lab.x0, lab.z0, lab.width, lab.height, lab.slice_y),
        VerticalSlice(lab.x0 + lab.width / 2, lab.z0, lab.height, lab.slice_min_y,
                      lab.slice_max_y)}) {
    absl::StatusOr<SliceBlend> blend =
        world.ok() ? BlendSlice(**world, slice, lab.repeat, lab.layered) : world.status();
    if (!blend.ok()) {
      std::fprintf(stderr, "worldgen-lab: --slices: %s\n",
                   std::string(blend.status().message()).c_str());
      return 2;
    }
    blends.push_back(*std::move(blend));
  }
  std::error_code error;
  std::filesystem::create_directories(lab.out, error);
  if (error) {
    std::fprintf(stderr, "worldgen-lab: --out=%s: %s\n", lab.out.c_str(), error.message().c_str());
    return 2;
  }

  int status = 0;
  auto write = [&](const RgbImage& image, const std::string& file, std::vector<std::string>* pngs) {
    if (absl::Status s = WriteView(image, lab.out / file, pngs); !s.ok()) {
      std::fprintf(stderr, "worldgen-lab: %s\n", std::string(s.message()).c_str());
      status = 1;
    }
  };
  std::vector<SliceRow> rows;
  std::vector<std::array<RgbImage, 3>> views;  // Per slice: map, scattered, reference.
  std::vector<std::string> unlisted;
  for (const SliceBlend& blend : blends) {
    SliceRow row{.name = blend.slice.name,
                 .where = blend.slice.where,
                 .cells = blend.map.columns(),
                 .cave_share = blend.cave_share,
                 .ns_per_cell_scattered = blend.ns_per_cell_scattered,
                 .ns_per_cell_reference = blend.ns_per_cell_reference,
                 .rms = quality::RmsDistance(blend.scattered, blend.reference),
                 .rms_2d = quality::RmsDistance(blend.surface, blend.reference),
                 .max_sum_error = quality::MaxSumError(blend.reference),
                 .layered = {},
                 .pngs = {}};
    for (size_t m = 0; m < blend.layered.size(); ++m) {
      row.layered.emplace_back(quality::RmsDistance(blend.layered[m], blend.reference),
                               blend.layered_terms_per_cell[m]);
    }
    const std::array<RgbImage, 3>& v = views.emplace_back(std::array<RgbImage, 3>{
        BlendColours(blend.map, lab.world.biomes), BlendColours(blend.scattered, lab.world.biomes),
        BlendColours(blend.reference, lab.world.biomes)});
    write(v[0], row.name + "_map.png", &row.pngs);
    write(v[1], row.name + "_scattered.png", &row.pngs);
    write(v[2], row.name + "_full_resolution_3d.png", &row.pngs);
    write(Montage({{&v[0]}, {&v[1]}, {&v[2]}}, 4), row.name + "_montage.png", &row.pngs);
    rows.push_back(std::move(row));
  }
  // Both slices: map, scattered and reference side by side, the horizontal slice above.
  std::vector<std::vector<const RgbImage*>> columns(3);
  for (const std::array<RgbImage, 3>& v : views) {
    for (size_t c = 0; c < 3; ++c) columns[c].push_back(&v[c]);
  }
  write(Montage(columns, 4), "montage.png", &unlisted);

  const double y_scale = (*world)->volume_blender()->lattice().y_scale();
  if (absl::GetFlag(FLAGS_json)) {
    if (absl::Status s = PrintSliceJson(lab, y_scale, rows); !s.ok()) {
      std::fprintf(stderr, "worldgen-lab: %s\n", std::string(s.message()).c_str());
      return 1;
    }
  } else {
    PrintSliceTable(lab, y_scale, rows);
  }
  return status;
}

int Main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "worldgen-lab: every blender on one world region, in PNGs and a table");
  absl::ParseCommandLine(argc, argv);
  absl::StatusOr<Lab> lab = Configure();
  if (lab.ok() && lab->slices) return RunSlices(*lab);
  absl::StatusOr<std::vector<MethodEntry>> methods =
      lab.ok() ? SelectMethods(absl::GetFlag(FLAGS_methods)) : lab.status();
  if (!methods.ok()) {
    std::fprintf(stderr, "worldgen-lab: %s\n", std::string(methods.status().message()).c_str());
    return 2;
  }
  std::error_code error;
  std::filesystem::create_directories(lab->out, error);
  if (error) {
    std::fprintf(stderr, "worldgen-lab: --out=%s: %s\n", lab->out.c_str(), error.message().c_str());
    return 2;
  }

  // The reference first: the full-resolution blur of the same raw map, if the engine has it.
  std::optional<quality::RegionWeights> reference;
  std::vector<Row> rows(methods->size());
  std::vector<std::vector<RgbImage>> views(methods->size());
  absl::StatusOr<MethodEntry> reference_method = ParseMethod(kReference);
  std::optional<size_t> reference_row;
  for (size_t i = 0; i < methods->size(); ++i) {
    if ((*methods)[i].label == kReference) reference_row = i;
  }
  if (reference_method.ok()) {
    std::vector<RgbImage> unused;
    Row row = RunMethod(*lab, *reference_method, nullptr, &reference,
                        reference_row ? &views[*reference_row] : &unused);
    if (reference) row.rms_from_reference = 0.0;
    if (reference_row) rows[*reference_row] = std::move(row);
  }
  for (size_t i = 0; i < methods->size(); ++i) {
    if (reference_row == i) continue;
    rows[i] = RunMethod(*lab, (*methods)[i], reference ? &*reference : nullptr, nullptr, &views[i]);
  }

  std::vector<std::vector<const RgbImage*>> columns;
  for (const std::vector<RgbImage>& v : views) {
    if (v.empty()) continue;
    columns.push_back({&v[0], &v[1], &v[2]});
  }
  int status = 0;
  if (!columns.empty()) {
    if (absl::Status s = WritePng(Montage(columns, 4), (lab->out / "montage.png").string());
        !s.ok()) {
      std::fprintf(stderr, "worldgen-lab: %s\n", std::string(s.message()).c_str());
      status = 1;
    }
  }
  if (absl::GetFlag(FLAGS_json)) {
    if (absl::Status s = PrintJson(*lab, rows); !s.ok()) {
      std::fprintf(stderr, "worldgen-lab: %s\n", std::string(s.message()).c_str());
      return 1;
    }
  } else {
    PrintTable(*lab, rows);
  }
  // A method this world's parameters do not suit is reported in its row; failures fail the run,
  // and so does a run in which no method ran (it measured nothing).
  for (const Row& row : rows) status = row.failed ? 1 : status;
  const auto ran =
      std::find_if(rows.begin(), rows.end(), [](const Row& r) { return r.error.empty(); });
  if (ran == rows.end()) {
    std::fprintf(stderr, "worldgen-lab: no method ran%s%s\n", rows.empty() ? "" : ": ",
                 rows.empty() ? " (none was asked for)" : rows.front().error.c_str());
    return 1;
  }
  return status;
}

}  // namespace
}  // namespace worldgen::lab

int main(int argc, char** argv) {
  // A region the flags allow can still need more memory than the machine has (every method keeps
  // its full picture): say so instead of dying on an uncaught exception.
  try {
    return worldgen::lab::Main(argc, argv);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr,
                 "worldgen-lab: out of memory: the region's pictures do not fit this machine; "
                 "ask for a smaller --region or fewer --methods\n");
    return 1;
  }
}
