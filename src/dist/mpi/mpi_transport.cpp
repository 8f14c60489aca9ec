#include "dist/mpi/mpi_transport.h"

#include <climits>
#include <cstdlib>
#include <string>
#include <thread>

#include "synapse/error.h"

namespace synapse::dist {
namespace {

constexpr int kTag = 7;

// How a rank waits for MPI: it polls without pause for a while (a decode
// step's frame, or a ping's answer, is due within microseconds to
// milliseconds), then yields its core between polls. Spinning by time, not
// by poll count, keeps two waiting ranks from falling into step with each
// other's sleeps (which made a ping's round trip a millisecond).
class Backoff {
 public:
  explicit Backoff(std::chrono::milliseconds timeout) : start_(Clock::now()), deadline_(start_ + timeout) {}
  // False once the timeout has passed.
  bool wait() {
    const auto now = Clock::now();
    if (now > deadline_) return false;
    // Waiting long (a server between requests): poll a thousand times a second.
    if (now - start_ > std::chrono::milliseconds(100)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    } else if (now - start_ > std::chrono::milliseconds(2)) {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    } else {
      std::this_thread::yield();  // MPI's own threads (TCP progress) may need this core
    }
    return true;
  }

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point start_, deadline_;
};

void check(int code, const char* what) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw Error(ErrorKind::Io, std::string(what) + ": " + std::string(text, static_cast<size_t>(length)));
}

}  // namespace

MpiTransport::MpiTransport(int* argc, char*** argv) {
  // OpenMPI reads its TCP sockets only every 10 ms of polling by default
  // (mpi_event_tick_rate): a hop between hosts then costs milliseconds
  // (measured: a 4 ms round trip where the link's is 17 us). Every 10 us
  // instead, unless the user set it (environment or mpirun --mca).
  setenv("OMPI_MCA_mpi_event_tick_rate", "10", /*overwrite=*/0);
  // One thread calls MPI at a time (a command's main thread, or a server's
  // engine loop); the compute threads never do.
  int provided = 0;
  check(MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided), "MPI_Init_thread");
  if (provided < MPI_THREAD_SERIALIZED)
    throw Error(ErrorKind::Unsupported, "this MPI library calls from one thread only (MPI_THREAD_SERIALIZED is needed)");
  // Errors come back as codes (and typed exceptions), not as an abort inside MPI.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiTransport::~MpiTransport() {
  // The last frames (a Stop) reach their ranks before MPI ends.
  try {
    while (!pending_.empty()) wait_oldest(std::chrono::seconds(30));
  } catch (const Error&) {
    // A rank that takes nothing more: MPI_Finalize ends what is left.
  }
  MPI_Finalize();
}

void MpiTransport::reap() {
  for (auto it = pending_.begin(); it != pending_.end();) {
    int done = 0;
    check(MPI_Test(&it->request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    it = done ? pending_.erase(it) : std::next(it);
  }
}

void MpiTransport::wait_oldest(std::chrono::milliseconds timeout) {
  Pending& oldest = pending_.front();
  Backoff backoff(timeout);
  while (true) {
    int done = 0;
    check(MPI_Test(&oldest.request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done) break;
    if (!backoff.wait())
      throw Error(ErrorKind::Io, "rank " + std::to_string(oldest.to) + " took nothing within " +
                                     std::to_string(timeout.count() / 1000.0) + " s: it died or hangs");
  }
  pending_.pop_front();
}

void MpiTransport::send(int to, std::vector<uint8_t> bytes, std::chrono::milliseconds timeout) {
  if (bytes.size() > static_cast<size_t>(INT_MAX))
    throw Error(ErrorKind::Overflow, "a frame of " + std::to_string(bytes.size()) + " bytes for one MPI message");
  // A step per rank in flight, each a frame or two: more waiting means a
  // rank stopped taking them.
  constexpr size_t kMostPending = 64;
  reap();
  while (pending_.size() >= kMostPending) wait_oldest(timeout);
  pending_.push_back({MPI_REQUEST_NULL, std::move(bytes), to});
  Pending& p = pending_.back();
  check(MPI_Isend(p.bytes.data(), static_cast<int>(p.bytes.size()), MPI_BYTE, to, kTag, MPI_COMM_WORLD, &p.request),
        ("MPI_Isend to rank " + std::to_string(to)).c_str());
}

std::vector<uint8_t> MpiTransport::receive(int from, std::chrono::milliseconds timeout) {
  Backoff backoff(timeout);
  MPI_Status status;
  int arrived = 0;
  while (true) {
    reap();  // this rank's own sends progress while it waits
    check(MPI_Iprobe(from, kTag, MPI_COMM_WORLD, &arrived, &status), "MPI_Iprobe");
    if (arrived) break;
    if (!backoff.wait())
      throw Error(ErrorKind::Io, "rank " + std::to_string(from) + " sent nothing within " +
                                     std::to_string(timeout.count() / 1000.0) + " s: it died or hangs");
  }
  int count = 0;
  MPI_Get_count(&status, MPI_BYTE, &count);
  std::vector<uint8_t> bytes(static_cast<size_t>(count));
  check(MPI_Recv(bytes.data(), count, MPI_BYTE, from, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
        ("MPI_Recv from rank " + std::to_string(from)).c_str());
  return bytes;
}

void MpiTransport::abort(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);  // MPI_Abort does not return; should it, leave anyway
}

}  // namespace synapse::dist
