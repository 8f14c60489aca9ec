#include "synapse/error.h"

namespace synapse {

const char* to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::Io: return "Io";
    case ErrorKind::Truncated: return "Truncated";
    case ErrorKind::BadMagic: return "BadMagic";
    case ErrorKind::UnsupportedVersion: return "UnsupportedVersion";
    case ErrorKind::Overflow: return "Overflow";
    case ErrorKind::OutOfBounds: return "OutOfBounds";
    case ErrorKind::Misaligned: return "Misaligned";
    case ErrorKind::DuplicateKey: return "DuplicateKey";
    case ErrorKind::DuplicateTensor: return "DuplicateTensor";
    case ErrorKind::InvalidString: return "InvalidString";
    case ErrorKind::InvalidType: return "InvalidType";
    case ErrorKind::UnknownEncoding: return "UnknownEncoding";
    case ErrorKind::InvalidValue: return "InvalidValue";
    case ErrorKind::MissingKey: return "MissingKey";
    case ErrorKind::Usage: return "Usage";
    case ErrorKind::Unsupported: return "Unsupported";
    case ErrorKind::InsufficientMemory: return "InsufficientMemory";
    case ErrorKind::Cancelled: return "Cancelled";
  }
  return "Unknown";
}

static std::string describe(ErrorKind kind, const std::string& message, uint64_t offset,
                            const std::string& subject) {
  std::string s = std::string(to_string(kind)) + ": " + message;
  if (!subject.empty()) s += " [" + subject + "]";
  if (offset != Error::kNoOffset) s += " (at byte " + std::to_string(offset) + ")";
  return s;
}

Error::Error(ErrorKind kind, const std::string& message, uint64_t offset, std::string subject)
    : std::runtime_error(describe(kind, message, offset, subject)),
      kind_(kind),
      message_(message),
      offset_(offset),
      subject_(std::move(subject)) {}

}  // namespace synapse
