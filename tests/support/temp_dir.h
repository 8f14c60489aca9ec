// A temporary folder for a test's files, removed when the test ends.
#pragma once

#include <filesystem>
#include <random>
#include <string>

namespace synapse::test {

class TempDir {
 public:
  TempDir() : TempDir(std::filesystem::temp_directory_path()) {}
  // A new folder in `parent` instead of the system's temporary folder.
  explicit TempDir(const std::filesystem::path& parent) {
    std::random_device rd;
    path_ = parent / ("synapse-test-" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string path() const { return path_.string(); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace synapse::test
