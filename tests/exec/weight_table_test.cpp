#include "exec/weight_table.h"

#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "exec/session.h"
#include "model/model.h"
#include "support/disk_dir.h"
#include "synth/synth.h"

namespace synapse::exec {
namespace {

// A q8_0 model of about 9 MiB, on disk.
struct DiskModel {
  test::TempDir dir = test::disk_dir();
  std::string path = dir.file("model.gguf");
  DiskModel() {
    SynthOptions options;
    options.type = "q8_0";
    options.n_layer = 2;
    options.n_embd = 512;
    options.n_ff = 1536;
    options.n_vocab = 4096;
    synth_model(options, path);
  }
  bool evict() const { return test::drop_cached(path); }
};

// The bytes of the model's file mapped in 2 MiB pages once a session made
// with `options` loaded it from a cold page cache and every weight was read
// (as decode reads them); nullopt when the file could not be dropped first.
std::optional<uint64_t> huge_after_load(const DiskModel& disk, const SessionOptions& options) {
  if (!disk.evict()) return std::nullopt;
  const Model model = load_model(disk.path);
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
  if (!disk.evict() || test::cached_pages(disk.path) > 0) GTEST_SKIP() << "the kernel keeps the test's file in memory";
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
