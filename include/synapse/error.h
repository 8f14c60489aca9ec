// Typed errors: every failure Synapse reports carries a kind, and where it
// applies the byte offset in the input and the key or tensor it concerns.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace synapse {

enum class ErrorKind {
  Io,                  // open/read/write/mmap failed
  Truncated,           // input ends before a structure it declares
  BadMagic,            // not a GGUF file
  UnsupportedVersion,  // GGUF version we do not read
  Overflow,            // a count, dimension or size overflows 64 bits or a sane bound
  OutOfBounds,         // an offset or size points past the end of the file
  Misaligned,          // tensor data not aligned as the file declares
  DuplicateKey,        // metadata key appears twice
  DuplicateTensor,     // tensor name appears twice
  InvalidString,       // a string length or content is invalid
  InvalidType,         // a metadata value type id is unknown or misused
  UnknownEncoding,     // a tensor encoding (ggml type) we do not know or support
  InvalidValue,        // a value is present but not acceptable
  MissingKey,          // a required metadata key or tensor is absent
  Usage,               // bad command-line use
  Unsupported,         // a valid input we do not support (architecture, ...)
  InsufficientMemory,  // a memory budget cannot hold what a request needs
  Cancelled,           // an evaluation was cancelled while it ran
};

const char* to_string(ErrorKind kind);

class Error : public std::runtime_error {
 public:
  static constexpr uint64_t kNoOffset = UINT64_MAX;

  Error(ErrorKind kind, const std::string& message, uint64_t offset = kNoOffset,
        std::string subject = {});

  ErrorKind kind() const { return kind_; }
  // Byte offset in the input where the problem was found, or kNoOffset.
  uint64_t offset() const { return offset_; }
  // The metadata key or tensor name concerned, if any.
  const std::string& subject() const { return subject_; }
  // The message alone, without kind, subject and offset.
  const std::string& message() const { return message_; }

 private:
  ErrorKind kind_;
  std::string message_;
  uint64_t offset_;
  std::string subject_;
};

}  // namespace synapse
