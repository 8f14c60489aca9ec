// A fork/join pool for per-op parallelism: run(task) calls task(worker,
// workers) on every worker, the calling thread being worker 0, and returns
// when all have finished. Workers are pinned to distinct CPUs where the
// affinity mask allows, spin briefly between tasks (ops follow each other
// within microseconds during a decode step) and then sleep on a futex. A run
// allocates nothing and makes no system call while workers are spinning.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace synapse::cpu {

class ThreadPool {
 public:
  // threads >= 1 counts the caller; threads - 1 workers are started.
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // Runs task(worker, size()) on every worker. Calls from different threads
  // are serialized. The task must not throw.
  template <class Task>
  void run(Task&& task) {
    run_erased(
        [](void* context, int worker, int workers) { (*static_cast<std::remove_reference_t<Task>*>(context))(worker, workers); },
        &task);
  }

 private:
  using Erased = void (*)(void* context, int worker, int workers);
  void run_erased(Erased fn, void* context);
  void work(int worker);

  std::vector<std::thread> workers_;
  std::mutex run_mutex_;
  Erased fn_ = nullptr;
  void* context_ = nullptr;
  std::atomic<uint64_t> generation_{0};  // bumped to start a task; ~0 stops the workers
  std::atomic<int> pending_{0};          // workers still running the current task
  std::atomic<int> sleepers_{0};         // workers asleep on generation_
  std::atomic<bool> caller_sleeping_{false};
};

// [begin, end) of worker's share of n items split into `workers` contiguous
// parts, each a multiple of `grain` items except the last.
struct Range {
  int64_t begin = 0;
  int64_t end = 0;
};
Range split_range(int64_t n, int worker, int workers, int64_t grain = 1);

}  // namespace synapse::cpu
