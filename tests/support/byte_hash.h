// FNV-1a of a byte buffer: the golden hashes tests compare written bytes with.
#pragma once

#include <cstdint>
#include <vector>

namespace synapse::test {

inline uint64_t fnv1a(const std::vector<uint8_t>& bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint8_t c : bytes) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

}  // namespace synapse::test
