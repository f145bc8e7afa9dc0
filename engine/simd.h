// Shared pieces of the engine's vectorized loops: GCC portable vector types and the
// runtime-dispatch attribute.
//
// Vector code is written once against GCC's vector extensions and compiled for AVX-512, AVX2 and
// baseline x86-64 (SSE2), or, on other architectures (aarch64), for the baseline alone, which GCC
// lowers to that architecture's vectors (NEON: two doubles per register). Vector +, -, *, / and
// comparisons are exactly the IEEE scalar operations lane by lane, so a loop that performs the
// scalar reference's operations in the same order gives the same bits in every variant (the build
// uses -ffp-contract=off: no FMA).
#ifndef WORLDGEN_ENGINE_SIMD_H_
#define WORLDGEN_ENGINE_SIMD_H_

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace worldgen::simd {

// Four doubles / four 64-bit integers; GCC lowers each to one AVX2 register or two SSE2 registers.
// aligned(8): loads and stores through these types may be unaligned. Comparisons of Double4 give
// Int64x4 masks (-1 true, 0 false); Uint64x4 is for integer arithmetic that must wrap.
typedef double Double4 __attribute__((vector_size(32), aligned(8)));
typedef int64_t Int64x4 __attribute__((vector_size(32), aligned(8)));
typedef uint64_t Uint64x4 __attribute__((vector_size(32), aligned(8)));
// Eight doubles: one AVX-512 register, two AVX2 or four SSE2 registers.
typedef double Double8 __attribute__((vector_size(64), aligned(8)));
typedef float Float8 __attribute__((vector_size(32), aligned(4)));
typedef int32_t Int32x8 __attribute__((vector_size(32), aligned(4)));

// L lanes of doubles and of 64-bit integers: one AVX-512 register at 8 lanes, one AVX2 register
// at 4 (GCC splits wider vectors over narrower registers). Comparisons of D give I masks (-1 true,
// 0 false); U is for integer arithmetic that must wrap.
template <int L>
struct Lanes {
  typedef double D __attribute__((vector_size(8 * L), aligned(8)));
  typedef int64_t I __attribute__((vector_size(8 * L), aligned(8)));
  typedef uint64_t U __attribute__((vector_size(8 * L), aligned(8)));
};

// Every lane of a vector V set to `value`, of V's lane type T.
template <typename V, typename T>
inline __attribute__((always_inline)) V Splat(T value) {
  V v;
  for (size_t l = 0; l < sizeof(V) / sizeof(T); ++l) v[l] = value;
  return v;
}

// Unaligned loads and stores of a vector V from and to lanes of type T.
template <typename V, typename T>
inline __attribute__((always_inline)) V Load(const T* p) {
  V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <typename V, typename T>
inline __attribute__((always_inline)) void Store(T* p, V v) {
  std::memcpy(p, &v, sizeof v);
}

// Each lane of v, an integer below 2^52, as a double (exactly, as static_cast<double> converts
// it): its bits in the mantissa of 2^52, less 2^52. AVX2 has no 64-bit integer conversion.
template <int L>
inline __attribute__((always_inline)) typename Lanes<L>::D ExactDouble(typename Lanes<L>::U v) {
  using D = typename Lanes<L>::D;
  return __builtin_bit_cast(D, v | 0x4330000000000000ULL) - Splat<D>(4503599627370496.0);
}

// True if every lane of the mask (-1 or 0 per lane) is set.
template <int L>
inline __attribute__((always_inline)) bool AllSet(typename Lanes<L>::I mask) {
  int64_t all = mask[0];
  for (int l = 1; l < L; ++l) all &= mask[l];
  return all != 0;
}

// Lane permutes: Shuffle(a, index)[l] = a[index[l] mod N]; Shuffle(a, b, index)[l] = lane
// index[l] mod 2N of a's lanes followed by b's. GCC's __builtin_shuffle; clang (the fuzzing build)
// has no variable-index permute builtin, so it gets the lane-by-lane equivalent.
template <typename V, typename I>
inline __attribute__((always_inline)) V Shuffle(V a, I index) {
#if defined(__clang__)
  constexpr int n = sizeof(V) / sizeof(a[0]);
  V r;
  for (int l = 0; l < n; ++l) r[l] = a[index[l] & (n - 1)];
  return r;
#else
  return __builtin_shuffle(a, index);
#endif
}
template <typename V, typename I>
inline __attribute__((always_inline)) V Shuffle(V a, V b, I index) {
#if defined(__clang__)
  constexpr int n = sizeof(V) / sizeof(a[0]);
  V r;
  for (int l = 0; l < n; ++l) {
    const int k = static_cast<int>(index[l] & (2 * n - 1));
    r[l] = k < n ? a[k] : b[k - n];
  }
  return r;
#else
  return __builtin_shuffle(a, b, index);
#endif
}

}  // namespace worldgen::simd

// Runtime dispatch between an AVX2 and a baseline clone through an ifunc. Under ThreadSanitizer
// the ifunc resolver is instrumented and runs before the TSan runtime exists (it crashes the
// dynamic loader), so sanitized builds get the baseline clone only; the output is identical.
// Clang (only the libFuzzer build uses it) gets the baseline too: it rejects the 512-bit vector
// arguments between the AVX-512 variants' helpers, which GCC inlines. Other architectures than
// x86-64 run the baseline, the one variant written without x86's instructions.
#if defined(__SANITIZE_THREAD__) || defined(__clang__) || !defined(__x86_64__)
#define WORLDGEN_TARGET_CLONES
#define WORLDGEN_SIMD_DISPATCH 0
#else
#define WORLDGEN_TARGET_CLONES __attribute__((target_clones("avx2", "default")))
// Code that picks per-target variants itself (a simd::Dispatcher: the kernels, the noise) compiles
// them only when this is 1; the same sanitized-build rule applies, so TSan builds run the
// baseline.
#define WORLDGEN_SIMD_DISPATCH 1
#endif

// A dispatched variant's function for a Dispatcher's table: &fn where the build compiles the
// variants, null (and fn never named) where it does not.
#if WORLDGEN_SIMD_DISPATCH
#define WORLDGEN_SIMD_VARIANT_FN(fn) (&fn)
#else
#define WORLDGEN_SIMD_VARIANT_FN(fn) nullptr
#endif

namespace worldgen::simd {

#if WORLDGEN_SIMD_DISPATCH
// Whether this CPU runs each dispatched variant, the one home of the rule for every dispatcher's
// table. "avx512" needs F (512-bit arithmetic), DQ (64-bit lane multiplies and conversions) and VL
// (their 256-bit forms, which GCC picks for the narrower vectors inside an AVX-512 variant); every
// CPU with AVX-512 F since Skylake-SP and Zen 4 has all three.
inline bool CpuRunsAvx512() {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512vl");
}
inline bool CpuRunsAvx2() { return __builtin_cpu_supports("avx2") != 0; }

// Correctly rounded square roots of four lanes (the IEEE operation std::sqrt performs), for the
// AVX2 and AVX-512 variants, which both draw lattice rows four lanes at a time. Not
// always_inline: a generic helper that calls it is compiled for the baseline target, where GCC
// refuses to force AVX code in; the variants are `flatten`, which inlines it once everything sits
// in their body.
struct Sqrt4Lanes {
  __attribute__((target("avx2"))) Lanes<4>::D operator()(Lanes<4>::D v) const {
    return __builtin_bit_cast(Lanes<4>::D, _mm256_sqrt_pd(__builtin_bit_cast(__m256d, v)));
  }
};
#endif

// The environment variable that forces a variant ("avx512", "avx2" or "baseline") on every
// dispatcher that has it, for benchmarks and tests of each variant on one machine, and for an
// operator who measured another variant faster. Read once, at each dispatcher's first call. The
// results are the same bits whichever variant runs.
inline constexpr char kForceVariantEnv[] = "WORLDGEN_SIMD_VARIANT";

// The value of kForceVariantEnv, or empty.
inline std::string_view ForcedVariant() {
  const char* value = std::getenv(kForceVariantEnv);
  return value == nullptr ? std::string_view() : std::string_view(value);
}

// The variant to run: the one ForcedVariant() names if this CPU supports it, else the first of
// `variants` (best first, the always-supported baseline last) it supports. A forced name that is
// unknown or unsupported is ignored here; the programs that honour the variable (the server, the
// benchmarks) refuse to start with it (see ForcedVariantError). Variant has `name` and `supported`.
template <typename Variant>
const Variant& FirstSupported(std::span<const Variant> variants) {
  const std::string_view forced = ForcedVariant();
  for (const Variant& v : variants) {
    if (v.supported && !forced.empty() && std::string(v.name) == forced) return v;
  }
  for (const Variant& v : variants) {
    if (v.supported) return v;
  }
  return variants.back();
}

// A compiled variant of a function of type Fn, for its dispatcher, tests and benchmarks.
template <typename Fn>
struct Variant {
  const char* name;  // "avx512", "avx2" or "baseline".
  bool supported;    // Whether this CPU (and this build) can run it.
  Fn* run;
};

// One function's variants, best first with the always-supported baseline last (the baseline
// alone without WORLDGEN_SIMD_DISPATCH), and the one its calls run, chosen by FirstSupported at
// construction. Each dispatcher keeps one in a function-local static, so the CPU (and the
// environment) is asked once, at its first call.
template <typename Fn>
class Dispatcher {
 public:
  // The engine's table: the AVX-512 and AVX2 variants, each null where the build compiles none
  // (name them with WORLDGEN_SIMD_VARIANT_FN), and the baseline.
  Dispatcher(Fn* avx512, Fn* avx2, Fn* baseline) {
#if WORLDGEN_SIMD_DISPATCH
    if (avx512 != nullptr) variants_.push_back({"avx512", CpuRunsAvx512(), avx512});
    if (avx2 != nullptr) variants_.push_back({"avx2", CpuRunsAvx2(), avx2});
#else
    (void)avx512, (void)avx2;  // Null: this build compiles no variant but the baseline.
#endif
    variants_.push_back({"baseline", true, baseline});
    chosen_ = &FirstSupported(std::span<const Variant<Fn>>(variants_));
  }
  Dispatcher(const Dispatcher&) = delete;  // chosen_ points into variants_.
  Dispatcher& operator=(const Dispatcher&) = delete;

  std::span<const Variant<Fn>> variants() const { return variants_; }
  const Variant<Fn>& chosen() const { return *chosen_; }

 private:
  std::vector<Variant<Fn>> variants_;
  const Variant<Fn>* chosen_ = nullptr;
};

// Why a forced variant would not run on this CPU and build: names not among `variants`, or one
// this CPU cannot run; empty when it would (or nothing is forced).
template <typename Variant>
std::string ForcedVariantError(std::span<const Variant> variants) {
  const std::string_view forced = ForcedVariant();
  if (forced.empty()) return std::string();
  std::string names;
  for (const Variant& v : variants) {
    if (std::string(v.name) == forced) {
      if (v.supported) return std::string();
      return std::string(kForceVariantEnv) + "=" + std::string(forced) +
             ": this CPU (or build) cannot run it";
    }
    names += names.empty() ? "" : ", ";
    names += std::string(v.name);
  }
  return std::string(kForceVariantEnv) + "=" + std::string(forced) + " is not a variant of this " +
         "build (" + names + ")";
}

}  // namespace worldgen::simd

#endif  // WORLDGEN_ENGINE_SIMD_H_
