// worldgen-demo: blends one chunk of the embedded default world and prints its biomes and weights.
// Usage: worldgen-demo [chunk_x chunk_z [size]]
#include <cstdio>
#include <cstdlib>

#include "engine/world.h"

int main(int argc, char** argv) {
  int64_t cx = argc > 2 ? std::atoll(argv[1]) : 20;
  int64_t cz = argc > 2 ? std::atoll(argv[2]) : -3;
  int size = argc > 3 ? std::atoi(argv[3]) : 16;
  auto world = worldgen::World::Create(worldgen::DefaultWorldSpec());
  if (!world.ok()) {
    std::fprintf(stderr, "worldgen-demo: %s\n", world.status().ToString().c_str());
    return 1;
  }
  worldgen::BlendOptions options;
  options.heights = true;
  options.dominant_biome = true;
  auto chunk = (*world)->BlendChunk(cx, cz, size, options);
  if (!chunk.ok()) {
    std::fprintf(stderr, "worldgen-demo: %s\n", chunk.status().ToString().c_str());
    return 2;
  }
  const auto& spec = (*world)->spec();
  std::printf("world \"%s\" seed %llu: chunk (%lld, %lld), %dx%d columns%s\n", spec.name.c_str(),
              static_cast<unsigned long long>(spec.seed), static_cast<long long>(cx),
              static_cast<long long>(cz), size, size, chunk->single_biome ? ", single biome" : "");
  for (const auto& layer : chunk->layers) {
    const char* name = "?";
    for (const auto& b : spec.biomes) {
      if (b.id == layer.biome_id) name = b.name.c_str();
    }
    float lo = 1.0f, hi = 0.0f;
    for (float w : layer.weights) {
      lo = w < lo ? w : lo;
      hi = w > hi ? w : hi;
    }
    std::printf("  biome %2u %-13s weight min %.4f max %.4f, corner (0,0) %.4f\n", layer.biome_id,
                name, lo, hi, layer.weights[0]);
  }
  std::printf("dominant biome per column (rows z, columns x):\n");
  for (int lz = 0; lz < size; ++lz) {
    std::printf("  ");
    for (int lx = 0; lx < size; ++lx) {
      std::printf("%2u ", chunk->dominant_biome[static_cast<size_t>(worldgen::ColumnIndex(size, lx, lz))]);
    }
    std::printf("\n");
  }
  std::printf("height at (0,0): %.3f, at (%d,%d): %.3f\n", chunk->heights[0], size - 1, size - 1,
              chunk->heights.back());
  return 0;
}
