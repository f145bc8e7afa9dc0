#include "engine/world.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "engine/hash.h"
#include "engine/jittered_bcc_lattice.h"
#include "engine/jittered_lattice.h"
#include "engine/kernel_row.h"
#include "engine/noise.h"
#include "engine/simd.h"
#include "engine/splat.h"

namespace worldgen {
namespace {

std::atomic<uint64_t> next_world_uid{1};

// Stream id of the 3D lattice's jitter, derived from the world seed.
constexpr uint64_t kVolumeLatticeStream = 0x3d1a;

bool WithinWorld(double v) { return std::isfinite(v) && std::fabs(v) <= kMaxWorldCoordinate; }

// The arg-max biome id of each of `n` columns or cells of `layers` (ascending id; ties to the lower
// id): a chunk's and a section's dominant biomes.
void DominantBiomes(const std::vector<BiomeLayer>& layers, size_t n, std::vector<uint32_t>* out) {
  out->resize(n);
  if (layers.empty()) return;
  // Layer by layer across the columns (vectorized), each column keeping the first layer of its
  // largest weight: the order of a per-column scan over the layers with a strict comparison.
  thread_local std::vector<float> best_weight;
  best_weight.assign(layers[0].weights.begin(),
                     layers[0].weights.begin() + static_cast<ptrdiff_t>(n));
  uint32_t* best = out->data();
  std::fill(best, best + n, layers[0].biome_id);
  for (size_t k = 1; k < layers.size(); ++k) {
    const float* w = layers[k].weights.data();
    const uint32_t id = layers[k].biome_id;
    float* bw = best_weight.data();
    for (size_t at = 0; at < n; ++at) {
      const bool larger = w[at] > bw[at];
      bw[at] = larger ? w[at] : bw[at];
      best[at] = larger ? id : best[at];
    }
  }
}

}  // namespace

absl::StatusOr<std::shared_ptr<const World>> World::Create(WorldSpec spec) {
  if (absl::Status s = ValidateWorldSpec(spec); !s.ok()) return s;
  std::sort(spec.biomes.begin(), spec.biomes.end(),
            [](const BiomeSpec& a, const BiomeSpec& b) { return a.id < b.id; });
  std::shared_ptr<World> world(new World());
  world->spec_ = std::move(spec);
  world->uid_ = next_world_uid.fetch_add(1, std::memory_order_relaxed);
  world->source_ = MakeBiomeSource(world->spec_);
  world->heights_ = std::make_unique<HeightField>(world->spec_);
  if (world->spec_.heights.mode == HeightMode::kChunkInterpolated) {
    world->interpolated_heights_ = std::make_unique<ChunkInterpolatedHeights>(
        world->spec_.heights, *world->source_, *world->heights_);
  }
  if (world->spec_.heights.mode == HeightMode::kCoastal) {
    world->coast_ = std::make_unique<CoastalHeights>(world->spec_, *world->source_, world->uid_);
  }
  world->blender_ = MakeBlender(world->spec_, *world->source_, world->uid_);
  const auto& biomes = world->spec_.biomes;
  if (std::any_of(biomes.begin(), biomes.end(), [](const BiomeSpec& b) { return b.cave; })) {
    world->volume_source_ = std::make_unique<CaveBiomeSource>(world->spec_, *world->source_);
    world->volume_blender_ = std::make_unique<ScatteredVolumeBlender>(
        DeriveSeed(world->spec_.seed, kVolumeLatticeStream), world->spec_.caves.blending,
        *world->volume_source_, world->blender_.get(), CaveFlags(world->spec_), world->uid_);
  }
  return std::shared_ptr<const World>(std::move(world));
}

absl::Status World::ValidateChunk(int64_t chunk_x, int64_t chunk_z, int size) {
  if (size < 1 || size > kMaxChunkSize) {
    return absl::InvalidArgumentError(
        absl::StrFormat("chunk size %d is outside [1, %d]", size, kMaxChunkSize));
  }
  // Chunk coordinates so large that cx * size overflows are rejected before multiplying.
  const int64_t limit = static_cast<int64_t>(kMaxWorldCoordinate) / size + 1;
  for (auto [name, c] : {std::pair{"x", chunk_x}, std::pair{"z", chunk_z}}) {
    bool inside = c >= -limit && c <= limit &&
                  std::fabs(static_cast<double>(c * size)) <= kMaxWorldCoordinate &&
                  std::fabs(static_cast<double>(c * size + size - 1)) <= kMaxWorldCoordinate;
    if (!inside) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "chunk %s = %d (size %d) has columns outside the world bounds [-%.0f, %.0f]", name, c,
          size, kMaxWorldCoordinate, kMaxWorldCoordinate));
    }
  }
  return absl::OkStatus();
}

absl::Status World::ValidatePoint(double x, double z) {
  for (auto [name, v] : {std::pair{"x", x}, std::pair{"z", z}}) {
    if (!std::isfinite(v)) {
      return absl::InvalidArgumentError(absl::StrFormat("point %s = %g is not finite", name, v));
    }
    if (!WithinWorld(v)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("point %s = %g is outside the world bounds [-%.0f, %.0f]", name, v,
                          kMaxWorldCoordinate, kMaxWorldCoordinate));
    }
  }
  return absl::OkStatus();
}

absl::Status World::ValidateChunkRequest(int64_t chunk_x, int64_t chunk_z, int size,
                                         const BlendOptions& options) const {
  if (absl::Status s = ValidateChunk(chunk_x, chunk_z, size); !s.ok()) return s;
  if (!options.splat) return absl::OkStatus();
  return ValidateSplatSize(static_cast<int>(spec_.biomes.size()), size);
}

absl::StatusOr<ChunkBlend> World::BlendChunk(int64_t chunk_x, int64_t chunk_z, int size,
                                             const BlendOptions& options,
                                             BiomeSampleCache* cache) const {
  return BlendChunkInPieces(chunk_x, chunk_z, size, options, cache, [] {});
}

absl::StatusOr<ChunkBlend> World::BlendChunkInPieces(
    int64_t chunk_x, int64_t chunk_z, int size, const BlendOptions& options,
    BiomeSampleCache* cache, absl::FunctionRef<void()> between_pieces) const {
  if (absl::Status s = ValidateChunkRequest(chunk_x, chunk_z, size, options); !s.ok()) return s;
  if (size <= kChunkPiece || size % kChunkPiece != 0) {  // Blended whole.
    Block block;
    BlendBlock(chunk_x * size, chunk_z * size, size, options, cache, &block);
    return FinishChunk(chunk_x, chunk_z, size, options, std::move(block));
  }
  const size_t columns = static_cast<size_t>(size) * static_cast<size_t>(size);
  Block whole;
  if (options.heights) whole.heights.assign(columns, 0.0f);
  if (options.source_biome) whole.source_biome.assign(columns, 0);
  const int pieces = size / kChunkPiece;
  for (int pz = 0; pz < pieces; ++pz) {
    for (int px = 0; px < pieces; ++px) {
      const int lx0 = px * kChunkPiece, lz0 = pz * kChunkPiece;
      Block piece;
      BlendBlock(chunk_x * size + lx0, chunk_z * size + lz0, kChunkPiece, options, cache, &piece);
      // Row by row into the whole chunk: piece row r is chunk row lz0 + r from column lx0.
      auto place = [&](const auto& from, auto& to) {
        for (int r = 0; r < kChunkPiece; ++r) {
          std::copy_n(from.begin() + static_cast<ptrdiff_t>(r) * kChunkPiece, kChunkPiece,
                      to.begin() + ColumnIndex(size, lx0, lz0 + r));
        }
      };
      for (const IndexedLayer& layer : piece.layers) {
        // The whole chunk's layers stay in ascending biome index, as BlendColumns returns them.
        auto at =
            std::lower_bound(whole.layers.begin(), whole.layers.end(), layer.biome,
                             [](const IndexedLayer& l, int biome) { return l.biome < biome; });
        if (at == whole.layers.end() || at->biome != layer.biome) {
          at = whole.layers.insert(at, IndexedLayer{layer.biome, std::vector<float>(columns)});
        }
        place(layer.weights, at->weights);
      }
      if (options.heights) place(piece.heights, whole.heights);
      if (options.source_biome) place(piece.source_biome, whole.source_biome);
      if (px + 1 < pieces || pz + 1 < pieces) between_pieces();
    }
  }
  whole.single_biome = whole.layers.size() == 1 &&
                       std::all_of(whole.layers[0].weights.begin(), whole.layers[0].weights.end(),
                                   [](float w) { return w == 1.0f; });
  return FinishChunk(chunk_x, chunk_z, size, options, std::move(whole));
}

void World::BlendBlock(int64_t x0, int64_t z0, int size, const BlendOptions& options,
                       BiomeSampleCache* cache, Block* out) const {
  std::vector<IndexedLayer>& layers = out->layers;
  out->single_biome = blender_->BlendColumns(x0, z0, size, cache, &layers);
  const size_t columns = static_cast<size_t>(size) * static_cast<size_t>(size);
  if (options.heights && interpolated_heights_ != nullptr) {
    interpolated_heights_->Heights(x0, z0, size, &out->heights);
  } else if (options.heights) {
    // Per column, h = 0.0, then h += w * height for each layer with w != 0, layers in ascending id
    // order: BlendPoint's sum, operation for operation. It runs layer by layer so that each layer's
    // heights come from one batch (FractalNoise2DBatch) over exactly the columns it reaches, listed
    // in row order so neighbouring columns share noise gradients. Coastal heights gather their
    // sums (CoastalHeights::Add) in the same order instead.
    const bool coastal = coast_ != nullptr;
    std::vector<double> h(coastal ? 0 : columns, 0.0), xs(columns), zs(columns),
        layer_height(columns);
    std::vector<CoastSums> coast_sums(coastal ? columns : 0);
    std::vector<uint32_t> reached(columns);
    for (size_t k = 0; k < layers.size(); ++k) {
      const std::vector<float>& w = layers[k].weights;
      size_t n = 0;
      for (int lz = 0; lz < size; ++lz) {
        for (int lx = 0; lx < size; ++lx) {
          const size_t col = static_cast<size_t>(ColumnIndex(size, lx, lz));
          // Written always, kept only if w != 0: no branch per column.
          reached[n] = static_cast<uint32_t>(col);
          xs[n] = static_cast<double>(x0 + lx);
          zs[n] = static_cast<double>(z0 + lz);
          n += w[col] != 0.0f;
        }
      }
      heights_->BiomeHeights(layers[k].biome, xs.data(), zs.data(), n, layer_height.data());
      if (coastal) {
        for (size_t t = 0; t < n; ++t) {
          const size_t col = reached[t];
          coast_->Add(layers[k].biome, static_cast<double>(w[col]), layer_height[t],
                      &coast_sums[col]);
        }
      } else {
        for (size_t t = 0; t < n; ++t) {
          const size_t col = reached[t];
          h[col] += static_cast<double>(w[col]) * layer_height[t];
        }
      }
    }
    out->heights.resize(columns);
    if (coastal) {
      std::vector<double> distance;
      coast_->SignedDistances(x0, z0, size, cache, &distance);
      for (size_t col = 0; col < columns; ++col) {
        out->heights[col] = coast_->Height(coast_sums[col], distance[col]);
      }
    } else {
      for (size_t col = 0; col < columns; ++col) out->heights[col] = static_cast<float>(h[col]);
    }
  }
  if (options.source_biome) {
    out->source_biome.resize(columns);
    for (int lz = 0; lz < size; ++lz) {
      for (int lx = 0; lx < size; ++lx) {
        out->source_biome[static_cast<size_t>(ColumnIndex(size, lx, lz))] =
            SourceBiomeAt(static_cast<double>(x0 + lx), static_cast<double>(z0 + lz));
      }
    }
  }
}

ChunkBlend World::FinishChunk(int64_t chunk_x, int64_t chunk_z, int size,
                              const BlendOptions& options, Block block) const {
  ChunkBlend chunk;
  chunk.chunk_x = chunk_x;
  chunk.chunk_z = chunk_z;
  chunk.size = size;
  chunk.single_biome = block.single_biome;
  if (options.splat) {
    chunk.splat_textures = SplatTextures(block.layers, static_cast<int>(spec_.biomes.size()), size);
  }
  chunk.layers.reserve(block.layers.size());
  for (IndexedLayer& layer : block.layers) {
    chunk.layers.push_back(
        {spec_.biomes[static_cast<size_t>(layer.biome)].id, std::move(layer.weights)});
  }
  chunk.heights = std::move(block.heights);
  chunk.source_biome = std::move(block.source_biome);
  const size_t columns = static_cast<size_t>(size) * static_cast<size_t>(size);
  if (options.dominant_biome) DominantBiomes(chunk.layers, columns, &chunk.dominant_biome);
  return chunk;
}

absl::StatusOr<PointBlend> World::BlendPoint(double x, double z, const BlendOptions& options,
                                             BiomeSampleCache* cache) const {
  if (absl::Status s = ValidatePoint(x, z); !s.ok()) return s;
  thread_local std::vector<std::pair<int, float>> weights;  // Reused: no allocation per point.
  blender_->BlendPoint(x, z, cache, &weights);
  PointBlend point;
  point.weights.reserve(weights.size());
  size_t best = 0;
  double h = 0.0;
  CoastSums coast_sums;
  for (size_t k = 0; k < weights.size(); ++k) {
    const auto [biome, w] = weights[k];
    point.weights.push_back({spec_.biomes[static_cast<size_t>(biome)].id, w});
    if (w > weights[best].second) best = k;
    if (options.heights && interpolated_heights_ == nullptr) {
      const double biome_height = heights_->BiomeHeight(biome, x, z);
      if (coast_ != nullptr) {
        coast_->Add(biome, static_cast<double>(w), biome_height, &coast_sums);
      } else {
        h += static_cast<double>(w) * biome_height;
      }
    }
  }
  if (!point.weights.empty()) point.dominant_biome = point.weights[best].biome_id;
  if (options.heights) {
    if (interpolated_heights_ != nullptr) {
      point.height = interpolated_heights_->HeightAt(x, z);
    } else if (coast_ != nullptr) {
      point.height = coast_->Height(coast_sums, coast_->SignedDistanceAt(x, z, cache));
    } else {
      point.height = static_cast<float>(h);
    }
  }
  if (options.source_biome) point.source_biome = SourceBiomeAt(x, z);
  return point;
}

uint32_t World::SourceBiomeAt(double x, double z) const {
  return spec_.biomes[static_cast<size_t>(source_->BiomeIndexAt(x, z))].id;
}

absl::Status World::ValidateVolume(int size, int64_t min_y, int64_t max_y, int cell) {
  for (auto [name, y] : {std::pair{"min_y", min_y}, std::pair{"max_y", max_y}}) {
    if (y < -kMaxWorldY || y > kMaxWorldY) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s = %d is outside [-%d, %d]", name, y, kMaxWorldY, kMaxWorldY));
    }
    if (y % kSectionHeight != 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s = %d is not a multiple of the section height %d", name, y, kSectionHeight));
    }
  }
  if (min_y >= max_y) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "min_y = %d is not below max_y = %d: the range holds no section", min_y, max_y));
  }
  if (cell < 1 || kSectionHeight % cell != 0 || (cell & (cell - 1)) != 0 || size % cell != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "cell_size = %d is not a power of two dividing the section height %d and the chunk size "
        "%d",
        cell, kSectionHeight, size));
  }
  const int64_t side = size / cell;
  const int64_t cells = side * side * ((max_y - min_y) / cell);
  if (cells > kMaxVolumeCells) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "max_y = %d: the range [%d, %d) in cells of %d blocks of a chunk of size %d holds %d "
        "cells; the limit is %d per chunk (a shorter range or larger cells)",
        max_y, min_y, max_y, cell, size, cells, kMaxVolumeCells));
  }
  return absl::OkStatus();
}

absl::StatusOr<VolumeBlend> World::BlendVolume(int64_t chunk_x, int64_t chunk_z, int size,
                                               int64_t min_y, int64_t max_y, int cell,
                                               const BlendOptions& options,
                                               BiomeSampleCache* cache) const {
  return BlendVolumeInPieces(chunk_x, chunk_z, size, min_y, max_y, cell, options, cache, [] {});
}

absl::StatusOr<VolumeBlend> World::BlendVolumeInPieces(
    int64_t chunk_x, int64_t chunk_z, int size, int64_t min_y, int64_t max_y, int cell,
    const BlendOptions& options, BiomeSampleCache* cache,
    absl::FunctionRef<void()> between_pieces) const {
  if (absl::Status s = ValidateChunk(chunk_x, chunk_z, size); !s.ok()) return s;
  if (absl::Status s = ValidateVolume(size, min_y, max_y, cell); !s.ok()) return s;
  if (options.heights || options.splat) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: heights and splat textures are per column; ask for them without a vertical range",
        options.heights ? "include_heights" : "include_splat"));
  }
  const int m = size / cell, ny = kSectionHeight / cell;
  const size_t column_count = static_cast<size_t>(m) * static_cast<size_t>(m);
  const size_t cells = column_count * static_cast<size_t>(ny);
  const int64_t x0 = chunk_x * size, z0 = chunk_z * size;
  // The 2D weights of the cells' columns, blended once for every section. Their buffer is this
  // thread's, taken for the call and handed back: `between_pieces` may blend another volume here.
  thread_local std::vector<std::vector<std::pair<int, float>>> reused;
  std::vector<std::vector<std::pair<int, float>>> columns;
  columns.swap(reused);
  blender_->BlendColumnGrid(x0, z0, m, m, cell, cache, &columns);
  VolumeBlend volume;
  volume.chunk_x = chunk_x;
  volume.chunk_z = chunk_z;
  volume.size = size;
  volume.cell = cell;
  const int sections = static_cast<int>((max_y - min_y) / kSectionHeight);
  // A cave world blends its sections from one gather (ScatteredVolumeBlender::BlendStack); a 2D
  // world's sections are all its columns' weights stacked, the same layers for every section.
  std::vector<std::vector<IndexedLayer>> stack;
  std::vector<char> stack_single;
  std::vector<IndexedLayer> columns_stacked;
  bool columns_single = false;
  if (volume_blender_ != nullptr) {
    // In pieces of whole sections, as many as kVolumePieceCells cells hold (at least one), each
    // piece from its own gather.
    const int per_piece =
        static_cast<int>(std::max<int64_t>(1, kVolumePieceCells / static_cast<int64_t>(cells)));
    stack.resize(static_cast<size_t>(sections));
    stack_single.resize(static_cast<size_t>(sections));
    std::vector<std::vector<IndexedLayer>> piece;
    std::vector<char> piece_single;
    for (int t0 = 0; t0 < sections; t0 += per_piece) {
      if (t0 > 0) between_pieces();
      const int blocks = std::min(per_piece, sections - t0);
      volume_blender_->BlendStack(x0, min_y + int64_t{kSectionHeight} * t0, z0, m, ny, m, cell,
                                  blocks, columns, &piece, &piece_single, cache);
      for (int t = 0; t < blocks; ++t) {
        stack[static_cast<size_t>(t0 + t)] = std::move(piece[static_cast<size_t>(t)]);
        stack_single[static_cast<size_t>(t0 + t)] = piece_single[static_cast<size_t>(t)];
      }
    }
  } else {
    StackColumns(columns, static_cast<size_t>(ny), static_cast<int>(spec_.biomes.size()),
                 &columns_stacked);
    columns_single = OneBiomeColumns(columns) >= 0;
  }
  volume.sections.reserve(static_cast<size_t>(sections));
  for (int t = 0; t < sections; ++t) {
    const int64_t y = min_y + int64_t{kSectionHeight} * t;
    SectionBlend& section = volume.sections.emplace_back();
    section.min_y = y;
    // A cave world's section owns its stack's layers; a 2D world's all copy the columns' stack.
    std::vector<IndexedLayer>& layers =
        volume_blender_ != nullptr ? stack[static_cast<size_t>(t)] : columns_stacked;
    section.single_biome =
        volume_blender_ != nullptr ? stack_single[static_cast<size_t>(t)] != 0 : columns_single;
    section.layers.reserve(layers.size());
    for (IndexedLayer& layer : layers) {
      section.layers.push_back(
          {spec_.biomes[static_cast<size_t>(layer.biome)].id,
           volume_blender_ != nullptr ? std::move(layer.weights) : layer.weights});
    }
    if (options.dominant_biome) DominantBiomes(section.layers, cells, &section.dominant_biome);
    if (options.source_biome) {
      section.source_biome.resize(cells);
      for (int b = 0; b < ny; ++b) {
        for (int d = 0; d < m; ++d) {
          for (int a = 0; a < m; ++a) {
            section.source_biome[(static_cast<size_t>(b) * m + d) * m + a] = SourceBiomeAt(
                static_cast<double>(x0 + int64_t{cell} * a), static_cast<double>(y + cell * b),
                static_cast<double>(z0 + int64_t{cell} * d));
          }
        }
      }
    }
  }
  columns.swap(reused);
  return volume;
}

absl::StatusOr<PointBlend> World::BlendPoint(double x, double y, double z,
                                             const BlendOptions& options,
                                             BiomeSampleCache* cache) const {
  if (!std::isfinite(y) || std::fabs(y) > static_cast<double>(kMaxWorldY)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("point y = %g is not finite or outside the world's y bounds [-%d, %d]", y,
                        kMaxWorldY, kMaxWorldY));
  }
  BlendOptions column_options = options;
  column_options.source_biome = false;
  absl::StatusOr<PointBlend> point = BlendPoint(x, z, column_options, cache);
  if (!point.ok()) return point;
  if (volume_blender_ != nullptr) {
    thread_local std::vector<std::pair<int, float>> weights;
    volume_blender_->BlendPoint(x, y, z, &weights, cache);
    point->weights.clear();
    size_t best = 0;
    for (size_t k = 0; k < weights.size(); ++k) {
      point->weights.push_back(
          {spec_.biomes[static_cast<size_t>(weights[k].first)].id, weights[k].second});
      if (weights[k].second > weights[best].second) best = k;
    }
    if (!point->weights.empty()) point->dominant_biome = point->weights[best].biome_id;
  }
  if (options.source_biome) point->source_biome = SourceBiomeAt(x, y, z);
  return point;
}

uint32_t World::SourceBiomeAt(double x, double y, double z) const {
  if (volume_source_ == nullptr) return SourceBiomeAt(x, z);
  return spec_.biomes[static_cast<size_t>(volume_source_->BiomeIndexAt(x, y, z))].id;
}

std::string SimdVariantsInUse() {
  return absl::StrCat("kernel ", DispatchedKernelVariant(), ", volume ",
                      DispatchedVolumeKernelVariant(), ", noise ", DispatchedNoiseBatchVariant(),
                      ", lattice ", DispatchedLatticeRowVariant(), ", bcc lattice ",
                      DispatchedBccRowVariant());
}

absl::Status CheckForcedSimdVariant() {
  for (const std::string& error : {simd::ForcedVariantError(KernelVariants()),
                                   simd::ForcedVariantError(VolumeKernelVariants()),
                                   simd::ForcedVariantError(NoiseBatchVariants()),
                                   simd::ForcedVariantError(LatticeRowVariants()),
                                   simd::ForcedVariantError(BccRowVariants())}) {
    if (!error.empty()) return absl::InvalidArgumentError(error);
  }
  return absl::OkStatus();
}

}  // namespace worldgen
