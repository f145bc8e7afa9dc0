#include "server/scheduling/cpu_budget.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace worldgen {
namespace {

// A fake /sys/fs/cgroup and /proc/self/cgroup under a temporary directory.
class FakeCgroups {
 public:
  FakeCgroups() {
    std::string pattern = (std::filesystem::temp_directory_path() / "cpu-budget-XXXXXX").string();
    root_ = mkdtemp(pattern.data());
  }
  ~FakeCgroups() { std::filesystem::remove_all(root_); }
  void Write(const std::string& relative, const std::string& text) {
    const std::filesystem::path path = root_ / relative;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << text;
  }
  CpuBudgetSources Sources(int affinity) const {
    return {(root_ / "sys").string(), (root_ / "self_cgroup").string(), affinity};
  }

 private:
  std::filesystem::path root_;
};

TEST(CpuBudgetTest, NoCgroupLimitMeansTheAffinityMask) {
  FakeCgroups fake;
  EXPECT_EQ(DetectCpuBudget(fake.Sources(12)).cpus, 12);  // No /proc/self/cgroup at all.
  fake.Write("self_cgroup", "0::/kubepods/pod1\n");
  fake.Write("sys/kubepods/pod1/cpu.max", "max 100000\n");
  const CpuBudget budget = DetectCpuBudget(fake.Sources(12));
  EXPECT_EQ(budget.cpus, 12);
  EXPECT_EQ(budget.why, "affinity 12 CPUs");
}

TEST(CpuBudgetTest, CgroupV2QuotaRoundsUpAndTheTightestAncestorWins) {
  FakeCgroups fake;
  fake.Write("self_cgroup", "0::/kubepods/pod1/app\n");
  fake.Write("sys/kubepods/pod1/app/cpu.max", "max 100000\n");
  fake.Write("sys/kubepods/pod1/cpu.max", "150000 100000\n");  // 1.5 CPUs: 2 threads.
  fake.Write("sys/kubepods/cpu.max", "800000 100000\n");
  CpuBudget budget = DetectCpuBudget(fake.Sources(64));
  EXPECT_EQ(budget.cpus, 2);
  EXPECT_NE(budget.why.find("cgroup v2 cpu.max 150000 100000"), std::string::npos) << budget.why;
  fake.Write("sys/kubepods/pod1/cpu.max", "50000 100000\n");  // Half a CPU: still one thread.
  EXPECT_EQ(DetectCpuBudget(fake.Sources(64)).cpus, 1);
}

TEST(CpuBudgetTest, CgroupV1QuotaAtTheContainersOwnRoot) {
  FakeCgroups fake;
  // Docker on cgroup v1 mounts the container's own cgroup at /sys/fs/cgroup/cpu, while
  // /proc/self/cgroup still names the host's path: the root's files count.
  fake.Write("self_cgroup", "4:memory:/docker/abc\n3:cpu,cpuacct:/docker/abc\n");
  fake.Write("sys/cpu/cpu.cfs_quota_us", "100000\n");
  fake.Write("sys/cpu/cpu.cfs_period_us", "100000\n");
  CpuBudget budget = DetectCpuBudget(fake.Sources(2));
  EXPECT_EQ(budget.cpus, 1);
  EXPECT_NE(budget.why.find("cgroup v1"), std::string::npos) << budget.why;
  fake.Write("sys/cpu/cpu.cfs_quota_us", "-1\n");  // No limit.
  EXPECT_EQ(DetectCpuBudget(fake.Sources(2)).cpus, 2);
}

TEST(CpuBudgetTest, AnAffinityMaskBelowTheQuotaAndUnreadableFilesAreHandled) {
  FakeCgroups fake;
  fake.Write("self_cgroup", "1:cpu:/a\n0::/\n");
  fake.Write("sys/cpu/a/cpu.cfs_quota_us", "400000\n");
  fake.Write("sys/cpu/a/cpu.cfs_period_us", "100000\n");
  fake.Write("sys/cpu.max", "not numbers\n");           // Ignored.
  EXPECT_EQ(DetectCpuBudget(fake.Sources(3)).cpus, 3);  // taskset to 3 CPUs under a 4-CPU quota.
  EXPECT_EQ(DetectCpuBudget(fake.Sources(8)).cpus, 4);
}

TEST(CpuBudgetTest, ThisProcessGetsAtLeastOneCpu) { EXPECT_GE(DetectCpuBudget().cpus, 1); }

}  // namespace
}  // namespace worldgen
