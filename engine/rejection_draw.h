// The jittered lattices' rejection draw in vector form (jittered_lattice.cc,
// jittered_bcc_lattice.cc): a direction drawn uniformly from the unit disc or ball by hashing
// candidates until one lands inside, lanes along a lattice row.
#ifndef WORLDGEN_ENGINE_REJECTION_DRAW_H_
#define WORLDGEN_ENGINE_REJECTION_DRAW_H_

#include <cstdint>

#include "engine/hash.h"
#include "engine/simd.h"

namespace worldgen {

// For each lane, the first of `attempts` candidates whose squared length is in (0.01, 1], the
// scalar draw's acceptance test: attempt t's N components are `components(Mix64(key ^ t), c)`,
// which fills c[0..N) with exact functions of the hash. On return u holds each lane's accepted
// components and the result their squared length; a lane that accepts none keeps u as given (the
// scalar draw's default direction) and gets 1. The lanes make the same attempts, so each keeps
// the candidate its scalar draw accepts: at least two (a lane in four misses a 2D draw's first),
// then only until every lane has a hit.
template <int L, int N, typename Components>
inline __attribute__((always_inline)) typename simd::Lanes<L>::D FirstAcceptedDraw(
    typename simd::Lanes<L>::U key, uint64_t attempts, Components components,
    typename simd::Lanes<L>::D (&u)[N]) {
  using D = typename simd::Lanes<L>::D;
  using I = typename simd::Lanes<L>::I;
  using U = typename simd::Lanes<L>::U;
  const D one = simd::Splat<D>(1.0), low = simd::Splat<D>(0.01);
  D len2 = one;
  I found = simd::Splat<I>(int64_t{0});
  for (uint64_t attempt = 0; attempt < attempts; ++attempt) {
    const U h = Mix64Of(key ^ attempt);
    D c[N];
    components(h, c);
    D l2 = c[0] * c[0];
    for (int n = 1; n < N; ++n) l2 += c[n] * c[n];
    const I hit = (l2 > low) & (l2 <= one);
    const I take = hit & ~found;
    for (int n = 0; n < N; ++n) u[n] = take ? c[n] : u[n];
    len2 = take ? l2 : len2;
    found |= hit;
    if (attempt >= 1 && simd::AllSet<L>(found)) break;
  }
  return len2;
}

}  // namespace worldgen

#endif  // WORLDGEN_ENGINE_REJECTION_DRAW_H_
