// How pipeline stages reach each other: one process per stage (an MPI rank),
// messages of bytes between two ranks in order. The engine knows only this
// interface; the MPI implementation lives in dist/mpi/ and is linked into
// synapse-mpi alone, so the library and `synapse` load no MPI (SPEC §11).
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <vector>

namespace synapse::dist {

class Transport {
 public:
  virtual ~Transport() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Sends a message, keeping its bytes until `to` has taken it: the call may
  // return before (so two ranks that send each other large messages at
  // once do not wait on each other), and messages to one rank arrive in
  // order. Throws Error(Io) naming the rank when it takes nothing within
  // `timeout` while the transport can hold no more.
  virtual void send(int to, std::vector<uint8_t> bytes, std::chrono::milliseconds timeout) = 0;
  // The next message from `from`. Throws Error(Io) naming the rank when none
  // arrives within `timeout` (the rank died or hangs).
  virtual std::vector<uint8_t> receive(int from, std::chrono::milliseconds timeout) = 0;
};

// The transport synapse-mpi installs before the commands run; null in a
// plain process (one stage).
Transport* process_transport();
void set_process_transport(Transport* transport);

}  // namespace synapse::dist
