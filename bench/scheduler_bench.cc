// What admitting an interactive call costs the scheduler (CallScheduler::Admit and the call's
// release, under the scheduler's one lock) while many clients have interactive work queued: the
// fair share counts every client's work at most as much as the new call's client has, which
// ShareHistogram answers without visiting the clients.
//
//   BM_AdmitInteractive/clients:N   N clients (--fair_share's game servers) each hold a 4-chunk
//   call
//                                   of 16^2 chunks; one of them is admitted and released again
//
// Run: build/bench/scheduler_bench
#include <memory>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "benchmark/benchmark.h"
#include "server/scheduling/blend_pool.h"
#include "server/scheduling/call_scheduler.h"

namespace worldgen {
namespace {

CallShape ClientCall(int client, int64_t tasks) {
  CallShape shape;
  shape.tasks = tasks;
  shape.columns_per_task = 256;
  shape.client = "10.0." + std::to_string(client / 256) + "." + std::to_string(client % 256);
  return shape;
}

void BM_AdmitInteractive(benchmark::State& state) {
  BlendPool pool(1);
  CallScheduler::Options options;
  options.max_queue_seconds = 1e9;  // Nothing is refused: each admission is counted whole.
  CallScheduler scheduler(&pool, options);
  std::vector<std::unique_ptr<CallScheduler::Call>> held;
  for (int client = 0; client < state.range(0); ++client) {
    // Different amounts of queued work, as flooding and quiet game servers have.
    held.push_back(*scheduler.Admit(ClientCall(client, 1 + client % 16), absl::Now()));
  }
  const CallShape shape = ClientCall(0, 1);
  const absl::Time now = absl::Now();
  for (auto _ : state) {
    absl::StatusOr<std::unique_ptr<CallScheduler::Call>> call = scheduler.Admit(shape, now);
    benchmark::DoNotOptimize(call);
  }
  held.clear();
  pool.Shutdown();
}
BENCHMARK(BM_AdmitInteractive)->ArgName("clients")->Arg(1)->Arg(16)->Arg(256)->Arg(4096);

}  // namespace
}  // namespace worldgen

BENCHMARK_MAIN();
