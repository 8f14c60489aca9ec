#include "exec/weight_table.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <filesystem>
#include <optional>
#include <vector>

#include "exec/session.h"
#include "model/model.h"
#include "synth/synth.h"

namespace synapse::exec {
namespace {

// A q8_0 model of about 9 MiB next to the test binary (on disk: a tmpfs
// file could not be dropped from memory), named after the test (tests run
// at once), removed at the end.
class DiskModel {
 public:
  DiskModel()
      : path_(std::filesystem::read_symlink("/proc/self/exe").parent_path() /
              (std::string("weight_table_test.") + ::testing::UnitTest::GetInstance()->current_test_info()->name() +
               ".gguf")) {
    SynthOptions options;
    options.type = "q8_0";
    options.n_layer = 2;
    options.n_embd = 512;
    options.n_ff = 1536;
    options.n_vocab = 4096;
    synth_model(options, path_.string());
  }
  ~DiskModel() {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }
  std::string path() const { return path_.string(); }
  // Drops the file from the page cache; false when the kernel kept it.
  bool evict() const {
    const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    const bool dropped = ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0;
    ::close(fd);
    return dropped;
  }

 private:
  std::filesystem::path path_;
};

bool any_resident(const MappedFile& file) {
  std::vector<unsigned char> in_core((file.bytes().size() + 4095) / 4096);
  ::mincore(const_cast<uint8_t*>(file.bytes().data()), file.bytes().size(), in_core.data());
  for (unsigned char c : in_core)
    if (c & 1) return true;
  return false;
}

// The bytes of the model's file mapped in 2 MiB pages once a session made
// with `options` loaded it from a cold page cache and every weight was read
// (as decode reads them); nullopt when the file could not be dropped first.
std::optional<uint64_t> huge_after_load(const DiskModel& disk, const SessionOptions& options) {
  if (!disk.evict()) return std::nullopt;
  const Model model = load_model(disk.path());
  const MappedFile& file = *model.files.at(0);
  const Session session(model, options);
  const volatile uint8_t* bytes = file.bytes().data();  // a volatile read is never left out
  for (uint64_t at = 0; at < file.bytes().size(); at += 4096) static_cast<void>(bytes[at]);
  return file.bytes_in_huge_pages();
}

// A resident session reads its vectors with readahead: faulting a vector's
// page alone (readahead off, as a paged session does) would leave the
// 2 MiB around it in 4 KiB pages for good, and decode streaming those
// weights slower. Where the kernel maps none of this file in 2 MiB pages
// (no large page-cache folios for its file system), there is nothing to
// compare.
TEST(WeightTable, AResidentSessionLeavesItsWeightsIn2MiBPages) {
  const DiskModel disk;
  {
    const MappedFile probe(disk.path());
    if (!disk.evict() || any_resident(probe)) GTEST_SKIP() << "the kernel keeps the test's file in memory";
  }
  const std::optional<uint64_t> resident = huge_after_load(disk, {});
  ASSERT_TRUE(resident);
  if (*resident == 0) GTEST_SKIP() << "this kernel maps the file in 4 KiB pages only";
  SessionOptions budgeted;
  budgeted.memory.budget.bytes = uint64_t{1} << 30;
  const std::optional<uint64_t> paged = huge_after_load(disk, budgeted);
  ASSERT_TRUE(paged);
  EXPECT_LT(*paged, *resident);  // its vectors were read without readahead
}

}  // namespace
}  // namespace synapse::exec
