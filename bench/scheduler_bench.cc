// What admitting a call costs the scheduler (CallScheduler::Admit and the call's release, under the
// scheduler's one lock) while many clients have work of its class queued: the fair share counts
// every client's work at most as much as the new call's client has, which ShareHistogram answers
// without visiting the clients. A background call also checks that it makes no admitted
// background call with a deadline late: one histogram query per such call.
//
//   BM_AdmitInteractive/clients:N   N clients (--fair_share's game servers) each hold a 4-chunk
//                                   call of 16^2 chunks; one of them is admitted and released again
//   BM_AdmitBackground/clients:N    N clients each hold a 128-chunk call of 16^2 chunks due in an
//                                   hour; one more of them is admitted and released again
//   BM_AdmitBackgroundNearDeadlines/clients:N
//                                   N clients each hold a one-chunk call due before all the queued
//                                   work could be done and a 128-chunk one with no deadline; a new
//                                   client's 128-chunk call is admitted and released again,
//                                   checking each of the N near deadlines (the worst case of that
//                                   check)
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

CallShape ClientCall(int client, int64_t tasks, absl::Time deadline = absl::InfiniteFuture()) {
  CallShape shape;
  shape.tasks = tasks;
  shape.columns_per_task = 256;
  shape.deadline = deadline;
  shape.client = "10.0." + std::to_string(client / 256) + "." + std::to_string(client % 256);
  return shape;
}

// Admits and releases a call of `tasks` chunks (with `deadline`) while each of state.range(0)
// clients holds one of `held_tasks` + (its number % 16) chunks: different amounts of queued work,
// as flooding and quiet game servers have.
void AdmitBeside(benchmark::State& state, int64_t tasks, int64_t held_tasks, absl::Time deadline) {
  BlendPool pool(1);
  CallScheduler::Options options;
  options.max_queue_seconds = 1e9;  // Nothing is refused: each admission is counted whole.
  options.initial_seconds_per_column = 1e-9;  // Nor late.
  CallScheduler scheduler(&pool, options);
  std::vector<std::unique_ptr<CallScheduler::Call>> held;
  for (int client = 0; client < state.range(0); ++client) {
    held.push_back(
        *scheduler.Admit(ClientCall(client, held_tasks + client % 16, deadline), absl::Now()));
  }
  const CallShape shape = ClientCall(0, tasks, deadline);
  const absl::Time now = absl::Now();
  for (auto _ : state) {
    absl::StatusOr<std::unique_ptr<CallScheduler::Call>> call = scheduler.Admit(shape, now);
    benchmark::DoNotOptimize(call);
  }
  held.clear();
  pool.Shutdown();
}

void BM_AdmitInteractive(benchmark::State& state) {
  AdmitBeside(state, 1, 1, absl::InfiniteFuture());
}
BENCHMARK(BM_AdmitInteractive)->ArgName("clients")->Arg(1)->Arg(16)->Arg(256)->Arg(4096);

void BM_AdmitBackground(benchmark::State& state) {
  AdmitBeside(state, 128, 128, absl::Now() + absl::Hours(1));
}
BENCHMARK(BM_AdmitBackground)->ArgName("clients")->Arg(1)->Arg(16)->Arg(256)->Arg(4096);

void BM_AdmitBackgroundNearDeadlines(benchmark::State& state) {
  BlendPool pool(1);
  CallScheduler::Options options;
  options.max_queue_seconds = 1e9;
  options.interactive_max_columns = 0;        // Every call is background.
  options.initial_seconds_per_column = 1e-9;  // 1 ns per column on one thread.
  CallScheduler scheduler(&pool, options);
  const int clients = static_cast<int>(state.range(0));
  const absl::Time now = absl::Now();
  // Due when half the estimate of all the work has passed: each one-chunk call's own share is far
  // less, so none is refused, but none can be passed over without its share counted.
  const absl::Time soon = now + absl::Nanoseconds(int64_t{clients} * 129 * 256);
  std::vector<std::unique_ptr<CallScheduler::Call>> held;
  for (int client = 0; client < clients; ++client) {
    held.push_back(*scheduler.Admit(ClientCall(client, 1, soon), now));
    held.push_back(*scheduler.Admit(ClientCall(client, 128), now));
  }
  const CallShape shape = ClientCall(clients, 128);
  for (auto _ : state) {
    absl::StatusOr<std::unique_ptr<CallScheduler::Call>> call = scheduler.Admit(shape, now);
    if (!call.ok()) state.SkipWithError("refused");
    benchmark::DoNotOptimize(call);
  }
  held.clear();
  pool.Shutdown();
}
BENCHMARK(BM_AdmitBackgroundNearDeadlines)
    ->ArgName("clients")
    ->Arg(1)
    ->Arg(16)
    ->Arg(256)
    ->Arg(4096);

}  // namespace
}  // namespace worldgen

BENCHMARK_MAIN();
