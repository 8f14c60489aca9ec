#include "kernels/cpu/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <system_error>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define SYNAPSE_CPU_RELAX() _mm_pause()
#else
#define SYNAPSE_CPU_RELAX() ((void)0)
#endif

#include "synapse/error.h"

namespace synapse::cpu {

// One worker thread of the process-wide set. A caller hands it a share by
// filling the task fields and bumping `ticket`; whoever first moves
// `claimed` up to that ticket runs the share: the worker, or the caller when
// it finished its own share before the worker started (a worker asleep or
// descheduled on a busy machine would otherwise hold up every op). The
// worker answers each ticket by setting `done` to it. Everything a worker
// touches after a share lives here, never on the caller's stack, so a caller
// may return as soon as it sees `done` or ran the share itself.
struct alignas(64) SharedWorker {
  std::atomic<uint64_t> ticket{0};  // ~0 stops the worker
  std::atomic<uint64_t> claimed{0};
  std::atomic<uint64_t> done{0};
  std::atomic<bool> sleeping{false};         // the worker waits on ticket
  std::atomic<bool> caller_sleeping{false};  // the caller waits on done
  ThreadPool::Erased fn = nullptr;
  void* context = nullptr;
  int share = 0;
  int workers = 0;
  std::thread thread;
};

namespace {

constexpr uint64_t kStop = ~uint64_t{0};
// About 50-100 us of spinning before a thread sleeps: long enough to bridge
// the gap between ops of one step, short enough not to burn a core between
// requests.
constexpr int kSpins = 1 << 14;
// Every this many spins the thread yields its CPU: on a machine with more
// runnable threads than CPUs, the thread it waits for may be queued behind it.
constexpr int kSpinsPerYield = 64;

// True when this thread (the worker or its caller) moved `claimed` up to
// `ticket`, and so owns that share.
bool claim(std::atomic<uint64_t>& claimed, uint64_t ticket) {
  uint64_t seen = claimed.load(std::memory_order_acquire);
  while (seen < ticket)
    if (claimed.compare_exchange_weak(seen, ticket, std::memory_order_acq_rel)) return true;
  return false;
}

// Waits until `flag` differs from `old`: spins, then sleeps on the futex,
// announcing the sleep in `sleeping` (the other side notifies only then).
template <class T>
T wait_for_change(std::atomic<T>& flag, T old, std::atomic<bool>& sleeping) {
  for (int spin = 0;; ++spin) {
    const T now = flag.load(std::memory_order_acquire);
    if (now != old) return now;
    if (spin < kSpins) {
      if (spin % kSpinsPerYield == kSpinsPerYield - 1)
        std::this_thread::yield();
      else
        SYNAPSE_CPU_RELAX();
      continue;
    }
    sleeping.store(true);
    if (flag.load() == old) flag.wait(old);
    sleeping.store(false);
  }
}

void serve(SharedWorker& w) {
  uint64_t seen = 0;
  for (;;) {
    seen = wait_for_change(w.ticket, seen, w.sleeping);
    if (seen == kStop) return;
    // A ticket the caller claimed is answered without reading the task
    // fields: a later caller may be filling them.
    if (claim(w.claimed, seen)) w.fn(w.context, w.share, w.workers);
    w.done.store(seen);
    if (w.caller_sleeping.load()) w.done.notify_one();
  }
}

// The process's worker threads and which of them are idle (a stack: the
// most recently used, still spinning, are leased first).
class WorkerSet {
 public:
  static WorkerSet& instance() {
    static WorkerSet set;
    return set;
  }

  ~WorkerSet() {
    for (auto& w : workers_) {
      w->ticket.store(kStop);
      w->ticket.notify_one();
    }
    for (auto& w : workers_) w->thread.join();
  }

  void grow(int count) {
    std::lock_guard lock(mutex_);
    // Room first: a push_back that failed after a worker started would
    // destroy a running thread.
    workers_.reserve(static_cast<size_t>(count));
    idle_.reserve(static_cast<size_t>(count));
    while (static_cast<int>(workers_.size()) < count) {
      auto w = std::make_unique<SharedWorker>();
      try {
        w->thread = std::thread([p = w.get()] { serve(*p); });
      } catch (const std::system_error& e) {
        throw Error(ErrorKind::InsufficientMemory, "cannot start worker thread " + std::to_string(workers_.size() + 1) +
                                                       " of " + std::to_string(count) + ": " + e.what() +
                                                       " (ask for fewer threads)");
      }
      idle_.push_back(w.get());
      workers_.push_back(std::move(w));
    }
  }

  int size() {
    std::lock_guard lock(mutex_);
    return static_cast<int>(workers_.size());
  }

  // Takes up to `wanted` idle workers into out; returns how many.
  int lease(int wanted, SharedWorker** out) {
    std::lock_guard lock(mutex_);
    const int count = std::min(wanted, static_cast<int>(idle_.size()));
    for (int i = 0; i < count; ++i) {
      out[i] = idle_.back();
      idle_.pop_back();
    }
    return count;
  }

  // Returns leased workers; the first leased ends on top, so the next run
  // hands each share to the worker that ran it last.
  void give_back(SharedWorker* const* leased, int count) {
    std::lock_guard lock(mutex_);
    for (int i = count - 1; i >= 0; --i) idle_.push_back(leased[i]);  // within capacity: no allocation
  }

 private:
  std::mutex mutex_;
  std::vector<std::unique_ptr<SharedWorker>> workers_;
  std::vector<SharedWorker*> idle_;
};

}  // namespace

ThreadPool::ThreadPool(int threads) : threads_(std::max(1, threads)) {
  leased_.resize(static_cast<size_t>(threads_ - 1));
  ran_here_.resize(static_cast<size_t>(threads_ - 1));
  WorkerSet::instance().grow(threads_ - 1);
}

void ThreadPool::run_erased(Erased fn, void* context) {
  if (threads_ == 1) {
    fn(context, 0, 1);
    return;
  }
  std::lock_guard lock(run_mutex_);
  WorkerSet& set = WorkerSet::instance();
  const int helpers = set.lease(threads_ - 1, leased_.data());
  for (int i = 0; i < helpers; ++i) {
    SharedWorker& w = *leased_[static_cast<size_t>(i)];
    w.fn = fn;
    w.context = context;
    w.share = i + 1;
    w.workers = threads_;
    w.ticket.fetch_add(1);
    // Waking is a system call: only made when the worker went to sleep (it
    // re-checks the ticket after announcing itself, so none is missed).
    if (w.sleeping.load()) w.ticket.notify_one();
  }
  fn(context, 0, threads_);
  // Shares whose worker another team holds run here.
  for (int share = helpers + 1; share < threads_; ++share) fn(context, share, threads_);
  // Shares no worker has started yet run here too.
  for (int i = 0; i < helpers; ++i) {
    SharedWorker& w = *leased_[static_cast<size_t>(i)];
    ran_here_[static_cast<size_t>(i)] = claim(w.claimed, w.ticket.load(std::memory_order_relaxed));
    if (ran_here_[static_cast<size_t>(i)]) fn(context, i + 1, threads_);
  }
  for (int i = 0; i < helpers; ++i) {
    if (ran_here_[static_cast<size_t>(i)]) continue;
    SharedWorker& w = *leased_[static_cast<size_t>(i)];
    const uint64_t ticket = w.ticket.load(std::memory_order_relaxed);
    // done rises through the tickets the worker skipped to this one.
    for (uint64_t done = w.done.load(std::memory_order_acquire); done != ticket;)
      done = wait_for_change(w.done, done, w.caller_sleeping);
  }
  set.give_back(leased_.data(), helpers);
}

int shared_worker_threads() { return WorkerSet::instance().size(); }

Range split_range(int64_t n, int worker, int workers, int64_t grain) {
  const int64_t units = (n + grain - 1) / grain;
  const int64_t base = units / workers;
  const int64_t extra = units % workers;
  const int64_t first = worker * base + std::min<int64_t>(worker, extra);
  const int64_t count = base + (worker < extra ? 1 : 0);
  return {std::min(n, first * grain), std::min(n, (first + count) * grain)};
}

}  // namespace synapse::cpu
