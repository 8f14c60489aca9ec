// Where a file of the shared test data is (shared/data next to the source
// tree).
#pragma once

#include <filesystem>
#include <string>

namespace synapse::test {

// A path converts to std::string implicitly, so callers wanting either take it.
inline std::filesystem::path shared_data(const std::string& relative) {
  return std::filesystem::path(SYNAPSE_SOURCE_DIR) / ".." / "shared" / "data" / relative;
}

}  // namespace synapse::test
