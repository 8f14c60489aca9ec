#include "kernels/cpu/thread_pool.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define SYNAPSE_CPU_RELAX() _mm_pause()
#else
#define SYNAPSE_CPU_RELAX() ((void)0)
#endif

namespace synapse::cpu {
namespace {

constexpr uint64_t kStop = ~uint64_t{0};
// About 50-100 us of spinning before a worker sleeps: long enough to bridge
// the gap between ops of one step, short enough not to burn a core between
// requests.
constexpr int kSpins = 1 << 14;

// Pins the calling thread to the index-th CPU of the process's affinity
// mask, if there is one.
void pin_to_cpu(int index) {
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return;
  for (int cpu = 0, seen = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &allowed)) continue;
    if (seen++ != index) continue;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
    return;
  }
}

int allowed_cpus() {
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return 1;
  return CPU_COUNT(&allowed);
}

}  // namespace

ThreadPool::ThreadPool(int threads) {
  const int workers = std::max(1, threads) - 1;
  // Pinning only helps when every thread can have a CPU of its own.
  const bool pin = threads <= allowed_cpus();
  workers_.reserve(static_cast<size_t>(workers));
  for (int w = 1; w <= workers; ++w)
    workers_.emplace_back([this, w, pin] {
      if (pin) pin_to_cpu(w);
      work(w);
    });
}

ThreadPool::~ThreadPool() {
  generation_.store(kStop);
  generation_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

void ThreadPool::run_erased(Erased fn, void* context) {
  if (workers_.empty()) {
    fn(context, 0, 1);
    return;
  }
  std::lock_guard lock(run_mutex_);
  fn_ = fn;
  context_ = context;
  pending_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
  generation_.fetch_add(1);
  // Waking is a system call: only made when some worker went to sleep (a
  // worker re-checks the generation after announcing itself, so none is missed).
  if (sleepers_.load() > 0) generation_.notify_all();
  fn(context, 0, size());
  for (int spin = 0;; ++spin) {
    int left = pending_.load(std::memory_order_acquire);
    if (left == 0) break;
    if (spin < kSpins) {
      SYNAPSE_CPU_RELAX();
      continue;
    }
    caller_sleeping_.store(true);
    left = pending_.load();
    if (left != 0) pending_.wait(left);
    caller_sleeping_.store(false);
  }
}

void ThreadPool::work(int worker) {
  uint64_t seen = 0;
  for (;;) {
    uint64_t now = generation_.load(std::memory_order_acquire);
    for (int spin = 0; now == seen; ++spin) {
      if (spin < kSpins) {
        SYNAPSE_CPU_RELAX();
      } else {
        sleepers_.fetch_add(1);
        generation_.wait(seen);
        sleepers_.fetch_sub(1);
      }
      now = generation_.load(std::memory_order_acquire);
    }
    if (now == kStop) return;
    seen = now;
    fn_(context_, worker, size());
    if (pending_.fetch_sub(1) == 1 && caller_sleeping_.load()) pending_.notify_one();
  }
}

Range split_range(int64_t n, int worker, int workers, int64_t grain) {
  const int64_t units = (n + grain - 1) / grain;
  const int64_t base = units / workers;
  const int64_t extra = units % workers;
  const int64_t first = worker * base + std::min<int64_t>(worker, extra);
  const int64_t count = base + (worker < extra ? 1 : 0);
  return {std::min(n, first * grain), std::min(n, (first + count) * grain)};
}

}  // namespace synapse::cpu
