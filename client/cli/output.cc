#include "client/cli/output.h"

#include <algorithm>
#include <charconv>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"

namespace worldgen::cli {
namespace {

std::string NameOf(const absl::flat_hash_map<uint32_t, std::string>& names, uint32_t id) {
  auto it = names.find(id);
  return it == names.end() ? absl::StrCat("biome-", id) : it->second;
}

// `v` in the fewest digits that read back as `v` (%g's six would merge nearby coordinates).
std::string Exact(double v) {
  char buffer[32];
  const std::to_chars_result end = std::to_chars(buffer, buffer + sizeof buffer, v);
  return std::string(buffer, end.ptr);
}

void AppendGrid(std::string& out, int n, const std::function<std::string(int, int)>& cell) {
  for (int lz = 0; lz < n; ++lz) {
    absl::StrAppend(&out, "   ");
    for (int lx = 0; lx < n; ++lx) absl::StrAppend(&out, " ", cell(lx, lz));
    absl::StrAppend(&out, "\n");
  }
}

}  // namespace

absl::StatusOr<std::string> ToJson(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.always_print_primitive_fields = true;
  options.preserve_proto_field_names = true;
  std::string json;
  auto status = google::protobuf::util::MessageToJsonString(message, &json, options);
  if (!status.ok()) return absl::InternalError(std::string(status.message()));
  return json;
}

std::string JsonString(absl::string_view text) {
  google::protobuf::Value value;
  value.set_string_value(std::string(text));
  std::string json;
  if (!google::protobuf::util::MessageToJsonString(value, &json).ok()) return "\"(not UTF-8)\"";
  return json;
}

absl::flat_hash_map<uint32_t, std::string> BiomeNames(const v1::WorldDescription& world) {
  absl::flat_hash_map<uint32_t, std::string> names;
  for (const v1::BiomeConfig& biome : world.config().biomes()) names[biome.id()] = biome.name();
  return names;
}

std::string DescribeText(const v1::WorldDescription& world) {
  const v1::WorldConfig& c = world.config();
  const v1::ServerLimits& l = world.limits();
  std::string out =
      absl::StrFormat("world %s  seed %d  chunk_size %d  fingerprint %s\n  blender %s:", c.name(),
                      c.seed(), c.chunk_size(), world.fingerprint(), world.blender());
  // The engine's own figures: every parameter in force, then derived ones (min_blend_radius, ...).
  for (const v1::BlenderFigure& figure : world.blender_figures()) {
    absl::StrAppendFormat(&out, "  %s %g", figure.name(), figure.value());
  }
  absl::StrAppendFormat(
      &out,
      "\n  climate: temperature_frequency %g  humidity_frequency %g  octaves %d\n"
      "limits: chunk_size %d..%d  max_chunks_per_request %d  max_points_per_request %d  "
      "coordinate bound %s  max_splat_bytes_per_chunk %d  max_sampling_points_per_request %d\n",
      c.climate().temperature_frequency(), c.climate().humidity_frequency(), c.climate().octaves(),
      l.min_chunk_size(), l.max_chunk_size(), l.max_chunks_per_request(),
      l.max_points_per_request(), Exact(l.world_coordinate_bound()), l.max_splat_bytes_per_chunk(),
      l.max_sampling_points_per_request());
  absl::StrAppend(&out, "worlds:");
  for (const std::string& name : world.available_worlds()) absl::StrAppend(&out, " ", name);
  absl::StrAppendFormat(&out, "\n%d biomes:\n", c.biomes_size());
  absl::StrAppendFormat(&out, "  %4s  %-16s %-8s %6s %6s %9s %9s %8s %6s\n", "id", "name", "colour",
                        "temp", "humid", "h_base", "h_ampl", "h_freq", "radius");
  for (const v1::BiomeConfig& b : c.biomes()) {
    absl::StrAppendFormat(&out, "  %4d  %-16s #%02x%02x%02x  %6.2f %6.2f %9g %9g %8g %6g\n", b.id(),
                          b.name(), b.color().r(), b.color().g(), b.color().b(), b.temperature(),
                          b.humidity(), b.height_base(), b.height_amplitude(), b.height_frequency(),
                          b.blend_radius());
  }
  return out;
}

std::string ChunkText(const ChunkView& chunk, const v1::WorldDescription& world) {
  const auto names = BiomeNames(world);
  const int n = chunk.size();
  std::string out = absl::StrFormat(
      "chunk (%d, %d)  size %d  columns x [%d, %d) z [%d, %d)%s  %d biome(s)\n", chunk.chunk_x(),
      chunk.chunk_z(), n, chunk.origin_x(), chunk.origin_x() + n, chunk.origin_z(),
      chunk.origin_z() + n, chunk.single_biome() ? "  single biome" : "", chunk.biome_ids().size());
  for (uint32_t id : chunk.biome_ids()) {
    double sum = 0;
    float lo = 1, hi = 0;
    for (int lz = 0; lz < n; ++lz) {
      for (int lx = 0; lx < n; ++lx) {
        const float w = chunk.Weight(id, lx, lz);
        sum += w;
        lo = std::min(lo, w);
        hi = std::max(hi, w);
      }
    }
    absl::StrAppendFormat(&out, "  biome %d %-16s mean %.4f  min %.4f  max %.4f\n", id,
                          NameOf(names, id), sum / (n * n), lo, hi);
  }
  for (uint32_t id : chunk.biome_ids()) {
    absl::StrAppendFormat(&out, "weights of %s (%d), rows z = %d.., columns x = %d..:\n",
                          NameOf(names, id), id, chunk.origin_z(), chunk.origin_x());
    AppendGrid(out, n,
               [&](int lx, int lz) { return absl::StrFormat("%.3f", chunk.Weight(id, lx, lz)); });
  }
  if (chunk.has_heights()) {
    absl::StrAppend(&out, "heights:\n");
    AppendGrid(out, n,
               [&](int lx, int lz) { return absl::StrFormat("%7.2f", chunk.Height(lx, lz)); });
  }
  absl::StrAppend(&out, "dominant biome ids:\n");
  AppendGrid(out, n,
             [&](int lx, int lz) { return absl::StrFormat("%3d", chunk.DominantBiome(lx, lz)); });
  if (chunk.has_source_biome()) {
    absl::StrAppend(&out, "source biome ids (the unblended raw map):\n");
    AppendGrid(out, n,
               [&](int lx, int lz) { return absl::StrFormat("%3d", chunk.SourceBiome(lx, lz)); });
  }
  return out;
}

std::string VolumeText(const ChunkView& chunk, const v1::WorldDescription& world) {
  const auto names = BiomeNames(world);
  const int m = chunk.cells_per_side(), c = chunk.cell_size(), rows = 16 / c;
  std::string out = absl::StrFormat(
      "chunk (%d, %d)  size %d  columns x [%d, %d) z [%d, %d)  y [%d, %d)  cells of %d blocks, "
      "%d x %d x %d\n",
      chunk.chunk_x(), chunk.chunk_z(), chunk.size(), chunk.origin_x(),
      chunk.origin_x() + chunk.size(), chunk.origin_z(), chunk.origin_z() + chunk.size(),
      chunk.min_y(), chunk.max_y(), c, m, chunk.cell_rows(), m);
  for (int s = chunk.proto().sections_size() - 1; s >= 0; --s) {
    const int64_t y0 = chunk.min_y() + 16 * int64_t{s};
    absl::StrAppendFormat(&out, "section y [%d, %d)%s:", y0, y0 + 16,
                          chunk.section_single_biome(s) ? "  single biome" : "");
    for (uint32_t id : chunk.section_biome_ids(s)) {
      double sum = 0;
      for (int ly = s * rows; ly < (s + 1) * rows; ++ly) {
        for (int lz = 0; lz < m; ++lz) {
          for (int lx = 0; lx < m; ++lx) sum += chunk.CellWeight(id, lx, ly, lz);
        }
      }
      absl::StrAppendFormat(&out, "  %s (%d) mean %.4f", NameOf(names, id), id,
                            sum / (rows * m * m));
    }
    absl::StrAppend(&out, "\n");
    if (chunk.section_single_biome(s)) continue;
    for (int ly = (s + 1) * rows - 1; ly >= s * rows; --ly) {
      absl::StrAppendFormat(
          &out, "  y %d dominant biome ids%s:\n", chunk.min_y() + c * ly,
          chunk.proto().sections(s).source_biome_size() > 0 ? " | source biome ids" : "");
      for (int lz = 0; lz < m; ++lz) {
        absl::StrAppend(&out, "   ");
        for (int lx = 0; lx < m; ++lx) {
          absl::StrAppendFormat(&out, " %3d", chunk.CellDominantBiome(lx, ly, lz));
        }
        if (chunk.proto().sections(s).source_biome_size() > 0) {
          absl::StrAppend(&out, "  |");
          for (int lx = 0; lx < m; ++lx) {
            absl::StrAppendFormat(&out, " %3d", chunk.CellSourceBiome(lx, ly, lz));
          }
        }
        absl::StrAppend(&out, "\n");
      }
    }
  }
  return out;
}

std::string SamplesText(const v1::SampleWeightsRequest& request,
                        const v1::SampleWeightsResponse& response,
                        const v1::WorldDescription& world) {
  const auto names = BiomeNames(world);
  std::string out;
  for (int i = 0; i < response.samples_size() && i < request.points_size(); ++i) {
    const v1::PointWeights& s = response.samples(i);
    const v1::Point& p = request.points(i);
    const std::string at =
        p.has_y() ? absl::StrCat("(", Exact(p.x()), ", ", Exact(p.y()), ", ", Exact(p.z()), ")")
                  : absl::StrCat("(", Exact(p.x()), ", ", Exact(p.z()), ")");
    absl::StrAppendFormat(&out, "%s  dominant %s (%d)", at, NameOf(names, s.dominant_biome()),
                          s.dominant_biome());
    if (request.include_heights()) absl::StrAppendFormat(&out, "  height %.3f", s.height());
    if (request.include_source_biome()) {
      absl::StrAppendFormat(&out, "  source %s (%d)", NameOf(names, s.source_biome()),
                            s.source_biome());
    }
    absl::StrAppend(&out, " ");
    for (const v1::BiomeWeight& w : s.weights()) {
      absl::StrAppendFormat(&out, " %s=%.6f", NameOf(names, w.biome_id()), w.weight());
    }
    absl::StrAppend(&out, "\n");
  }
  return out;
}

}  // namespace worldgen::cli
