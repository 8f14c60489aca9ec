// Errors the peer harness reports, each with the exit code it maps to.
#pragma once

#include <stdexcept>
#include <string>

namespace synapse::peer {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;     // bad model file, failed llama call, failed check
inline constexpr int kExitUsage = 2;      // bad flags or arguments
inline constexpr int kExitNoLibrary = 3;  // peer libraries absent or of the wrong version

class PeerError : public std::runtime_error {
 public:
  PeerError(int exit_code, const std::string& message)
      : std::runtime_error(message), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

}  // namespace synapse::peer
