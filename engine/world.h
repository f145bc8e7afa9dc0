// World: a validated WorldSpec turned into something that answers blending queries.
//
//   auto world = World::Create(DefaultWorldSpec());          // StatusOr<shared_ptr<const World>>
//   auto chunk = (*world)->BlendChunk(3, -2, 16, {.heights = true}, &cache);
//   auto point = (*world)->BlendPoint(100.5, -7.25, {}, &cache);
//
// Determinism: for one spec, every float returned is bit-identical whether it comes from BlendPoint
// or from any chunk size containing the column, on any thread, in any order, with or without a
// cache.
//
// Thread safety: a World is immutable after Create; all const methods are safe for concurrent use.
#ifndef WORLDGEN_ENGINE_WORLD_H_
#define WORLDGEN_ENGINE_WORLD_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/biome_sample_cache.h"
#include "engine/biome_source.h"
#include "engine/blender.h"
#include "engine/chunk.h"
#include "engine/coast.h"
#include "engine/height_field.h"
#include "engine/interpolated_heights.h"
#include "engine/volume_blender.h"
#include "engine/world_spec.h"

namespace worldgen {

class World {
 public:
  // Validates `spec` (see ValidateWorldSpec) and builds the biome source, height field (and, for
  // HeightMode::kChunkInterpolated, the chunk height interpolation; for kCoastal, the coast) and
  // the blender the spec names (MakeBlender).
  static absl::StatusOr<std::shared_ptr<const World>> Create(WorldSpec spec);

  // The spec, with biomes sorted by id.
  const WorldSpec& spec() const { return spec_; }
  // Process-unique id of this World object; keys its tiles in a shared BiomeSampleCache.
  uint64_t uid() const { return uid_; }

  // OK, or INVALID_ARGUMENT if size is outside [1, kMaxChunkSize] or any column of the chunk lies
  // outside [-kMaxWorldCoordinate, kMaxWorldCoordinate].
  static absl::Status ValidateChunk(int64_t chunk_x, int64_t chunk_z, int size);
  // OK, or INVALID_ARGUMENT if x or z is not finite or outside the world bounds.
  static absl::Status ValidatePoint(double x, double z);

  // Blends chunk (chunk_x, chunk_z) of size x size columns. `cache` may be null. INVALID_ARGUMENT
  // as ValidateChunk, or as ValidateSplatSize (engine/splat.h) if options.splat.
  //
  // A chunk wider than kChunkPiece and a multiple of it is blended in square pieces of that width,
  // one after another, and put together: a whole big chunk's working set (its heights' noise
  // batches above all) outgrows the CPU's caches: 69.6 against 36.3 ns per column at 256 with
  // heights (bench/blend_bench.cc BM_BigChunk, AMD EPYC). The answer is the same bit for bit,
  // since the weights at a column do not depend on the block around it (the blenders' contract),
  // but for single_biome: for such a chunk it is true exactly when its one layer weighs 1.0f at
  // every column, where a chunk blended whole may leave it false (other biomes' samples were near
  // but reached no column). The wire encoding reads it that way for every chunk.
  absl::StatusOr<ChunkBlend> BlendChunk(int64_t chunk_x, int64_t chunk_z, int size,
                                        const BlendOptions& options,
                                        BiomeSampleCache* cache = nullptr) const;

  // The width of the pieces BlendChunk blends a big chunk in.
  static constexpr int kChunkPiece = 32;
  // BlendChunk, calling `between_pieces` after every piece but the last (never for a chunk blended
  // whole). The engine holds nothing of its own there (no lock, no cache entry, no thread-local
  // state in use), so it may blend other work on this thread: a server runs short calls' work
  // there instead of making it wait for a long chunk. Errors before any piece.
  absl::StatusOr<ChunkBlend> BlendChunkInPieces(int64_t chunk_x, int64_t chunk_z, int size,
                                                const BlendOptions& options,
                                                BiomeSampleCache* cache,
                                                absl::FunctionRef<void()> between_pieces) const;

  // Blends the single point (x, z), directly from the lattice (no chunk). `cache` may be null.
  absl::StatusOr<PointBlend> BlendPoint(double x, double z, const BlendOptions& options,
                                        BiomeSampleCache* cache = nullptr) const;

  // The unblended biome id the biome source returns at (x, z).
  uint32_t SourceBiomeAt(double x, double z) const;

  const Blender& blender() const { return *blender_; }
  const BiomeSource& source() const { return *source_; }

  // 3D (issue 25). Any world answers in 3D; a 2D world's weights are the same at every y (its
  // column's), a cave world's blend its cave biomes in 3D over its surface (volume_blender.h).
  //
  // OK, or INVALID_ARGUMENT whose message begins with the offending field: min_y and max_y
  // multiples of kSectionHeight within [-kMaxWorldY, kMaxWorldY], min_y < max_y; cell_size a power
  // of two dividing kSectionHeight and `size`; at most kMaxVolumeCells cells.
  static absl::Status ValidateVolume(int size, int64_t min_y, int64_t max_y, int cell);
  // The sections of chunk (chunk_x, chunk_z) of `size` columns from min_y up to max_y (exclusive)
  // in cells of `cell` blocks (chunk.h, SectionBlend). options.dominant_biome and source_biome are
  // per cell; heights and splat are per column, so INVALID_ARGUMENT here (ask BlendChunk). The 2D
  // weights of the cells' columns are blended once for all sections (one chunk blend).
  absl::StatusOr<VolumeBlend> BlendVolume(int64_t chunk_x, int64_t chunk_z, int size, int64_t min_y,
                                          int64_t max_y, int cell, const BlendOptions& options,
                                          BiomeSampleCache* cache = nullptr) const;
  // A cave world's sections are blended in pieces of whole sections, as many as this many cells
  // hold but at least one, each from its own gather: two sections of a 16-wide chunk at cell 1, a
  // whole chunk at cell 4. The answer is the same bit for bit (a cell's weights do not depend on
  // the block around it); smaller pieces cost more gathers (one section: 4-7% more at cell 1,
  // uncached; 8,192 cells: 1-3%; BM_VolumeColumn, AMD EPYC).
  static constexpr int64_t kVolumePieceCells = 8192;
  // BlendVolume, calling `between_pieces` after every piece of a cave world's sections but the
  // last, where, as in BlendChunkInPieces, the engine holds nothing of its own. Errors before any
  // piece.
  absl::StatusOr<VolumeBlend> BlendVolumeInPieces(int64_t chunk_x, int64_t chunk_z, int size,
                                                  int64_t min_y, int64_t max_y, int cell,
                                                  const BlendOptions& options,
                                                  BiomeSampleCache* cache,
                                                  absl::FunctionRef<void()> between_pieces) const;
  // The blend at (x, y, z): bit for bit the cell of BlendVolume whose lowest corner it is. Height
  // is the column's (as BlendPoint(x, z)); source_biome the 3D map's.
  absl::StatusOr<PointBlend> BlendPoint(double x, double y, double z, const BlendOptions& options,
                                        BiomeSampleCache* cache = nullptr) const;
  // The 3D map's unblended biome id at (x, y, z): the 2D map's at (x, z) for a 2D world.
  uint32_t SourceBiomeAt(double x, double y, double z) const;

  // The 3D map and its blender of a world with cave biomes (BiomeSpec::cave); null for a 2D world.
  const VolumeSource* volume_source() const { return volume_source_.get(); }
  const ScatteredVolumeBlender* volume_blender() const { return volume_blender_.get(); }

 private:
  // What BlendBlock blends of a block of columns: the blender's layers (dense biome indices) and,
  // as options ask, heights and source biomes, in ColumnIndex layout.
  struct Block {
    bool single_biome = false;
    std::vector<IndexedLayer> layers;
    std::vector<float> heights;
    std::vector<uint32_t> source_biome;
  };

  World() = default;
  // ValidateChunk, and ValidateSplatSize when options.splat.
  absl::Status ValidateChunkRequest(int64_t chunk_x, int64_t chunk_z, int size,
                                    const BlendOptions& options) const;
  // The size x size columns whose lowest corner is (x0, z0).
  void BlendBlock(int64_t x0, int64_t z0, int size, const BlendOptions& options,
                  BiomeSampleCache* cache, Block* out) const;
  // The chunk of a blended block: its splat textures and dominant biomes, its layers by biome id.
  ChunkBlend FinishChunk(int64_t chunk_x, int64_t chunk_z, int size, const BlendOptions& options,
                         Block block) const;
  WorldSpec spec_;
  uint64_t uid_ = 0;
  std::unique_ptr<BiomeSource> source_;
  std::unique_ptr<HeightField> heights_;
  // Set for HeightMode::kChunkInterpolated only.
  std::unique_ptr<ChunkInterpolatedHeights> interpolated_heights_;
  // Set for HeightMode::kCoastal only.
  std::unique_ptr<CoastalHeights> coast_;
  std::unique_ptr<Blender> blender_;
  // Set for worlds with cave biomes only.
  std::unique_ptr<CaveBiomeSource> volume_source_;
  std::unique_ptr<ScatteredVolumeBlender> volume_blender_;
};

// The SIMD variants the engine's vector code runs in this process, e.g. "kernel avx512, volume
// avx512, noise avx512" (the dispatchers' choice, or the one WORLDGEN_SIMD_VARIANT forces;
// engine/simd.h).
std::string SimdVariantsInUse();
// INVALID_ARGUMENT saying why if WORLDGEN_SIMD_VARIANT forces a variant the kernel or the noise
// cannot run here (the dispatchers would silently ignore it); OK otherwise.
absl::Status CheckForcedSimdVariant();

}  // namespace worldgen

#endif  // WORLDGEN_ENGINE_WORLD_H_
