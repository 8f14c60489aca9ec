// SHA-256 (FIPS 180-4), small and dependency-free: the graph fingerprint needs
// a stable cryptographic digest and nothing more.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace synapse::ir {

using Sha256Digest = std::array<uint8_t, 32>;

class Sha256 {
 public:
  Sha256();
  void update(std::span<const uint8_t> bytes);
  void update(std::string_view text);
  // Pads, returns the digest and leaves the object unusable until reset.
  Sha256Digest finish();
  void reset();

 private:
  void compress(const uint8_t* block);

  std::array<uint32_t, 8> state_{};
  std::array<uint8_t, 64> block_{};
  size_t block_used_ = 0;
  uint64_t total_bytes_ = 0;
};

Sha256Digest sha256(std::string_view text);
std::string to_hex(const Sha256Digest& digest);

}  // namespace synapse::ir
