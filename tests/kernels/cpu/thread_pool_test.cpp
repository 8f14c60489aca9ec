#include "kernels/cpu/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace synapse::cpu {
namespace {

TEST(CpuThreadPool, EveryWorkerRunsEachTaskOnce) {
  for (int threads : {1, 2, 3, 5}) {
    ThreadPool pool(threads);
    ASSERT_EQ(pool.size(), threads);
    std::vector<std::atomic<int>> runs(static_cast<size_t>(threads));
    for (int round = 0; round < 200; ++round)
      pool.run([&](int worker, int workers) {
        EXPECT_EQ(workers, threads);
        runs[static_cast<size_t>(worker)].fetch_add(1);
      });
    for (auto& count : runs) EXPECT_EQ(count.load(), 200);
  }
}

TEST(CpuThreadPool, TaskResultsAreVisibleWhenRunReturns) {
  ThreadPool pool(3);
  std::vector<int> out(3000, 0);
  for (int round = 1; round <= 50; ++round) {
    pool.run([&](int worker, int workers) {
      const Range share = split_range(static_cast<int64_t>(out.size()), worker, workers);
      for (int64_t i = share.begin; i < share.end; ++i) out[static_cast<size_t>(i)] = round;
    });
    for (int value : out) ASSERT_EQ(value, round);
  }
}

TEST(CpuThreadPool, WakesWorkersAfterTheySleep) {
  ThreadPool pool(2);
  std::atomic<int> runs{0};
  pool.run([&](int, int) { runs.fetch_add(1); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // workers go to sleep
  pool.run([&](int, int) { runs.fetch_add(1); });
  EXPECT_EQ(runs.load(), 4);
}

TEST(CpuThreadPool, RunsFromTwoThreadsAreSerialized) {
  ThreadPool pool(2);
  std::atomic<int> inside{0};
  std::atomic<bool> overlapped{false};
  auto caller = [&] {
    for (int i = 0; i < 200; ++i)
      pool.run([&](int worker, int) {
        if (worker == 0 && inside.fetch_add(1) != 0) overlapped = true;
        if (worker == 0) inside.fetch_sub(1);
      });
  };
  std::thread a(caller), b(caller);
  a.join();
  b.join();
  EXPECT_FALSE(overlapped.load());
}

TEST(CpuThreadPool, PoolsShareTheProcessWorkers) {
  ThreadPool first(4);
  const int workers = shared_worker_threads();
  EXPECT_GE(workers, 3);
  ThreadPool second(4), third(2);
  EXPECT_EQ(shared_worker_threads(), workers);  // no new threads for pools no larger
}

TEST(CpuThreadPool, PoolsRunAtOnceAndEveryShareRunsOnce) {
  // Two pools of 3 over the shared workers: while one holds workers, the
  // other's caller runs the missing shares itself.
  constexpr int kRounds = 300;
  auto caller = [](std::vector<int>* totals) {
    ThreadPool pool(3);
    std::vector<std::atomic<int>> runs(3);
    for (int round = 0; round < kRounds; ++round)
      pool.run([&](int worker, int workers) {
        EXPECT_EQ(workers, 3);
        runs[static_cast<size_t>(worker)].fetch_add(1);
      });
    for (auto& count : runs) totals->push_back(count.load());
  };
  std::vector<int> a, b;
  std::thread first(caller, &a), second(caller, &b);
  first.join();
  second.join();
  EXPECT_EQ(a, std::vector<int>(3, kRounds));
  EXPECT_EQ(b, std::vector<int>(3, kRounds));
}

TEST(CpuThreadPool, TheCallerRunsSharesOfWorkersNotYetAwakeAndEachShareRunsOnce) {
  // Workers asleep when a run starts take far longer to wake than the
  // caller's empty share takes: the caller runs their shares instead of
  // waiting. Whoever runs a share, it runs once.
  constexpr int kRounds = 60;
  ThreadPool pool(4);
  std::vector<std::atomic<int>> runs(4);
  std::atomic<int> on_caller{0};
  const std::thread::id caller = std::this_thread::get_id();
  for (int round = 0; round < kRounds; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // the workers go to sleep
    pool.run([&](int worker, int) {
      runs[static_cast<size_t>(worker)].fetch_add(1);
      if (worker > 0 && std::this_thread::get_id() == caller) on_caller.fetch_add(1);
    });
  }
  for (auto& count : runs) EXPECT_EQ(count.load(), kRounds);
  EXPECT_GT(on_caller.load(), 0);
}

TEST(CpuSplitRange, SharesCoverEveryItemOnceInGrainMultiples) {
  for (int64_t n : {0, 1, 7, 64, 1000, 4865})
    for (int workers : {1, 2, 3, 8})
      for (int64_t grain : {1, 4}) {
        int64_t next = 0;
        for (int w = 0; w < workers; ++w) {
          const Range share = split_range(n, w, workers, grain);
          EXPECT_EQ(share.begin, next);
          if (share.end < n) {
            EXPECT_EQ((share.end - share.begin) % grain, int64_t{0});
          }
          next = share.end;
        }
        EXPECT_EQ(next, n);
      }
}

}  // namespace
}  // namespace synapse::cpu
