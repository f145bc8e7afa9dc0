// ChunkInterpolatedHeights: seed 004's height interpolation between chunks
// (HeightMode::kChunkInterpolated).
//
// Height chunk (i, j) covers [i S, i S + S) x [j S, j S + S) blocks, S = HeightSpec::chunk_size;
// its centre is ((i + 1/2) S, (j + 1/2) S) and its biome is the source's biome there, so its height
// function is that biome's (HeightField::BiomeHeight). The height of a column p is
//   H(p) = Σ_C w_C(p) h_C(p) / Σ_C w_C(p),   w_C(p) = max(0, reach S − |p − centre_C|_1)^4,
// summed in double over chunks in ascending (j, i) order, rounded to float once. Every column has a
// chunk centre within S in manhattan distance, so with reach > 1 the total weight is at least
// ((reach − 1) S)^4 > 0 and the normalized weights change by a bounded amount per block.
//
// Bit-exactness: both paths visit the chunks with non-zero weight in the same order with the same
// operations, and HeightField::BiomeHeights equals BiomeHeight bit for bit, so Heights() over any
// block equals HeightAt() at each of its columns.
//
// Thread safety: immutable after construction; safe for concurrent use.
#ifndef WORLDGEN_ENGINE_INTERPOLATED_HEIGHTS_H_
#define WORLDGEN_ENGINE_INTERPOLATED_HEIGHTS_H_

#include <cstdint>
#include <vector>

#include "engine/biome_source.h"
#include "engine/height_field.h"
#include "engine/world_spec.h"

namespace worldgen {

// One height chunk's part in a column's height.
struct HeightChunkWeight {
  int64_t i = 0, j = 0;  // Chunk index.
  double weight = 0.0;   // w_C, not normalized.
};

// The chunks with non-zero weight at (x, z), ascending (j, i), for chunks of `chunk_size` blocks
// and a weight reach of `reach` chunk sizes (any reach > 0: this is the bare formula, also for
// reach 1).
void HeightChunkWeights(double x, double z, int chunk_size, double reach,
                        std::vector<HeightChunkWeight>* out);

class ChunkInterpolatedHeights {
 public:
  // `spec` valid with biomes sorted by id; `source` and `heights` outlive this object.
  ChunkInterpolatedHeights(const HeightSpec& spec, const BiomeSource& source,
                           const HeightField& heights);

  // Dense biome index of height chunk (i, j): the source's biome at its centre.
  int ChunkBiome(int64_t i, int64_t j) const;

  // H at (x, z).
  float HeightAt(double x, double z) const;

  // H at the size x size integer columns from (x0, z0), ColumnIndex layout; out gets size * size
  // values.
  void Heights(int64_t x0, int64_t z0, int size, std::vector<float>* out) const;

 private:
  const BiomeSource& source_;
  const HeightField& heights_;
  int chunk_size_;
  double reach_;
};

}  // namespace worldgen

#endif  // WORLDGEN_ENGINE_INTERPOLATED_HEIGHTS_H_
