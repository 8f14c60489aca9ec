// The default thread count from fake system files: sysfs CPU lists, SMT
// sibling lists, cgroup v2 cpu.max and v1 CFS quotas along the process's
// cgroup path.
#include "kernels/cpu/core_count.h"

#include <gtest/gtest.h>

#include <map>

namespace synapse::cpu {
namespace {

// A FileReader over a map of path -> contents.
FileReader fake_files(std::map<std::string, std::string> files) {
  return [files = std::move(files)](const std::string& path) -> std::optional<std::string> {
    const auto it = files.find(path);
    if (it == files.end()) return std::nullopt;
    return it->second;
  };
}

std::string siblings_path(int cpu) {
  return "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/thread_siblings_list";
}

TEST(CoreCount, ParsesCpuListsWithRangesAndSingles) {
  EXPECT_EQ(parse_cpu_list("0-3,8,10-11\n"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(parse_cpu_list("5"), (std::vector<int>{5}));
  EXPECT_EQ(parse_cpu_list(""), (std::vector<int>{}));
  EXPECT_FALSE(parse_cpu_list("3-1"));
  EXPECT_FALSE(parse_cpu_list("a,b"));
  EXPECT_FALSE(parse_cpu_list("1,,2"));
}

TEST(CoreCount, ParsesCgroupV2CpuMax) {
  EXPECT_FALSE(parse_cpu_max("max 100000\n"));
  EXPECT_DOUBLE_EQ(*parse_cpu_max("150000 100000\n"), 1.5);
  EXPECT_DOUBLE_EQ(*parse_cpu_max("200000 100000"), 2.0);
  EXPECT_FALSE(parse_cpu_max("garbage"));
  EXPECT_FALSE(parse_cpu_max("100000 0"));
}

TEST(CoreCount, ParsesCgroupV1Quota) {
  EXPECT_FALSE(parse_cfs_quota("-1\n", "100000\n"));
  EXPECT_DOUBLE_EQ(*parse_cfs_quota("300000\n", "100000\n"), 3.0);
  EXPECT_FALSE(parse_cfs_quota("", "100000"));
}

TEST(CoreCount, CountsSmtSiblingsAsOneCore) {
  // Four cores with two threads each: CPU n and n + 4 are siblings.
  std::map<std::string, std::string> files;
  for (int cpu = 0; cpu < 8; ++cpu)
    files[siblings_path(cpu)] = std::to_string(cpu % 4) + "," + std::to_string(cpu % 4 + 4) + "\n";
  const FileReader read = fake_files(files);
  const std::vector<int> all{0, 1, 2, 3, 4, 5, 6, 7}, one_core{2, 6}, two_cores{0, 1}, mixed{0, 4, 5};
  EXPECT_EQ(count_physical_cores(all, read), 4);
  EXPECT_EQ(count_physical_cores(one_core, read), 1);
  EXPECT_EQ(count_physical_cores(two_cores, read), 2);
  EXPECT_EQ(count_physical_cores(mixed, read), 2);
}

TEST(CoreCount, CpusWithoutTopologyCountAsCores) {
  const std::vector<int> cpus{0, 1, 2};
  EXPECT_EQ(count_physical_cores(cpus, fake_files({})), 3);
}

TEST(CoreCount, CgroupV2QuotaIsTheTightestAlongThePath) {
  const FileReader read = fake_files({
      {"/proc/self/cgroup", "0::/jobs/one\n"},
      {"/sys/fs/cgroup/jobs/one/cpu.max", "max 100000\n"},
      {"/sys/fs/cgroup/jobs/cpu.max", "250000 100000\n"},
      {"/sys/fs/cgroup/cpu.max", "800000 100000\n"},
  });
  EXPECT_DOUBLE_EQ(*cgroup_cpu_quota(read), 2.5);
}

TEST(CoreCount, CgroupV1QuotaIsRead) {
  const FileReader read = fake_files({
      {"/proc/self/cgroup", "5:memory:/a\n3:cpu,cpuacct:/box\n"},
      {"/sys/fs/cgroup/cpu,cpuacct/box/cpu.cfs_quota_us", "150000\n"},
      {"/sys/fs/cgroup/cpu,cpuacct/box/cpu.cfs_period_us", "100000\n"},
  });
  EXPECT_DOUBLE_EQ(*cgroup_cpu_quota(read), 1.5);
}

TEST(CoreCount, NoCgroupFileMeansNoQuota) {
  EXPECT_FALSE(cgroup_cpu_quota(fake_files({})));
  EXPECT_FALSE(cgroup_cpu_quota(fake_files({{"/proc/self/cgroup", "0::/\n"}})));
}

TEST(CoreCount, AvailableCoresAreCappedByTheQuotaRoundedDown) {
  std::map<std::string, std::string> files{{"/proc/self/cgroup", "0::/\n"},
                                           {"/sys/fs/cgroup/cpu.max", "250000 100000\n"}};
  const std::vector<int> eight{0, 1, 2, 3, 4, 5, 6, 7};
  EXPECT_EQ(available_cores(eight, fake_files(files)), 2);
  files["/sys/fs/cgroup/cpu.max"] = "50000 100000\n";  // half a CPU still gets one thread
  EXPECT_EQ(available_cores(eight, fake_files(files)), 1);
  files["/sys/fs/cgroup/cpu.max"] = "max 100000\n";
  EXPECT_EQ(available_cores(eight, fake_files(files)), 8);
}

TEST(CoreCount, CgroupV2MemoryLimitIsTheTightestAlongThePath) {
  const FileReader read = fake_files({
      {"/proc/self/cgroup", "0::/jobs/one\n"},
      {"/sys/fs/cgroup/jobs/one/memory.max", "max\n"},
      {"/sys/fs/cgroup/jobs/memory.max", "8589934592\n"},
      {"/sys/fs/cgroup/memory.max", "17179869184\n"},
  });
  EXPECT_EQ(cgroup_memory_limit(read), uint64_t{8} << 30);
}

TEST(CoreCount, CgroupV1MemoryLimitIsRead) {
  const FileReader read = fake_files({
      {"/proc/self/cgroup", "5:memory:/box\n3:cpu,cpuacct:/box\n"},
      {"/sys/fs/cgroup/memory/box/memory.limit_in_bytes", "2147483648\n"},
      {"/sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n"},
  });
  EXPECT_EQ(cgroup_memory_limit(read), uint64_t{2} << 30);
  // The cpu hierarchy's line is not the memory one.
  EXPECT_FALSE(cgroup_memory_limit(fake_files({{"/proc/self/cgroup", "3:cpu,cpuacct:/box\n"},
                                               {"/sys/fs/cgroup/memory/box/memory.limit_in_bytes", "1024\n"}})));
}

TEST(CoreCount, NoCgroupMemoryFileMeansNoLimit) {
  EXPECT_FALSE(cgroup_memory_limit(fake_files({})));
  EXPECT_FALSE(cgroup_memory_limit(fake_files({{"/proc/self/cgroup", "0::/\n"}, {"/sys/fs/cgroup/memory.max", "max\n"}})));
}

TEST(CoreCount, ProcessMemoryLimitIsPositive) { EXPECT_GT(process_memory_limit(), 0u); }

TEST(CoreCount, DefaultThreadCountIsPositive) { EXPECT_GE(default_thread_count(), 1); }

}  // namespace
}  // namespace synapse::cpu
