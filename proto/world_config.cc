#include "proto/world_config.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <system_error>

#include "absl/algorithm/container.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "engine/blender.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/util/json_util.h"

namespace worldgen {
namespace {

// The engine's enums carry the wire's values (world_spec.h), so they convert by value.
static_assert(static_cast<int>(BiomeSurface::kLand) == v1::BIOME_SURFACE_LAND &&
              static_cast<int>(BiomeSurface::kWater) == v1::BIOME_SURFACE_WATER);
static_assert(static_cast<int>(HeightMode::kBlendedWeights) == v1::HEIGHT_MODE_BLENDED_WEIGHTS &&
              static_cast<int>(HeightMode::kChunkInterpolated) ==
                  v1::HEIGHT_MODE_CHUNK_INTERPOLATED &&
              static_cast<int>(HeightMode::kCoastal) == v1::HEIGHT_MODE_COASTAL);

absl::StatusOr<uint8_t> ColorChannel(uint32_t value, absl::string_view field) {
  if (value > 255) {
    return absl::InvalidArgumentError(absl::StrCat(field, " = ", value, " is outside [0, 255]"));
  }
  return static_cast<uint8_t>(value);
}

absl::StatusOr<BiomeSpec> BiomeSpecFromConfig(const v1::BiomeConfig& config, int index) {
  const std::string prefix = absl::StrCat("biomes[", index, "]");
  BiomeSpec biome;
  biome.id = config.id();
  biome.name = config.name();
  absl::StatusOr<uint8_t> r = ColorChannel(config.color().r(), prefix + ".color.r");
  if (!r.ok()) return r.status();
  absl::StatusOr<uint8_t> g = ColorChannel(config.color().g(), prefix + ".color.g");
  if (!g.ok()) return g.status();
  absl::StatusOr<uint8_t> b = ColorChannel(config.color().b(), prefix + ".color.b");
  if (!b.ok()) return b.status();
  biome.color_r = *r;
  biome.color_g = *g;
  biome.color_b = *b;
  biome.temperature = config.temperature();
  biome.humidity = config.humidity();
  if (config.has_height_base()) biome.height_base = config.height_base();
  if (config.has_height_amplitude()) biome.height_amplitude = config.height_amplitude();
  if (config.has_height_frequency()) biome.height_frequency = config.height_frequency();
  biome.blend_radius = config.blend_radius();
  biome.parameter_radius = config.parameter_radius();
  if (!v1::BiomeSurface_IsValid(config.surface())) {
    return absl::InvalidArgumentError(absl::StrCat(
        prefix, ".surface = ", static_cast<int>(config.surface()), " is not a known BiomeSurface"));
  }
  biome.surface = static_cast<BiomeSurface>(config.surface());  // Same values (static_assert).
  if (config.has_cave()) biome.cave = CaveBand{config.cave().y_min(), config.cave().y_max()};
  return biome;
}

constexpr absl::string_view kBlenderEnumPrefix = "BLENDER_KIND_";

// The engine's methods and the wire are matched by name: enum value BLENDER_KIND_<NAME> is the
// method
// "<name>", whose parameters are the fields of the WorldConfig message field "<name>".
absl::StatusOr<const BlenderMethod*> MethodFromConfig(const v1::WorldConfig& config) {
  const google::protobuf::EnumValueDescriptor* value =
      v1::BlenderKind_descriptor()->FindValueByNumber(config.blender());
  absl::string_view name =
      value == nullptr ? absl::string_view() : absl::string_view(value->name());
  const BlenderMethod* method = nullptr;
  if (absl::ConsumePrefix(&name, kBlenderEnumPrefix)) {
    method = FindMethod(absl::AsciiStrToLower(name));
  }
  if (method == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("blender = ", config.blender(), " is not a known BlenderKind"));
  }
  return method;
}

// The method's parameters from its config message, and from the deprecated top-level aliases.
absl::Status BlenderParamsFromConfig(const v1::WorldConfig& config, const BlenderMethod& method,
                                     std::map<std::string, double>* params) {
  const google::protobuf::Descriptor* descriptor = config.GetDescriptor();
  const google::protobuf::Reflection* reflection = config.GetReflection();
  for (const BlenderMethod* other : BlenderMethods()) {
    const google::protobuf::FieldDescriptor* field =
        descriptor->FindFieldByName(std::string(other->name));
    if (field == nullptr || !reflection->HasField(config, field)) continue;
    if (other != &method) {
      return absl::InvalidArgumentError(absl::StrCat(
          other->name, " is set, but blender is ", kBlenderEnumPrefix,
          absl::AsciiStrToUpper(method.name), ": set only the chosen method's parameters"));
    }
    const google::protobuf::Message& message = reflection->GetMessage(config, field);
    std::vector<const google::protobuf::FieldDescriptor*> set;
    message.GetReflection()->ListFields(message, &set);
    for (const google::protobuf::FieldDescriptor* param : set) {
      if (param->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_DOUBLE) {
        return absl::InternalError(absl::StrCat(param->full_name(), " is not a double field"));
      }
      (*params)[param->name()] = message.GetReflection()->GetDouble(message, param);
    }
  }
  const struct {
    absl::string_view name;
    bool present;
    double value;
  } aliases[] = {{"sampling_interval", config.has_sampling_interval(), config.sampling_interval()},
                 {"jitter", config.has_jitter(), config.jitter()},
                 {"blend_radius", config.has_blend_radius(), config.blend_radius()}};
  for (const auto& alias : aliases) {
    if (!alias.present) continue;
    if (FindParam(method, alias.name) == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(alias.name, " (a deprecated top-level alias) is not a parameter of the ",
                       method.name, " blender"));
    }
    if (!params->emplace(std::string(alias.name), alias.value).second) {
      return absl::InvalidArgumentError(absl::StrCat(alias.name, " is set both at the top level ",
                                                     "(deprecated) and as ", method.name, ".",
                                                     alias.name));
    }
  }
  return absl::OkStatus();
}

// Sets config.blender and the method's message with every declared parameter's value in force.
void BlenderToConfig(const WorldSpec& spec, v1::WorldConfig* config) {
  const BlenderMethod& method = MethodOf(spec.blender.kind);
  const google::protobuf::EnumValueDescriptor* value =
      v1::BlenderKind_descriptor()->FindValueByName(
          absl::StrCat(kBlenderEnumPrefix, absl::AsciiStrToUpper(method.name)));
  if (value != nullptr) config->set_blender(static_cast<v1::BlenderKind>(value->number()));
  const google::protobuf::FieldDescriptor* field =
      config->GetDescriptor()->FindFieldByName(std::string(method.name));
  if (field == nullptr) return;
  google::protobuf::Message* message = config->GetReflection()->MutableMessage(config, field);
  for (const BlenderParamDef& def : method.params) {
    const google::protobuf::FieldDescriptor* param =
        message->GetDescriptor()->FindFieldByName(std::string(def.name));
    if (param != nullptr)
      message->GetReflection()->SetDouble(message, param, BlenderParam(spec, def.name));
  }
}

// Opens without blocking (a FIFO or device path must not hang start-up), accepts only regular files
// of at most kMaxWorldConfigBytes, and reads no more than that even if the file grows meanwhile.
// Symlinks are followed (config mounts use them); a loop fails with ELOOP.
absl::StatusOr<std::string> ReadConfigFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    return absl::NotFoundError(absl::StrCat(path, ": cannot open: ", std::strerror(error)));
  }
  struct FdCloser {
    int fd;
    ~FdCloser() { close(fd); }
  } closer{fd};
  struct stat info;
  if (fstat(fd, &info) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": cannot stat: ", std::strerror(errno)));
  }
  if (!S_ISREG(info.st_mode)) {
    const char* kind = S_ISDIR(info.st_mode)    ? "a directory"
                       : S_ISFIFO(info.st_mode) ? "a FIFO"
                       : S_ISCHR(info.st_mode)  ? "a character device"
                       : S_ISBLK(info.st_mode)  ? "a block device"
                       : S_ISSOCK(info.st_mode) ? "a socket"
                                                : "not a regular file";
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": is ", kind, "; a world config must be a regular file"));
  }
  auto too_big = [&](int64_t size) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": ", size, " bytes; a world config may have at most ", kMaxWorldConfigBytes));
  };
  if (info.st_size > kMaxWorldConfigBytes) return too_big(info.st_size);
  std::string contents(static_cast<size_t>(kMaxWorldConfigBytes) + 1, '\0');
  size_t total = 0;
  while (total < contents.size()) {
    const ssize_t n = read(fd, contents.data() + total, contents.size() - total);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return absl::DataLossError(absl::StrCat(path, ": read error: ", std::strerror(errno)));
    }
    if (n == 0) break;
    total += static_cast<size_t>(n);
  }
  if (total > static_cast<size_t>(kMaxWorldConfigBytes))
    return too_big(static_cast<int64_t>(total));
  contents.resize(total);
  return contents;
}

}  // namespace

absl::StatusOr<WorldSpec> WorldSpecFromConfig(const v1::WorldConfig& config) {
  // Not part of the spec (WorldRegistry::Load checks it), but a config holding one that cannot be
  // a fingerprint is not a valid world file.
  if (const std::string& pin = config.expected_fingerprint();
      !pin.empty() && !(pin.size() == 16 && absl::c_all_of(pin, [](char c) {
                          return absl::ascii_isdigit(c) || (c >= 'a' && c <= 'f');
                        }))) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected_fingerprint \"", absl::CHexEscape(pin.substr(0, 64)),
                     "\" is not 16 lowercase hex digits (worldgen check and worldgen describe "
                     "print a world's fingerprint)"));
  }
  WorldSpec spec;
  spec.name = config.name();
  spec.seed = config.seed();
  spec.biomes.clear();
  spec.biomes.reserve(config.biomes_size());
  for (int i = 0; i < config.biomes_size(); ++i) {
    absl::StatusOr<BiomeSpec> biome = BiomeSpecFromConfig(config.biomes(i), i);
    if (!biome.ok()) return biome.status();
    spec.biomes.push_back(*std::move(biome));
  }
  switch (config.biome_source()) {
    case v1::BIOME_SOURCE_KIND_CLIMATE:
      spec.biome_source = BiomeSourceKind::kClimate;
      break;
    case v1::BIOME_SOURCE_KIND_NOISE_MAX:
      spec.biome_source = BiomeSourceKind::kNoiseMax;
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("biome_source = ", static_cast<int>(config.biome_source()),
                       " is not a known BiomeSourceKind (BIOME_SOURCE_KIND_CLIMATE or "
                       "BIOME_SOURCE_KIND_NOISE_MAX)"));
  }
  if (config.has_noise_max()) {
    if (spec.biome_source != BiomeSourceKind::kNoiseMax) {
      return absl::InvalidArgumentError(
          "noise_max is set, but biome_source is not BIOME_SOURCE_KIND_NOISE_MAX: set only the "
          "chosen source's parameters");
    }
    const v1::NoiseMaxConfig& noise_max = config.noise_max();
    if (noise_max.has_frequency()) spec.noise_max.frequency = noise_max.frequency();
    if (noise_max.has_octaves()) spec.noise_max.octaves = noise_max.octaves();
    if (noise_max.has_lacunarity()) spec.noise_max.lacunarity = noise_max.lacunarity();
    if (noise_max.has_gain()) spec.noise_max.gain = noise_max.gain();
  }
  const v1::ClimateConfig& climate = config.climate();
  if (climate.has_temperature_frequency()) {
    spec.climate.temperature_frequency = climate.temperature_frequency();
  }
  if (climate.has_humidity_frequency())
    spec.climate.humidity_frequency = climate.humidity_frequency();
  if (climate.has_octaves()) spec.climate.octaves = climate.octaves();
  const v1::HeightConfig& heights = config.heights();
  if (!v1::HeightMode_IsValid(heights.mode())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "heights.mode = ", static_cast<int>(heights.mode()), " is not a known HeightMode"));
  }
  spec.heights.mode = static_cast<HeightMode>(heights.mode());  // Same values (static_assert).
  if (heights.has_chunk_size()) {
    // uint32 on the wire; anything above 1024 is rejected by validation, so clamp before narrowing.
    spec.heights.chunk_size =
        static_cast<int>(std::min<uint32_t>(heights.chunk_size(), std::numeric_limits<int>::max()));
  }
  if (heights.has_blend_reach()) spec.heights.blend_reach = heights.blend_reach();
  if (heights.has_sea_level()) spec.heights.sea_level = heights.sea_level();
  if (heights.has_coast_width()) spec.heights.coast_width = heights.coast_width();
  if (heights.has_shore_slope()) spec.heights.shore_slope = heights.shore_slope();
  if (config.has_caves()) {
    if (std::none_of(spec.biomes.begin(), spec.biomes.end(),
                     [](const BiomeSpec& b) { return b.cave.has_value(); })) {
      return absl::InvalidArgumentError(
          "caves is set, but no biome has a cave band: the cave climate and 3D blending apply "
          "only to a world with cave biomes");
    }
    const v1::CaveConfig& caves = config.caves();
    if (caves.has_frequency()) spec.caves.frequency = caves.frequency();
    if (caves.has_octaves()) spec.caves.octaves = caves.octaves();
    VolumeBlendParams& blending = spec.caves.blending;
    if (caves.has_sampling_interval()) blending.sampling_interval = caves.sampling_interval();
    if (caves.has_jitter()) blending.jitter = caves.jitter();
    if (caves.has_blend_radius()) blending.blend_radius = caves.blend_radius();
    if (caves.has_vertical_blend_radius()) {
      blending.vertical_blend_radius = caves.vertical_blend_radius();
    }
  }
  absl::StatusOr<const BlenderMethod*> method = MethodFromConfig(config);
  if (!method.ok()) return method.status();
  spec.blender.kind = (*method)->kind;
  if (absl::Status s = BlenderParamsFromConfig(config, **method, &spec.blender.params); !s.ok()) {
    return s;
  }
  if (config.has_chunk_size()) {
    // uint32 on the wire; anything above 256 is rejected by validation, so clamp before narrowing.
    spec.chunk_size =
        static_cast<int>(std::min<uint32_t>(config.chunk_size(), std::numeric_limits<int>::max()));
  }
  absl::Status valid = ValidateWorldSpec(spec);
  if (!valid.ok()) return valid;
  return spec;
}

v1::WorldConfig WorldConfigFromSpec(const WorldSpec& spec) {
  v1::WorldConfig config;
  config.set_name(spec.name);
  config.set_seed(spec.seed);
  for (const BiomeSpec& biome : spec.biomes) {
    v1::BiomeConfig* out = config.add_biomes();
    out->set_id(biome.id);
    out->set_name(biome.name);
    out->mutable_color()->set_r(biome.color_r);
    out->mutable_color()->set_g(biome.color_g);
    out->mutable_color()->set_b(biome.color_b);
    out->set_temperature(biome.temperature);
    out->set_humidity(biome.humidity);
    out->set_height_base(biome.height_base);
    out->set_height_amplitude(biome.height_amplitude);
    out->set_height_frequency(biome.height_frequency);
    out->set_blend_radius(biome.blend_radius);
    out->set_parameter_radius(biome.parameter_radius);
    out->set_surface(static_cast<v1::BiomeSurface>(biome.surface));
    if (biome.cave.has_value()) {
      out->mutable_cave()->set_y_min(biome.cave->y_min);
      out->mutable_cave()->set_y_max(biome.cave->y_max);
    }
  }
  switch (spec.biome_source) {
    case BiomeSourceKind::kClimate:
      config.set_biome_source(v1::BIOME_SOURCE_KIND_CLIMATE);
      break;
    case BiomeSourceKind::kNoiseMax: {
      config.set_biome_source(v1::BIOME_SOURCE_KIND_NOISE_MAX);
      v1::NoiseMaxConfig* noise_max = config.mutable_noise_max();
      noise_max->set_frequency(spec.noise_max.frequency);
      noise_max->set_octaves(spec.noise_max.octaves);
      noise_max->set_lacunarity(spec.noise_max.lacunarity);
      noise_max->set_gain(spec.noise_max.gain);
      break;
    }
  }
  config.mutable_climate()->set_temperature_frequency(spec.climate.temperature_frequency);
  config.mutable_climate()->set_humidity_frequency(spec.climate.humidity_frequency);
  config.mutable_climate()->set_octaves(spec.climate.octaves);
  BlenderToConfig(spec, &config);
  v1::HeightConfig* heights = config.mutable_heights();
  heights->set_mode(static_cast<v1::HeightMode>(spec.heights.mode));
  heights->set_chunk_size(static_cast<uint32_t>(spec.heights.chunk_size));
  heights->set_blend_reach(spec.heights.blend_reach);
  heights->set_sea_level(spec.heights.sea_level);
  heights->set_coast_width(spec.heights.coast_width);
  heights->set_shore_slope(spec.heights.shore_slope);
  config.set_chunk_size(static_cast<uint32_t>(spec.chunk_size));
  if (std::any_of(spec.biomes.begin(), spec.biomes.end(),
                  [](const BiomeSpec& b) { return b.cave.has_value(); })) {
    v1::CaveConfig* caves = config.mutable_caves();
    caves->set_frequency(spec.caves.frequency);
    caves->set_octaves(spec.caves.octaves);
    caves->set_sampling_interval(spec.caves.blending.sampling_interval);
    caves->set_jitter(spec.caves.blending.jitter);
    caves->set_blend_radius(spec.caves.blending.blend_radius);
    caves->set_vertical_blend_radius(spec.caves.blending.vertical_blend_radius);
  }
  return config;
}

namespace {

absl::StatusOr<v1::WorldConfig> WorldConfigFromJson(absl::string_view json) {
  v1::WorldConfig config;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  auto parsed = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(json.data(), json.size()), &config, options);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("not a worldgen.v1.WorldConfig in JSON: ", parsed.ToString()));
  }
  return config;
}

}  // namespace

absl::StatusOr<WorldSpec> WorldSpecFromJson(absl::string_view json) {
  absl::StatusOr<v1::WorldConfig> config = WorldConfigFromJson(json);
  if (!config.ok()) return config.status();
  return WorldSpecFromConfig(*config);
}

absl::StatusOr<std::vector<WorldSpec>> LoadWorldSpecs(const std::vector<std::string>& paths) {
  absl::StatusOr<std::vector<WorldFile>> files = LoadWorldFiles(paths);
  if (!files.ok()) return files.status();
  std::vector<WorldSpec> specs;
  specs.reserve(files->size());
  for (WorldFile& file : *files) specs.push_back(std::move(file.spec));
  return specs;
}

std::vector<std::string> WorldConfigPaths(const std::vector<std::string>& values) {
  std::vector<std::string> paths;
  for (const std::string& value : values) {
    for (absl::string_view path : absl::StrSplit(value, ',', absl::SkipEmpty())) {
      paths.emplace_back(path);
    }
  }
  return paths;
}

absl::StatusOr<std::vector<WorldFile>> LoadWorldFiles(const std::vector<std::string>& paths) {
  // std::filesystem only with error_code: nothing here throws, whatever the paths point at.
  std::vector<std::string> files;
  for (const std::string& path : paths) {
    std::error_code error;
    if (!std::filesystem::is_directory(path, error)) {
      files.push_back(path);  // Anything but a readable regular file fails in ReadConfigFile.
      continue;
    }
    std::vector<std::string> in_dir;
    std::filesystem::directory_iterator it(path, error);
    for (; !error && it != std::filesystem::directory_iterator(); it.increment(error)) {
      const std::filesystem::path& entry = it->path();
      if (entry.extension() != ".json") continue;
      std::error_code entry_error;
      if (it->is_directory(entry_error)) continue;  // A loop or dangling link fails when read.
      if (in_dir.size() == kMaxWorldConfigFilesPerDirectory) {
        return absl::InvalidArgumentError(
            absl::StrCat(path, ": more than ", kMaxWorldConfigFilesPerDirectory,
                         " *.json files; split the worlds over several directories"));
      }
      in_dir.push_back(entry.string());
    }
    if (error) {
      return absl::NotFoundError(absl::StrCat(path, ": cannot list directory: ", error.message()));
    }
    std::sort(in_dir.begin(), in_dir.end());
    files.insert(files.end(), in_dir.begin(), in_dir.end());
  }
  std::vector<WorldFile> loaded;
  for (const std::string& file : files) {
    absl::StatusOr<std::string> json = ReadConfigFile(file);
    if (!json.ok()) return json.status();
    absl::StatusOr<v1::WorldConfig> config = WorldConfigFromJson(*json);
    absl::StatusOr<WorldSpec> spec =
        config.ok() ? WorldSpecFromConfig(*config) : absl::StatusOr<WorldSpec>(config.status());
    if (!spec.ok()) {
      return absl::Status(spec.status().code(), absl::StrCat(file, ": ", spec.status().message()));
    }
    loaded.push_back({.path = file,
                      .spec = *std::move(spec),
                      .expected_fingerprint = config->expected_fingerprint()});
  }
  return loaded;
}

}  // namespace worldgen
