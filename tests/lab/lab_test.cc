// worldgen-lab on 256 x 256 columns of the default world: one row per engine blender (whatever
// BlenderMethods() holds), figures that say what the methods are (lerped grid locked to its grid,
// scattered not, every method keeping sum-to-one), and PNGs that decode at the region's size.
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "client/rgb_image.h"
#include "engine/blender.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "tests/client/subprocess.h"

namespace worldgen {
namespace {

using google::protobuf::Struct;
using google::protobuf::Value;
using testing::CommandResult;
using testing::RunCommand;
using testing::TempDir;

constexpr int kSide = 256;

CommandResult Lab(const std::vector<std::string>& flags) {
  std::vector<std::string> argv = {WORLDGEN_LAB_BINARY, "--region=-128,-128,127,127", "--repeat=1"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  absl::StatusOr<CommandResult> result = RunCommand(argv, absl::Seconds(240));
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? *result : CommandResult{};
}

double Number(const Struct& s, const std::string& key) {
  auto it = s.fields().find(key);
  EXPECT_NE(it, s.fields().end()) << key;
  return it == s.fields().end() ? -1.0 : it->second.number_value();
}

TEST(LabTest, JsonHasEveryBlenderAndPicturesThatDecode) {
  absl::StatusOr<std::unique_ptr<TempDir>> dir = TempDir::Create("worldgen-lab");
  ASSERT_TRUE(dir.ok()) << dir.status();
  const CommandResult run = Lab({"--json", absl::StrCat("--out=", (*dir)->path())});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  Struct report;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(run.out, &report).ok()) << run.out;
  EXPECT_EQ(report.fields().at("world").string_value(), "default");

  // Every method, then the method options shown as rows of their own.
  std::vector<std::string> expected;
  for (const BlenderMethod* method : BlenderMethods()) expected.emplace_back(method->name);
  for (const char* variant :
       {"scattered:lattice=1", "scattered:jitter=0", "scattered:interpolation=1",
        "scattered:interpolation=2", "lerped_grid:interpolation=1"}) {
    expected.emplace_back(variant);
  }
  const auto& rows = report.fields().at("methods").list_value().values();
  ASSERT_EQ(rows.size(), static_cast<int>(expected.size()));
  std::map<std::string, Struct> by_name;
  for (int i = 0; i < rows.size(); ++i) {
    const Struct& row = rows[i].struct_value();
    const std::string name = row.fields().at("method").string_value();
    SCOPED_TRACE(name);
    EXPECT_EQ(name, expected[static_cast<size_t>(i)]);
    by_name[name] = row;
    if (row.fields().contains("error"))
      continue;  // This world's parameters do not suit the method.
    EXPECT_GT(Number(row, "ns_per_column"), 0.0);
    EXPECT_GE(Number(row, "biomes_per_chunk"), 1.0);
    EXPECT_GE(Number(row, "single_biome_share"), 0.0);
    EXPECT_LE(Number(row, "single_biome_share"), 1.0);
    EXPECT_LT(Number(row, "max_sum_error"), 1e-6) << "the blending contract: weights sum to 1";
    EXPECT_GT(Number(row, "max_neighbour_jump"), 0.0) << "the region has borders";
    EXPECT_LT(Number(row, "max_neighbour_jump"), 0.5) << "and blends them";
    EXPECT_GE(Number(row, "rms_from_full_resolution"), 0.0);
    const auto& pngs = row.fields().at("pngs").list_value().values();
    ASSERT_EQ(pngs.size(), 4);
    for (const Value& png : pngs) {
      absl::StatusOr<RgbImage> image = ReadPng((*dir)->File(png.string_value()));
      ASSERT_TRUE(image.ok()) << image.status();
      EXPECT_EQ(image->width, kSide) << png.string_value();  // The crop: 64 columns x 4.
      EXPECT_EQ(image->height, kSide) << png.string_value();
    }
  }

  // Seed 001's four methods, by what they are.
  for (const char* name : {"scattered", "full_resolution", "convoluted_grid", "lerped_grid"}) {
    ASSERT_TRUE(by_name.contains(name)) << name;
    ASSERT_FALSE(by_name[name].fields().contains("error")) << name;
  }
  EXPECT_GT(Number(by_name["lerped_grid"], "grid_lock"), 0.99) << "creases on every grid line";
  EXPECT_LT(Number(by_name["lerped_grid:interpolation=1"], "grid_lock"), 0.2)
      << "the B-spline has none";
  EXPECT_LT(Number(by_name["scattered"], "grid_lock"), 0.1);
  EXPECT_LT(Number(by_name["scattered"], "grid_lock") * 3.0,
            Number(by_name["convoluted_grid"], "grid_lock"));
  EXPECT_EQ(Number(by_name["full_resolution"], "rms_from_full_resolution"), 0.0);
  EXPECT_GT(Number(by_name["scattered"], "rms_from_full_resolution"), 0.0);

  absl::StatusOr<RgbImage> montage = ReadPng((*dir)->File("montage.png"));
  ASSERT_TRUE(montage.ok()) << montage.status();
  int ran = 0;
  for (const auto& [name, row] : by_name) ran += row.fields().contains("error") ? 0 : 1;
  EXPECT_EQ(montage->width, 4 + ran * (kSide + 4));
  EXPECT_EQ(montage->height, 4 + 3 * (kSide + 4));
}

TEST(LabTest, TableHasOneRowPerBlender) {
  absl::StatusOr<std::unique_ptr<TempDir>> dir = TempDir::Create("worldgen-lab");
  ASSERT_TRUE(dir.ok()) << dir.status();
  const CommandResult run = Lab({"--methods=lerped_grid,scattered", "--chunk_size=32",
                                 absl::StrCat("--out=", (*dir)->path())});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("grid lock"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("\nlerped_grid "), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("\nscattered "), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find("\nconvoluted_grid"), std::string::npos) << run.out;
  EXPECT_TRUE(std::filesystem::exists((*dir)->File("lerped_grid_height.png")));
  EXPECT_FALSE(std::filesystem::exists((*dir)->File("convoluted_grid_height.png")));

  // A variant: its label in the table, its parameter in force, its files named after it.
  const CommandResult variant = Lab(
      {"--methods=lerped_grid:interpolation=1", "--json", absl::StrCat("--out=", (*dir)->path())});
  ASSERT_EQ(variant.exit_code, 0) << variant.err;
  Struct report;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(variant.out, &report).ok());
  const Struct& row = report.fields().at("methods").list_value().values(0).struct_value();
  EXPECT_EQ(row.fields().at("method").string_value(), "lerped_grid:interpolation=1");
  EXPECT_EQ(row.fields().at("params").struct_value().fields().at("interpolation").number_value(),
            1.0);
  EXPECT_TRUE(std::filesystem::exists((*dir)->File("lerped_grid_interpolation_1_height.png")));
}

// --equal_density: each point-sampling method reads one point per interval^2. The triangular
// lattice at interval s has 2 / (sqrt(3) s^2) points per area, so its interval grows by
// sqrt(2 / sqrt(3)); the square lattice and the grid keep theirs. Counted points near the count's
// edges come and go with the jitter: within 0.5%.
TEST(LabTest, EqualDensityGivesEveryMethodOnePointPerIntervalSquared) {
  absl::StatusOr<std::unique_ptr<TempDir>> dir = TempDir::Create("worldgen-lab");
  ASSERT_TRUE(dir.ok()) << dir.status();
  const CommandResult run =
      Lab({"--methods=scattered,scattered:lattice=1,lerped_grid", "--equal_density", "--json",
           "--interval=8", absl::StrCat("--out=", (*dir)->path())});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  Struct report;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(run.out, &report).ok()) << run.out;
  EXPECT_TRUE(report.fields().at("equal_density").bool_value());
  std::map<std::string, double> interval;
  for (const Value& row : report.fields().at("methods").list_value().values()) {
    const auto& params = row.struct_value().fields().at("params").struct_value();
    interval[row.struct_value().fields().at("method").string_value()] =
        Number(params, params.fields().contains("interval") ? "interval" : "sampling_interval");
  }
  const double triangular = 8 * std::sqrt(2 / std::sqrt(3.0));  // 8.597
  EXPECT_NEAR(interval["scattered"], triangular, 0.005 * triangular);
  EXPECT_NEAR(interval["scattered:lattice=1"], 8.0, 0.005 * 8);
  EXPECT_EQ(interval["lerped_grid"], 8.0);
}

// --world=anchor: the benchmarks' anchor world (4 noise-max biomes), its own blender scattered at
// the lab's interval and radius.
TEST(LabTest, AnchorWorldIsTheBenchmarksWorld) {
  absl::StatusOr<std::unique_ptr<TempDir>> dir = TempDir::Create("worldgen-lab");
  ASSERT_TRUE(dir.ok()) << dir.status();
  const CommandResult run = Lab({"--world=anchor", "--methods=scattered", "--interval=4",
                                 "--radius=48", "--json", absl::StrCat("--out=", (*dir)->path())});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  Struct report;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(run.out, &report).ok()) << run.out;
  EXPECT_EQ(report.fields().at("world").string_value(), "anchor");
  const Struct& row = report.fields().at("methods").list_value().values(0).struct_value();
  const Struct& params = row.fields().at("params").struct_value();
  EXPECT_EQ(Number(params, "sampling_interval"), 4.0);
  EXPECT_EQ(Number(params, "blend_radius"), 48.0);
  EXPECT_GT(Number(row, "biomes_per_chunk"), 1.0);
}

// A world whose biomes declare land or water gets coast figures: its own coastal heights keep the
// sea-level contour on the raw border; --height_mode=blended_weights shows how far plain blended
// heights move it.
TEST(LabTest, CoastFiguresCompareCoastalAndBlendedHeights) {
  absl::StatusOr<std::unique_ptr<TempDir>> dir = TempDir::Create("worldgen-lab");
  ASSERT_TRUE(dir.ok()) << dir.status();
  const std::string world =
      absl::StrCat("--world=", WORLDGEN_SOURCE_DIR, "/docker/worlds/coast.json");
  std::map<std::string, Struct> rows;
  for (const char* mode : {"coastal", "blended_weights"}) {
    const CommandResult run =
        Lab({world, "--region=-256,-256,255,255", "--methods=scattered", "--json",
             absl::StrCat("--height_mode=", mode), absl::StrCat("--out=", (*dir)->path())});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    Struct report;
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(run.out, &report).ok()) << run.out;
    EXPECT_EQ(report.fields().at("height_mode").string_value(), mode);
    rows[mode] = report.fields().at("methods").list_value().values(0).struct_value();
  }
  EXPECT_LE(Number(rows["coastal"], "coast_max_error"), 0.5);
  EXPECT_GT(Number(rows["blended_weights"], "coast_rms_error"), 3.0);
  EXPECT_GT(Number(rows["coastal"], "steepest_slope"), 0.0);

  const CommandResult bad = Lab(
      {world, "--height_mode=flat", "--methods=scattered", absl::StrCat("--out=", (*dir)->path())});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--height_mode=flat is not one of"), std::string::npos) << bad.err;
}

// --slices (issue 25's proof): the example cave world's 3D blend on a horizontal and a vertical
// slice through its caves, against the full-resolution 3D reference. The 3D blend is within 0.1
// RMS of the reference; the 2D blend alone is far from it (so the slices do cross caves); the
// reference sums to one; the pictures decode at the slices' sizes.
TEST(LabTest, SlicesMeasureThe3DBlendAgainstTheFullResolutionReference) {
  absl::StatusOr<std::unique_ptr<TempDir>> dir = TempDir::Create("worldgen-lab");
  ASSERT_TRUE(dir.ok()) << dir.status();
  const std::vector<std::string> flags = {
      absl::StrCat("--world=", WORLDGEN_SOURCE_DIR, "/docker/worlds/caves.json"), "--slices",
      "--region=1984,1984,2047,2047", "--slice_y_range=-72,-9",
      absl::StrCat("--out=", (*dir)->path())};
  const CommandResult run = Lab(flags);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("rms vs full 3D"), std::string::npos) << run.out;
  // slice, cells, cave cells, ns/cell scattered, ns/cell full 3D, rms vs full 3D, 2D only vs
  // full 3D, max|sum-1| full 3D.
  std::map<std::string, std::vector<double>> rows;
  for (absl::string_view line : absl::StrSplit(run.out, '\n')) {
    const std::vector<std::string> cells = absl::StrSplit(line, ' ', absl::SkipWhitespace());
    if (cells.size() != 8 || (cells[0] != "horizontal" && cells[0] != "vertical")) continue;
    for (size_t c = 1; c < cells.size(); ++c) {
      double v = -1.0;
      std::istringstream(cells[c]) >> v;
      rows[cells[0]].push_back(v);
    }
  }
  ASSERT_EQ(rows.size(), 2u) << run.out;
  for (const auto& [name, row] : rows) {
    SCOPED_TRACE(name);
    EXPECT_EQ(row[0], 64.0 * 64.0);
    EXPECT_GT(row[1], 0.1) << "cave cells";
    EXPECT_GT(row[2], 0.0);
    EXPECT_GT(row[3], 0.0);
    EXPECT_GE(row[4], 0.0);
    EXPECT_LT(row[4], 0.1) << "the 3D blend against the full-resolution reference";
    EXPECT_GT(row[5], 0.2) << "the 2D blend alone";
    EXPECT_LT(row[6], 1e-6) << "the reference sums to one";
  }
  for (const char* name : {"horizontal", "vertical"}) {
    for (const char* view : {"map", "scattered", "full_resolution_3d"}) {
      absl::StatusOr<RgbImage> image = ReadPng((*dir)->File(absl::StrCat(name, "_", view, ".png")));
      ASSERT_TRUE(image.ok()) << image.status();
      EXPECT_EQ(image->width, 64);
      EXPECT_EQ(image->height, 64);
    }
    absl::StatusOr<RgbImage> montage = ReadPng((*dir)->File(absl::StrCat(name, "_montage.png")));
    ASSERT_TRUE(montage.ok()) << montage.status();
    EXPECT_EQ(montage->width, 4 + 3 * (64 + 4));
    EXPECT_EQ(montage->height, 4 + 64 + 4);
  }

  std::vector<std::string> json_flags = flags;
  json_flags.push_back("--json");
  const CommandResult json = Lab(json_flags);
  ASSERT_EQ(json.exit_code, 0) << json.err;
  Struct report;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json.out, &report).ok()) << json.out;
  EXPECT_EQ(report.fields().at("world").string_value(), "caves");
  EXPECT_EQ(Number(report.fields().at("cave_blending").struct_value(), "vertical_blend_radius"),
            8.0);
  const auto& slices = report.fields().at("slices").list_value().values();
  ASSERT_EQ(slices.size(), 2);
  for (const Value& slice : slices) {
    const Struct& s = slice.struct_value();
    const std::string name = s.fields().at("slice").string_value();
    EXPECT_NEAR(Number(s, "rms_from_full_resolution_3d"), rows[name][4], 0.5e-4)
        << name << ": the table's figure, to its 4 decimals";
    EXPECT_EQ(s.fields().at("pngs").list_value().values_size(), 4) << name;
  }
}

// --layered: candidate layered 3D methods on the same slices. Each is within 0.15 RMS of the
// reference (its formula's surface share and kernel at work: a share left unscaled or a kernel
// of the wrong reach lands far from it); layers twice as dense, each with its own lattice, are
// closer than layers sharing one and sum more terms per cell; a bad spacing is refused.
TEST(LabTest, SlicesMeasureCandidateLayeredMethods) {
  absl::StatusOr<std::unique_ptr<TempDir>> dir = TempDir::Create("worldgen-lab");
  ASSERT_TRUE(dir.ok()) << dir.status();
  const std::string world =
      absl::StrCat("--world=", WORLDGEN_SOURCE_DIR, "/docker/worlds/caves.json");
  const std::string out = absl::StrCat("--out=", (*dir)->path());
  const CommandResult run = Lab({world, "--slices", "--region=1984,1984,2047,2047",
                                 "--slice_y_range=-72,-9", "--layered=2ri,4s", "--json", out});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  Struct report;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(run.out, &report).ok()) << run.out;
  const auto& slices = report.fields().at("slices").list_value().values();
  ASSERT_EQ(slices.size(), 2);
  for (const Value& slice : slices) {
    const Struct& s = slice.struct_value();
    SCOPED_TRACE(s.fields().at("slice").string_value());
    const auto& layered = s.fields().at("layered").list_value().values();
    ASSERT_EQ(layered.size(), 2);
    const Struct& dense = layered[0].struct_value();
    const Struct& sparse = layered[1].struct_value();
    EXPECT_EQ(dense.fields().at("method").string_value(), "layers 2, radial, own (x, z)");
    EXPECT_EQ(sparse.fields().at("method").string_value(), "layers 4, separable, shared (x, z)");
    for (const Struct* m : {&dense, &sparse}) {
      EXPECT_GT(Number(*m, "rms_from_full_resolution_3d"), 0.0);
      EXPECT_LT(Number(*m, "rms_from_full_resolution_3d"), 0.15);
    }
    EXPECT_LT(Number(dense, "rms_from_full_resolution_3d"),
              Number(sparse, "rms_from_full_resolution_3d"));
    EXPECT_GT(Number(dense, "terms_per_cell"), Number(sparse, "terms_per_cell"));
    EXPECT_GT(Number(sparse, "terms_per_cell"), 20.0);
  }
  const CommandResult bad = Lab({world, "--slices", "--layered=4,0s", out});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("\"0s\" is not a layer spacing"), std::string::npos) << bad.err;
}

TEST(LabTest, SlicesNeedACaveWorld) {
  absl::StatusOr<std::unique_ptr<TempDir>> dir = TempDir::Create("worldgen-lab");
  ASSERT_TRUE(dir.ok()) << dir.status();
  const std::string out = absl::StrCat("--out=", (*dir)->File("never"));
  const CommandResult flat = Lab({"--slices", out});
  EXPECT_EQ(flat.exit_code, 2);
  EXPECT_NE(flat.err.find("world default has no cave biomes"), std::string::npos) << flat.err;
  const CommandResult range =
      Lab({absl::StrCat("--world=", WORLDGEN_SOURCE_DIR, "/docker/worlds/caves.json"), "--slices",
           "--slice_y_range=0,-8", out});
  EXPECT_EQ(range.exit_code, 2);
  EXPECT_NE(range.err.find("--slice_y_range=0,-8"), std::string::npos) << range.err;
  EXPECT_FALSE(std::filesystem::exists((*dir)->File("never")))
      << "nothing written for a refused run";
}

TEST(LabTest, BadFlagsAreRefusedWithTheReason) {
  absl::StatusOr<std::unique_ptr<TempDir>> dir = TempDir::Create("worldgen-lab");
  ASSERT_TRUE(dir.ok()) << dir.status();
  const std::string out = absl::StrCat("--out=", (*dir)->File("never"));
  const CommandResult unknown = Lab({"--methods=no_such_method", out});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("no_such_method"), std::string::npos) << unknown.err;
  EXPECT_FALSE(std::filesystem::exists((*dir)->File("never")))
      << "nothing written for a refused run";
  const CommandResult param = Lab({"--methods=lerped_grid:sampling_interval=4", out});
  EXPECT_EQ(param.exit_code, 2);
  EXPECT_NE(param.err.find("is not PARAM=NUMBER with a parameter of lerped_grid"),
            std::string::npos)
      << param.err;
  const CommandResult size = Lab({"--chunk_size=12", out});
  EXPECT_EQ(size.exit_code, 2);
  EXPECT_NE(size.err.find("--chunk_size=12"), std::string::npos) << size.err;
  // Parameters no method can run with: every row says why, and the run, which measured nothing,
  // fails.
  const CommandResult none = Lab({"--methods=scattered:jitter=nan", out});
  EXPECT_EQ(none.exit_code, 1) << none.out;
  EXPECT_NE(none.err.find("no method ran: "), std::string::npos) << none.err;
}

}  // namespace
}  // namespace worldgen
