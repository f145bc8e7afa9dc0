#include "server/scheduling/cpu_budget.h"

#include <sched.h>

#include <cmath>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace worldgen {
namespace {

std::optional<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A CFS limit: quota microseconds of CPU per period microseconds.
struct Quota {
  double quota_us = 0, period_us = 0;
  std::string where;
  double cpus() const { return quota_us / period_us; }
};

// v2's "QUOTA PERIOD" ("max PERIOD": no limit).
std::optional<Quota> ReadV2(const std::string& dir) {
  std::optional<std::string> text = ReadFile(dir + "/cpu.max");
  if (!text.has_value()) return std::nullopt;
  std::vector<absl::string_view> fields =
      absl::StrSplit(absl::StripAsciiWhitespace(*text), ' ', absl::SkipEmpty());
  Quota q;
  if (fields.size() != 2 || !absl::SimpleAtod(fields[0], &q.quota_us) ||
      !absl::SimpleAtod(fields[1], &q.period_us) || q.quota_us <= 0 || q.period_us <= 0) {
    return std::nullopt;
  }
  q.where = absl::StrCat("cgroup v2 cpu.max ", fields[0], " ", fields[1], " at ", dir);
  return q;
}

// v1's cpu.cfs_quota_us (-1: no limit) and cpu.cfs_period_us.
std::optional<Quota> ReadV1(const std::string& dir) {
  std::optional<std::string> quota = ReadFile(dir + "/cpu.cfs_quota_us");
  std::optional<std::string> period = ReadFile(dir + "/cpu.cfs_period_us");
  if (!quota.has_value() || !period.has_value()) return std::nullopt;
  Quota q;
  if (!absl::SimpleAtod(absl::StripAsciiWhitespace(*quota), &q.quota_us) ||
      !absl::SimpleAtod(absl::StripAsciiWhitespace(*period), &q.period_us) || q.quota_us <= 0 ||
      q.period_us <= 0) {
    return std::nullopt;
  }
  q.where = absl::StrCat("cgroup v1 cfs quota ", q.quota_us, "/", q.period_us, " us at ", dir);
  return q;
}

// `dir`, its parents up to (and including) `root`: where a limit on this cgroup may be set.
std::vector<std::string> SelfAndAncestors(const std::string& root, absl::string_view path) {
  std::vector<std::string> dirs;
  std::string relative(absl::StripSuffix(path, "/"));
  while (true) {
    dirs.push_back(root + relative);
    if (relative.empty()) break;
    const size_t slash = relative.rfind('/');
    relative = slash == std::string::npos ? "" : relative.substr(0, slash);
  }
  return dirs;
}

int AffinityCpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
  return static_cast<int>(std::thread::hardware_concurrency());
}

}  // namespace

CpuBudget DetectCpuBudget(const CpuBudgetSources& sources) {
  const int affinity = sources.affinity_cpus > 0 ? sources.affinity_cpus : AffinityCpus();
  std::optional<Quota> tightest;
  auto consider = [&](std::optional<Quota> q) {
    if (q.has_value() && (!tightest.has_value() || q->cpus() < tightest->cpus())) tightest = q;
  };
  if (std::optional<std::string> self = ReadFile(sources.self_cgroup)) {
    for (absl::string_view line : absl::StrSplit(*self, '\n', absl::SkipEmpty())) {
      // hierarchy-id:controllers:path
      std::vector<absl::string_view> parts = absl::StrSplit(line, absl::MaxSplits(':', 2));
      if (parts.size() != 3) continue;
      if (parts[0] == "0" && parts[1].empty()) {
        for (const std::string& dir : SelfAndAncestors(sources.cgroup_root, parts[2])) {
          consider(ReadV2(dir));
        }
        continue;
      }
      std::vector<absl::string_view> controllers = absl::StrSplit(parts[1], ',');
      bool cpu = false;
      for (absl::string_view c : controllers) cpu |= c == "cpu";
      if (!cpu) continue;
      // v1 mounts the cpu controller at cpu/ (often also cpu,cpuacct/, a link to the same).
      for (const std::string& mount : {std::string("/cpu"), absl::StrCat("/", parts[1])}) {
        for (const std::string& dir : SelfAndAncestors(sources.cgroup_root + mount, parts[2])) {
          consider(ReadV1(dir));
        }
      }
    }
  }
  CpuBudget budget;
  budget.cpus = std::max(affinity, 1);
  budget.why = absl::StrCat("affinity ", affinity, " CPUs");
  if (tightest.has_value()) {
    const int quota_cpus = std::max(1, static_cast<int>(std::ceil(tightest->cpus() - 1e-9)));
    if (quota_cpus < budget.cpus) budget.cpus = quota_cpus;
    budget.why = absl::StrCat(tightest->where, " = ", tightest->cpus(), " CPUs; ", budget.why);
  }
  return budget;
}

}  // namespace worldgen
