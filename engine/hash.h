// Integer hashing: the only source of randomness in the engine.
//
// Everything random in a world (lattice jitter, noise gradients, per-biome seeds) is a pure
// function of integers through these mixers, so output never depends on a standard library's
// <random> or std::rand. All functions are pure and safe for concurrent use.
#ifndef WORLDGEN_ENGINE_HASH_H_
#define WORLDGEN_ENGINE_HASH_H_

#include <cstdint>

namespace worldgen {

// A bijective 64-bit finalizer (xor-shift / multiply), good avalanche on every input bit. Written
// for any type with uint64_t's >>, ^ and wrapping * (uint64_t, or a GCC vector of uint64_t lanes,
// so vectorized code hashes lane by lane with exactly these operations).
template <typename T>
constexpr T Mix64Of(T v) {
  v ^= v >> 31;
  v *= 0xd6e8feb86659fd93ULL;
  v ^= v >> 32;
  v *= 0xd6e8feb86659fd93ULL;
  v ^= v >> 32;
  return v;
}

constexpr uint64_t Mix64(uint64_t v) { return Mix64Of(v); }

// HashCoords after its seed step: `seed_mix` is Mix64(seed ^ kHashSeedSalt), `a` and `b` the
// coordinates as uint64_t (two's complement); T as for Mix64Of.
inline constexpr uint64_t kHashSeedSalt = 0x9e3779b97f4a7c15ULL;
// The part of HashCoordsFromSeedMix that does not depend on the salt, for callers that hash one
// pair of coordinates under several salts: HashCoordsFromSeedMix = Mix64Of(prefix ^ salt).
template <typename T>
constexpr T HashCoordsPrefix(uint64_t seed_mix, T a, T b) {
  T h = Mix64Of(seed_mix ^ a * 0xbf58476d1ce4e5b9ULL);
  return Mix64Of(h ^ b * 0x94d049bb133111ebULL);
}
template <typename T>
constexpr T HashCoordsFromSeedMix(uint64_t seed_mix, T a, T b, uint64_t salt = 0) {
  return Mix64Of(HashCoordsPrefix(seed_mix, a, b) ^ salt);
}

// Hash of a seed and two signed lattice coordinates, with a salt that separates independent streams
// (jitter direction retries, noise channels, ...).
constexpr uint64_t HashCoords(uint64_t seed, int64_t a, int64_t b, uint64_t salt = 0) {
  return HashCoordsFromSeedMix(Mix64(seed ^ kHashSeedSalt), static_cast<uint64_t>(a),
                               static_cast<uint64_t>(b), salt);
}

// Derives an independent seed for a named sub-stream (a noise field, a biome's height function,
// ...).
constexpr uint64_t DeriveSeed(uint64_t seed, uint64_t stream) {
  return Mix64(Mix64(seed + 0x632be59bd9b4e019ULL) ^ (stream * 0x8cb92ba72f3d8dd7ULL));
}

}  // namespace worldgen

#endif  // WORLDGEN_ENGINE_HASH_H_
