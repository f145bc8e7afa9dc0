// CpuBudget: how many CPUs this process may keep busy, for sizing its thread pools. A container's
// CPU limit is a CFS quota on its cgroup, which std::thread::hardware_concurrency() ignores: a pod
// limited to 2 CPUs on a 64-core node would start 64 blend threads and be throttled.
//
// The budget is the affinity mask's CPU count (sched_getaffinity: cpusets, taskset), lowered by the
// smallest CFS quota on the process's cgroup or any ancestor, quota / period rounded up; at
// least 1. Both cgroup versions are read: v2's cpu.max ("max PERIOD" or "QUOTA PERIOD") and v1's
// cpu.cfs_quota_us and cpu.cfs_period_us (quota -1: none). /proc/self/cgroup names the cgroup; a
// container usually sees its own cgroup mounted at the root, so the root's files count too.
//
// Thread safety: a pure function of the files it reads.
#ifndef WORLDGEN_SERVER_SCHEDULING_CPU_BUDGET_H_
#define WORLDGEN_SERVER_SCHEDULING_CPU_BUDGET_H_

#include <string>

namespace worldgen {

struct CpuBudget {
  int cpus = 1;     // >= 1
  std::string why;  // e.g. "cgroup v1 quota 150000/100000 us at /sys/fs/cgroup/cpu; affinity 64"
};

struct CpuBudgetSources {
  std::string cgroup_root = "/sys/fs/cgroup";
  std::string self_cgroup = "/proc/self/cgroup";
  int affinity_cpus = 0;  // 0: this process's sched_getaffinity count
};

CpuBudget DetectCpuBudget(const CpuBudgetSources& sources = {});

}  // namespace worldgen

#endif  // WORLDGEN_SERVER_SCHEDULING_CPU_BUDGET_H_
