// The Transport over MPI (OpenMPI): ranks of MPI_COMM_WORLD, one message
// per frame. Built into synapse-mpi only; nothing else links MPI.
#pragma once

#include <mpi.h>

#include <deque>
#include <vector>

#include "dist/transport.h"

namespace synapse::dist {

class MpiTransport : public Transport {
 public:
  // MPI_Init; throws Error(Io) when MPI cannot start.
  MpiTransport(int* argc, char*** argv);
  ~MpiTransport() override;  // MPI_Finalize, unless aborted
  MpiTransport(const MpiTransport&) = delete;
  MpiTransport& operator=(const MpiTransport&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  // MPI_Isend, the bytes held until it completes (checked on every later
  // send and receive); waits for the oldest only when many are pending.
  void send(int to, std::vector<uint8_t> bytes, std::chrono::milliseconds timeout) override;
  // Polls for the message (MPI has no receive with a timeout).
  std::vector<uint8_t> receive(int from, std::chrono::milliseconds timeout) override;
  // Ends every rank of the job (a failed rank must not leave the others
  // waiting): MPI_Abort.
  [[noreturn]] void abort(int code);

 private:
  struct Pending {
    MPI_Request request;
    std::vector<uint8_t> bytes;
    int to;
  };
  // Drops the sends that have completed.
  void reap();
  // Waits for the oldest pending send; throws Error(Io) past the timeout.
  void wait_oldest(std::chrono::milliseconds timeout);

  int rank_ = 0;
  int size_ = 1;
  std::deque<Pending> pending_;  // sends not yet complete, oldest first
};

}  // namespace synapse::dist
