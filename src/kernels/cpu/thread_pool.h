// A fork/join team for per-op parallelism: run(task) calls task(worker,
// workers) once for every worker index in [0, size()), the calling thread
// taking index 0, and returns when all have finished.
//
// Every ThreadPool of the process draws its helpers from one process-wide
// set of worker threads, grown to the largest team asked for: sessions with
// different thread counts share the threads instead of each starting (and
// pinning) its own. A run leases the idle workers it needs. When another
// team holds some of them, or a leased worker has not started its share by
// the time the caller finished its own (asleep, or descheduled on a busy
// machine), the caller runs those shares itself, so a task sees the same
// (worker, workers) indices and computes the same results either way.
// Workers are not pinned (the scheduler places them where the CPUs are
// free); they spin briefly between tasks (ops follow each other within
// microseconds during a decode step), yielding now and then to threads
// queued behind them, and then sleep on a futex. A run allocates nothing.
#pragma once

#include <cstdint>
#include <mutex>
#include <type_traits>
#include <vector>

namespace synapse::cpu {

struct SharedWorker;

class ThreadPool {
 public:
  // threads >= 1 counts the caller; the shared set grows to threads - 1
  // workers if it has fewer. Throws Error(InsufficientMemory) when the
  // system cannot start a worker (those started stay in the set).
  explicit ThreadPool(int threads);
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return threads_; }

  // Runs task(worker, size()) for every worker index. Calls on one pool
  // from different threads are serialized; different pools run at once.
  // The task must not throw.
  template <class Task>
  void run(Task&& task) {
    run_erased(
        [](void* context, int worker, int workers) { (*static_cast<std::remove_reference_t<Task>*>(context))(worker, workers); },
        &task);
  }

  using Erased = void (*)(void* context, int worker, int workers);

 private:
  void run_erased(Erased fn, void* context);

  int threads_;
  std::mutex run_mutex_;
  std::vector<SharedWorker*> leased_;  // a run's helpers; sized once: a run allocates nothing
  std::vector<char> ran_here_;         // which helpers' shares the caller claimed
};

// Worker threads the process-wide set has started (for tests).
int shared_worker_threads();

// [begin, end) of worker's share of n items split into `workers` contiguous
// parts, each a multiple of `grain` items except the last.
struct Range {
  int64_t begin = 0;
  int64_t end = 0;
};
Range split_range(int64_t n, int worker, int workers, int64_t grain = 1);

}  // namespace synapse::cpu
