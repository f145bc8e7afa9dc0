// CallScheduler: admission and fair ordering of blend work across calls. gRPC-free (std and
// Abseil), so its unit tests also run under ThreadSanitizer (scripts/tsan.sh).
//
// Work is counted in columns (a chunk of size s is s^2 of them) and turned into seconds by the
// measured cost per column (an EWMA over finished tasks) divided by the pool's threads. Points
// (SampleWeights) cost far more each than a chunk's columns, which share one gather (measured on
// the default world, AMD EPYC: ~54 us per point 256 blocks apart, under 1 us per column), so
// they have an estimate of their own: a call of p points counts as the columns that cost the same,
// p x (seconds per point) / (seconds per column), and a point call's cost never moves the columns'
// estimate. Points with a y (3D point queries) have an estimate of their own beside it: over a cave
// world's caves each is a 3D gather and convolution, tens of times a cached 2D point, so mixing
// them into one average would misjudge both kinds. 3D chunks (GenerateChunk with a vertical range)
// count their cells the same way, with an estimate per cell of their own: a cell near caves is a 3D
// convolution, one far from them a copy of its column's weights, so neither estimate predicts the
// other. Calls whose whole work is at most interactive_max_columns are "interactive", the others
// "background".
//
// Admission (Admit): a call declares its shape up front (how many tasks, columns per task, the
// worst-case encoded bytes of one task's reply, its deadline) and is refused at once with
// RESOURCE_EXHAUSTED, naming the reason and when to come back (RetryAfter), only when
//   - "deadline": the work that would run before it plus its own would not finish before its
//     deadline, within deadline_fill of the time left. For an interactive call that work is the
//     interactive work already admitted (its fair share of it, below), nothing else: it runs ahead
//     of background work. For a background call it is all interactive work and the fair share of
//     the background work (below); a background call is also refused if admitting it would push an
//     admitted background call past its deadline, unless that call's client holds more background
//     work than this call's client would: then that client's newest calls are shed instead;
//   - "queue_full": the admitted, unstarted work would exceed max_queue_seconds of blending. For an
//     interactive call only interactive work counts; background work past the bound is shed instead
//     (below). For a background call all interactive work counts, and the background work by its
//     fair share. A call whose own work alone exceeds the bound is refused with no time to come
//     back (RetryAfter infinite): it has to be split;
//   - "reply_memory": the reply bytes reserved would exceed the call's share of max_reply_bytes.
//   Each
//     call reserves one task's worst-case reply from admission to its end, so it can always
//     progress; background calls together may hold at most (1 - interactive_reply_share) of the
//     budget, so interactive calls always find room beside bulk streams.
// So an interactive call is refused only when interactive work alone is more than the server can do
// in time; background work never makes it wait or be refused.
//
// Shedding: when admitting a call takes the unstarted work of all calls past max_queue_seconds,
// background calls are shed until it fits (or none is left): the newest admission of the client
// with the most unstarted background work first (with one client, the newest call first). A shed
// call keeps what it has produced, starts no more tasks (its unstarted work no longer counts), and
// its tasks learn of it through Call::shed() / ShedStatus(): RESOURCE_EXHAUSTED with a time to come
// back, which the stream ends with.
//
// Fair share: every call names its client (CallShape::client: the game server that sent it, an
// address; the service derives it, see --fair_share). Each class's work is shared between clients,
// not calls: for a call of client C whose own unstarted work of the call's class that runs up to
// the call's end (with the call's) is m, the work of that class counted as running before its end
// is m plus, of every other client's unstarted work of the class, at most m (what the turns below
// give the others meanwhile). For an interactive call m is all of C's interactive work; for a
// background call, C's background calls due no later than it (C's own run earliest deadline
// first). So a client flooding the server meets its deadlines and the queue bound alone, and
// another client's call is admitted and run beside the flood; a background flood that another
// client's call would push past the queue bound or past its deadlines is shed from its newest
// calls (above). With one client (every call
// naming the same, as behind a balancer with --fair_share=peer) this is the plain sum, and
// background calls are plain earliest deadline first. The sum of the others' shares comes from a
// ShareHistogram of the clients' work, in time that does not grow with their number; it may count
// up to an eighth more of the work of clients whose own is within an eighth of m
// (bench/scheduler_bench.cc).
//
// Ordering: within each class, clients take turns by the columns each has had started (the client
// that has had the fewest goes next; one that was idle joins at the current turn, with no credit
// for its idle time). Within a client, interactive calls take turns call by call, task by task
// (round robin), and background calls go earliest deadline first (ties: admission order), which is
// what lets admission promise their deadlines. Interactive work goes before background work,
// except that background work gets every kBackgroundTurn-th pick while any is waiting, so it never
// starves. So a one-chunk call never waits behind a 1024-chunk stream, a big stream keeps at least
// a quarter of the threads, and one game server's bulk work does not queue another's behind it.
// Tasks are not preempted, but a long background task lends its thread to waiting interactive
// tasks between its pieces (RunWaitingInteractive), so they wait for a piece, not for all of it.
//
// Retry-after: every refusal (and a shed call's status) carries the time after which the same call
// would likely be admitted: the work ahead of it drained (deadline), the excess over the bound
// drained (queue_full), or kReplyMemoryRetry (reply_memory: replies are freed as clients read,
// which the server cannot estimate). The service sends it as gRPC's grpc-retry-pushback-ms trailer.
//
// Reply memory: Call::TryReserveReply reserves one task's worst-case reply before the task is
// submitted; ReleaseReply gives it back when the reply has been sent or dropped. A call's first
// outstanding reservation is its admission floor, so TryReserveReply never fails for a call with
// nothing outstanding. The sum over all calls never exceeds max_reply_bytes.
//
// Tasks run on a BlendPool: each Submit queues the task in its call's lane and hands the pool one
// token; a token runs whichever task the policy picks when a thread is free. SubmitOrRunHere skips
// the pool hand-off (a queue push, a thread wake-up and the switch to it) when it would gain
// nothing: with no task waiting and fewer tasks running than the pool has threads, the task would
// be picked at once anyway, so the calling thread runs it itself, standing in for the idle pool
// thread. Either way at most as many tasks run at once as the pool has threads.
//
// Waits: the scheduler measures how long each task waited for a thread, from Submit to its start,
// per class (Stats::interactive_waits, background_waits) and per call (CallShape::times), so an
// operator can tell a call that waited for a busy pool (add replicas) from one whose blending was
// slow (a costly world) or one held up elsewhere (the network, a slow reader).
//
// Thread safety: all methods are safe for concurrent use. A Call must be destroyed only when none
// of its tasks is queued (a queued task of a destroyed call is dropped unrun). The scheduler must
// outlive its calls, and the pool must outlive the scheduler and keep running tasks until the
// scheduler is gone: destroying the scheduler waits until none of the pool tokens it handed out is
// left (a pool thread may still be in the scheduler's bookkeeping after a stream's last task ended
// its call).
#ifndef WORLDGEN_SERVER_SCHEDULING_CALL_SCHEDULER_H_
#define WORLDGEN_SERVER_SCHEDULING_CALL_SCHEDULER_H_

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "server/scheduling/blend_pool.h"
#include "server/scheduling/share_histogram.h"

namespace worldgen {

// Where one call's time went, summed over its tasks (which may run on several threads at once, so
// the sums may exceed the call's duration): the scheduler adds each task's wait for a pool thread;
// the service adds the time its tasks spent blending and encoding. Shared between the call's
// record and its admission, so it outlives whichever ends first.
struct CallTimes {
  std::atomic<int64_t> queued_ns{0};
  std::atomic<int64_t> blend_ns{0};
  void AddQueued(absl::Duration d) { queued_ns.fetch_add(absl::ToInt64Nanoseconds(d)); }
  void AddBlend(absl::Duration d) { blend_ns.fetch_add(absl::ToInt64Nanoseconds(d)); }
  absl::Duration queued() const { return absl::Nanoseconds(queued_ns.load()); }
  absl::Duration blend() const { return absl::Nanoseconds(blend_ns.load()); }
};

// What a call will ask of the pool.
struct CallShape {
  int64_t tasks = 1;             // >= 1
  int64_t columns_per_task = 1;  // >= 1: the work of one task, in blended columns
  // > 0: each task blends this many points instead (columns_per_task is then ignored); converted
  // to columns of the same estimated cost at admission.
  int64_t points_per_task = 0;
  // Of points_per_task, how many have a y (3D point queries): counted by their own estimate, the
  // rest by the 2D points'. In [0, points_per_task].
  int64_t volume_points_per_task = 0;
  // > 0: each task blends this many 3D cells instead (columns_per_task and points_per_task are
  // then ignored); converted to columns as points are.
  int64_t cells_per_task = 0;
  int64_t reply_bytes_per_task = 0;  // worst-case encoded reply of one task
  absl::Time deadline = absl::InfiniteFuture();
  // Who asked: interactive work is shared fairly between clients (above). Any string; empty is a
  // client like any other.
  std::string client;
  // Null, or where the scheduler adds each of the call's tasks' wait for a thread.
  std::shared_ptr<CallTimes> times;
};

enum class CallClass { kInteractive, kBackground };

class CallScheduler {
  struct Client;  // The interactive calls of one CallShape::client (defined below).

 public:
  struct Options {
    // Most admitted, unstarted work, in seconds of blending on the whole pool (> 0).
    double max_queue_seconds = 30;
    int64_t max_reply_bytes = int64_t{256} << 20;
    // Share of max_reply_bytes background calls may not take: kept for interactive calls, [0, 1).
    double interactive_reply_share = 0.125;
    int64_t interactive_max_columns = 16384;  // e.g. four 64x64 chunks or 64 chunks of 16x16
    // Costs assumed before any task was measured.
    double initial_seconds_per_column = 2e-7;
    double initial_seconds_per_point = 5e-6;
    double initial_seconds_per_volume_point = 3e-5;
    double initial_seconds_per_cell = 2e-6;
    // Share of a call's remaining time (0, 1] that the estimated work may fill. The estimate counts
    // blending only; writing replies and the client's reading take the rest.
    double deadline_fill = 0.5;
  };
  // Background work gets at least one pick in this many while it is waiting.
  static constexpr int kBackgroundTurn = 4;
  // Retry-after of a "reply_memory" refusal.
  static constexpr absl::Duration kReplyMemoryRetry = absl::Milliseconds(100);

  class Call;

  // `pool` must outlive the scheduler.
  CallScheduler(BlendPool* pool, Options options);
  ~CallScheduler();
  CallScheduler(const CallScheduler&) = delete;
  CallScheduler& operator=(const CallScheduler&) = delete;

  // Admits a call (reserving its reply floor) or refuses it with RESOURCE_EXHAUSTED and a message
  // that says why and what limit was hit. `now` is the admission time (absl::Now() in production).
  absl::StatusOr<std::unique_ptr<Call>> Admit(const CallShape& shape, absl::Time now);

  // "deadline", "reply_memory" or "queue_full" for a status Admit refused with; empty otherwise.
  static std::string RefusalReason(const absl::Status& status);
  // When the refused (or shed) call should come back, from the status Admit refused it with or
  // ShedStatus(); absl::ZeroDuration() when the status says nothing, absl::InfiniteDuration()
  // for a call that waiting cannot help (its own work alone is past max_queue_seconds).
  static absl::Duration RetryAfter(const absl::Status& status);

  // Feeds the cost estimate: a task blended `columns` columns in `elapsed` (wall time on its
  // thread). The estimate moves a fifth of the way to each sample, the first one replacing the
  // initial guess, and a sample counts at most 4 times the estimate: one preempted task does not
  // multiply it.
  void RecordTaskCost(int64_t columns, absl::Duration elapsed);
  // The same for a task that blended `points` points (CallShape::points_per_task).
  void RecordPointCost(int64_t points, absl::Duration elapsed);
  // The same for the `points` points with a y a task blended (CallShape::volume_points_per_task),
  // `elapsed` being their share of its time; the task's 2D points go to RecordPointCost.
  void RecordVolumePointCost(int64_t points, absl::Duration elapsed);
  // The same for a task that blended `cells` 3D cells (CallShape::cells_per_task).
  void RecordCellCost(int64_t cells, absl::Duration elapsed);

  // Lends the calling thread to waiting interactive work: a running task calls this with its call's
  // class where it holds nothing another task could wait for (between the pieces of a big chunk or
  // of a 3D chunk's sections, World::BlendChunkInPieces and BlendVolumeInPieces; every few points
  // of a point call). Only a background call lends: for an interactive `lender` this runs nothing
  // and returns zero. Runs up to kBackgroundTurn
  // - 1 interactive tasks that are waiting for a thread, on this thread, in the order the pool
  // would have run them, and returns how long they took (zero, without reading the clock, when none
  // waits): the caller leaves that out of its own cost. They run in the calling task's slot, so no
  // more tasks run at once than the pool has threads; their waits are counted as usual. Called
  // from inside a task it runs, it runs nothing. So a one-chunk call waits for one piece of a bulk
  // chunk at most, not for the whole of it.
  absl::Duration RunWaitingInteractive(CallClass lender);

  // How long started tasks waited for a pool thread (from Submit to their start; 0 for a task that
  // SubmitOrRunHere ran at once), counted per bucket: the histogram
  // worldgen_queue_wait_seconds{class} of the metrics.
  struct WaitHistogram {
    // Upper bounds in seconds, 50 us to 10 s, roughly x2-2.5 apart; a last bucket holds the rest.
    static constexpr std::array<double, 16> kBounds = {
        0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
        0.025,   0.05,   0.1,     0.25,   0.5,   1,      2.5,   10};
    std::array<int64_t, kBounds.size() + 1> counts{};  // per bucket, not cumulative
    double sum_seconds = 0;
    void Add(absl::Duration waited);
  };

  struct Stats {
    int64_t calls = 0;            // admitted and not yet destroyed
    int64_t queued_tasks = 0;     // waiting for a thread
    int64_t pending_columns = 0;  // columns of admitted work not yet started
    int64_t reserved_reply_bytes = 0;
    double seconds_per_column = 0;        // current estimate
    double seconds_per_point = 0;         // current estimate
    double seconds_per_volume_point = 0;  // current estimate
    double seconds_per_cell = 0;          // current estimate
    double queued_seconds = 0;            // pending_columns as seconds of blending on the pool
    int threads = 0;                      // the pool's
    int64_t shed_calls = 0;               // background calls shed since start
    int64_t interactive_clients = 0;      // clients with an admitted interactive call
    int64_t background_clients = 0;       // clients with an admitted background call
    WaitHistogram interactive_waits;      // tasks of interactive calls
    WaitHistogram background_waits;       // tasks of background calls
  };
  Stats stats() const;
  const Options& options() const { return options_; }

  // One admitted call. Destroying it releases its reservations and its unstarted work.
  class Call {
   public:
    ~Call();
    Call(const Call&) = delete;
    Call& operator=(const Call&) = delete;

    CallClass call_class() const { return class_; }
    // Reserves one task's reply bytes; false if the scheduler's budget cannot take them. Always
    // true while the call holds no reservation.
    bool TryReserveReply();
    // Gives back one reservation made by TryReserveReply.
    void ReleaseReply();
    // Whether the scheduler shed this call; then ShedStatus() is what it should end with
    // (RESOURCE_EXHAUSTED with a RetryAfter), and its further tasks should do no work.
    bool shed() const { return shed_.load(std::memory_order_acquire); }
    absl::Status ShedStatus() const;
    // Queues `task` (one of the tasks declared in the shape) in this call's lane.
    void Submit(absl::AnyInvocable<void() &&> task);
    // Like Submit, except that when no task is waiting and a pool thread is idle, `task` runs on
    // the calling thread before this returns (it overtakes no one: the policy would pick it first).
    // The task may destroy this Call.
    void SubmitOrRunHere(absl::AnyInvocable<void() &&> task);

   private:
    friend class CallScheduler;
    Call(CallScheduler* scheduler, CallClass call_class)
        : scheduler_(scheduler), class_(call_class) {}

    CallScheduler* const scheduler_;
    const CallClass class_;
    // Guarded by scheduler_->mu_:
    int64_t columns_per_task_ = 0;
    int64_t reply_bytes_per_task_ = 0;
    int64_t tasks_unstarted_ = 0;  // declared tasks not yet picked
    int64_t reservations_ = 0;     // outstanding TryReserveReply successes
    struct Queued {
      absl::AnyInvocable<void() &&> task;
      absl::Time since;  // when it was submitted
    };
    std::deque<Queued> lane_;
    std::shared_ptr<CallTimes> times_;       // CallShape::times
    std::pair<absl::Time, uint64_t> order_;  // (deadline, admission number): EDF key
    Client* client_ = nullptr;               // null only for a call refused at admission
    absl::Status shed_status_;
    std::atomic<bool> shed_{false};  // Written under scheduler_->mu_.
  };

 private:
  using OrderKey = std::pair<absl::Time, uint64_t>;
  // A client's place in its class's turns: (columns it has had started, when it queued).
  using TurnKey = std::pair<int64_t, uint64_t>;

  // Guarded by mu_. The calls of one class (interactive or background) of one CallShape::client.
  struct Client {
    std::string name;
    int64_t calls = 0;                      // admitted calls
    int64_t pending_columns = 0;            // their unstarted work
    int64_t started_columns = 0;            // columns of its tasks started, on the turns' clock
    TurnKey turn;                           // its key in Shares::turns while it has a queued task
    std::deque<Call*> runnable;             // interactive: its calls with a queued task, in turn
    std::map<OrderKey, Call*> by_deadline;  // background: its calls, earliest deadline first
    std::set<OrderKey> queued;              // background: those with a queued task
  };
  // The clients of one class, and their turns.
  struct Shares {
    std::map<std::string, Client> clients;  // clients with an admitted call of the class
    ShareHistogram histogram;               // their pending_columns
    std::map<TurnKey, Client*> turns;       // clients with a queued task, the next to pick first
    int64_t clock = 0;                      // started_columns of the client picked last
    int64_t pending_columns = 0;            // all of the class's unstarted work
  };

  Shares& SharesOf(const Call& call) {
    return call.class_ == CallClass::kInteractive ? interactive_ : background_;
  }
  // Of every client of `shares` but one whose unstarted work is `own_pending`, the sum of
  // min(their unstarted work, m): what the turns give the others while that one gets m done.
  static int64_t OthersShareLocked(const Shares& shares, int64_t own_pending, int64_t m);
  // Adds `columns` (negative: removes) to a client's unstarted work, and to its class's total.
  static void AddClientPendingLocked(Shares& shares, Client& client, int64_t columns);
  // Queues `call`, which has just got a queued task, for its client's turn.
  void RunnableLocked(Call* call);
  // Puts a client with a queued task in its class's turns, keyed by the columns it has had started.
  void QueueTurnLocked(Shares& shares, Client& client);
  // Beside other clients of the class, how many share it and how much of the work ahead is the
  // refused call's client's own (`present`: it has admitted calls of the class); else empty.
  std::string ShareClauseLocked(const Shares& shares, int64_t mine_pending, bool present) const;
  // A background call's admission beyond the reply budget: the refusal, if it would miss its
  // deadline or make an admitted background call miss its own, or the queue bound is full. When
  // the call would make another client's call late, `*late` is that client.
  absl::Status AdmitBackgroundLocked(const CallShape& shape, const OrderKey& key, int64_t own,
                                     absl::Time now, const Client** late) const;

  // Runs the task the policy picks now (one pool token).
  void RunNext();
  void RunNextLocked(std::unique_lock<std::mutex>& lock);
  // Takes the task the turns of the class (interactive or background) give next, which must have
  // one queued, and counts it as started (StartedLocked).
  absl::AnyInvocable<void() &&> TakeNextLocked(bool interactive);
  // Counts one task of `call` as started (no longer pending for admission's estimate), after it
  // waited `waited` for a thread.
  void StartedLocked(Call* call, absl::Duration waited);
  // Reply bytes a call holds: its floor or its reservations, whichever is more.
  static int64_t HeldReplyBytes(const Call& call);
  void RemoveCallLocked(Call* call);
  // Reply bytes background calls together may reserve.
  int64_t BackgroundReplyLimit() const;
  // Seconds of blending `columns` take on the pool, without headroom.
  absl::Duration WorkLocked(int64_t columns) const;
  // The same within deadline_fill: what a deadline must leave for them.
  // The columns of the same estimated cost as `units` points or cells of `seconds_per_unit` each.
  int64_t UnitColumnsLocked(int64_t units, double seconds_per_unit) const;
  // A point call's task in columns: its 2D points and its points with a y, each by its estimate.
  int64_t PointColumnsLocked(const CallShape& shape) const;
  // The Record*Cost methods' one body: a task's `units` took `elapsed`; that average per unit
  // feeds `estimate` (one of the members below, guarded by mu_; `measured` its first-sample flag).
  void RecordUnitCost(int64_t units, absl::Duration elapsed, double& estimate, bool& measured);
  absl::Duration EstimateLocked(int64_t columns) const;
  // Sheds background calls until all unstarted work fits max_queue_seconds: the newest of the
  // client with the most unstarted background work first. `why` goes into their status.
  void ShedLocked(absl::string_view why);
  // Sheds the newest call of `client` that has unstarted work (none: nothing).
  void ShedNewestLocked(Client& client, absl::string_view why);

  BlendPool* const pool_;
  Options options_;

  mutable std::mutex mu_;
  uint64_t next_admission_ = 0;
  int64_t queued_tasks_ = 0;
  // Tasks running, on pool threads or (SubmitOrRunHere) on callers' threads: at most one per pool
  // thread. A pool token that finds every slot taken is deferred, and re-issued when a task ends.
  int64_t running_tasks_ = 0;
  int64_t deferred_tokens_ = 0;
  // Tokens handed to the pool whose RunNext has not returned; the destructor waits for zero.
  int64_t pool_tokens_ = 0;
  std::condition_variable tokens_done_;
  int64_t reserved_reply_bytes_ = 0;
  double seconds_per_column_;
  bool cost_measured_ = false;
  double seconds_per_point_;
  bool point_cost_measured_ = false;
  double seconds_per_volume_point_;
  bool volume_point_cost_measured_ = false;
  double seconds_per_cell_;
  bool cell_cost_measured_ = false;
  int interactive_picks_in_a_row_ = 0;
  int64_t shed_calls_ = 0;
  WaitHistogram interactive_waits_;
  WaitHistogram background_waits_;
  std::set<Call*> calls_;
  Shares interactive_;
  Shares background_;
  std::multiset<absl::Time> background_deadlines_;  // of the background calls with one
  uint64_t next_turn_ = 0;
};

}  // namespace worldgen

#endif  // WORLDGEN_SERVER_SCHEDULING_CALL_SCHEDULER_H_
