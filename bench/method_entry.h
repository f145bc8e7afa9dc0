// A blender as the lab and compare_bench name it: a method, optionally with parameters of its own
// ("lerped_grid:interpolation=1"), and the method options both show as rows of their own.
#ifndef WORLDGEN_BENCH_METHOD_ENTRY_H_
#define WORLDGEN_BENCH_METHOD_ENTRY_H_

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "engine/blender.h"

namespace worldgen::bench {

// Method options shown beside the methods themselves (lab table, compare_bench's BM_Variant).
inline constexpr const char* kMethodVariants[] = {
    "scattered:lattice=1", "scattered:jitter=0", "scattered:interpolation=1",
    "scattered:interpolation=2", "lerped_grid:interpolation=1"};

struct MethodEntry {
  std::string label;  // As given: "lerped_grid" or "lerped_grid:interpolation=1".
  const BlenderMethod* method = nullptr;
  std::map<std::string, double> params;  // Set on top of whatever else the caller sets.

  // The label as a file name prefix (':' and '=' become '_').
  std::string FileName() const {
    std::string name = label;
    std::replace_if(
        name.begin(), name.end(), [](char c) { return c == ':' || c == '='; }, '_');
    return name;
  }
};

// NAME or NAME:param=value:..., each parameter one the method declares; `what` names the input in
// errors (e.g. "--methods").
inline absl::StatusOr<MethodEntry> ParseMethodEntry(absl::string_view text,
                                                    absl::string_view what) {
  const std::vector<absl::string_view> parts = absl::StrSplit(text, ':');
  MethodEntry entry{std::string(text), FindMethod(parts[0]), {}};
  if (entry.method == nullptr) {
    std::vector<absl::string_view> known;
    for (const BlenderMethod* k : BlenderMethods()) known.push_back(k->name);
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": \"", parts[0], "\" is not a blender (known: ", absl::StrJoin(known, ", "), ")"));
  }
  for (size_t i = 1; i < parts.size(); ++i) {
    const std::pair<absl::string_view, absl::string_view> kv =
        absl::StrSplit(parts[i], absl::MaxSplits('=', 1));
    double value = 0;
    if (FindParam(*entry.method, kv.first) == nullptr || !absl::SimpleAtod(kv.second, &value)) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": \"", parts[i], "\" in \"", text,
                                                     "\" is not PARAM=NUMBER with a parameter of ",
                                                     entry.method->name));
    }
    entry.params[std::string(kv.first)] = value;
  }
  return entry;
}

}  // namespace worldgen::bench

#endif  // WORLDGEN_BENCH_METHOD_ENTRY_H_
