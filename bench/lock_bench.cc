// What one absl::Mutex lock costs a thread that shares no lock with any other, with Abseil's debug
// deadlock detection on (as Debian's build of Abseil has it unless a program says otherwise) and
// off (worldgen-server, the echo server and the CLI switch it off at startup).
//
//   BM_PrivateMutexes/detection:D/threads:T   each of T threads locks its own two mutexes, one
//                                             inside the other: CPU time per nested pair
//
// Debian builds Abseil without NDEBUG, so its default is to check: each lock that may block then
// takes one process-wide spin lock. With one thread that costs a few atomic operations; with more,
// the threads queue on that lock although they share nothing. gRPC's locks are absl::Mutex.
// Run: build/bench/lock_bench
#include "absl/synchronization/mutex.h"
#include "benchmark/benchmark.h"

namespace {

void BM_PrivateMutexes(benchmark::State& state) {
  // The mode is process-wide: every thread of a run sets the same value before its first lock.
  absl::SetMutexDeadlockDetectionMode(state.range(0) != 0 ? absl::OnDeadlockCycle::kReport
                                                          : absl::OnDeadlockCycle::kIgnore);
  absl::Mutex outer, inner;
  for (auto _ : state) {
    absl::MutexLock hold_outer(&outer);
    absl::MutexLock hold_inner(&inner);
  }
}
BENCHMARK(BM_PrivateMutexes)->ArgName("detection")->Arg(1)->Arg(0)->ThreadRange(1, 2);

}  // namespace

BENCHMARK_MAIN();
