// An in-process Transport for tests: ranks are threads of one process,
// each message a queue entry. A rank marked dead sends nothing more, so a
// receiver waiting on it times out as it would on a rank that died.
#pragma once

#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "dist/transport.h"
#include "synapse/error.h"

namespace synapse::test {

class LoopbackHub {
 public:
  explicit LoopbackHub(int size) : size_(size) {}

  class Endpoint : public dist::Transport {
   public:
    Endpoint(LoopbackHub& hub, int rank) : hub_(hub), rank_(rank) {}
    int rank() const override { return rank_; }
    int size() const override { return hub_.size_; }
    void send(int to, std::vector<uint8_t> bytes, std::chrono::milliseconds) override {
      const std::lock_guard lock(hub_.mutex_);
      if (hub_.dead_.count(rank_)) return;
      hub_.queues_[{rank_, to}].push_back(std::move(bytes));
      hub_.arrived_.notify_all();
    }
    std::vector<uint8_t> receive(int from, std::chrono::milliseconds timeout) override {
      std::unique_lock lock(hub_.mutex_);
      auto& queue = hub_.queues_[{from, rank_}];
      if (!hub_.arrived_.wait_for(lock, timeout, [&] { return !queue.empty(); }))
        throw Error(ErrorKind::Io, "rank " + std::to_string(from) + " sent nothing within the timeout");
      std::vector<uint8_t> bytes = std::move(queue.front());
      queue.pop_front();
      return bytes;
    }

   private:
    LoopbackHub& hub_;
    int rank_;
  };

  std::unique_ptr<Endpoint> endpoint(int rank) { return std::make_unique<Endpoint>(*this, rank); }
  // From now on, `rank` sends nothing (as if it had died).
  void kill(int rank) {
    const std::lock_guard lock(mutex_);
    dead_[rank] = true;
  }

 private:
  int size_;
  std::mutex mutex_;
  std::condition_variable arrived_;
  std::map<std::pair<int, int>, std::deque<std::vector<uint8_t>>> queues_;
  std::map<int, bool> dead_;
};

}  // namespace synapse::test
