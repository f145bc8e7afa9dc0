// Calls to a WorldGen server for the end-to-end tests: blocking wrappers with a generous deadline
// and request builders. Every call returns the gRPC status; none retries.
#ifndef WORLDGEN_TESTS_SERVER_SERVICE_CALLS_H_
#define WORLDGEN_TESTS_SERVER_SERVICE_CALLS_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "worldgen/v1/worldgen.grpc.pb.h"

namespace worldgen::testing {

// Deadline of every call made through these helpers.
inline constexpr absl::Duration kCallTimeout = absl::Seconds(60);

std::chrono::system_clock::time_point Deadline(absl::Duration timeout);

// A stub on an insecure channel to `target` ("127.0.0.1:<port>").
std::unique_ptr<v1::WorldGen::Stub> Connect(const std::string& target);

struct StreamResult {
  grpc::Status status;
  std::vector<v1::ChunkData> chunks;  // In arrival order.
};

// Reads a GenerateChunk stream to its end; `headers` are added to the call's metadata (as a
// balancer forwards a call).
StreamResult GenerateAll(v1::WorldGen::Stub& stub, const v1::GenerateChunkRequest& request,
                         absl::Duration timeout = kCallTimeout,
                         const std::vector<std::pair<std::string, std::string>>& headers = {});

grpc::Status Sample(v1::WorldGen::Stub& stub, const v1::SampleWeightsRequest& request,
                    v1::SampleWeightsResponse* response);

grpc::Status Describe(v1::WorldGen::Stub& stub, const std::string& world,
                      v1::WorldDescription* response);

// A request for the inclusive chunk rectangle, or for an explicit list of chunks (size 0 = the
// world's chunk size).
v1::GenerateChunkRequest RegionRequest(int64_t min_x, int64_t min_z, int64_t max_x, int64_t max_z,
                                       uint32_t size = 16);
v1::GenerateChunkRequest ListRequest(const std::vector<std::pair<int64_t, int64_t>>& coords,
                                     uint32_t size = 16);

// Bit-level float equality (distinguishes -0 from +0, equal NaN payloads).
bool SameBits(float a, float b);

}  // namespace worldgen::testing

#endif  // WORLDGEN_TESTS_SERVER_SERVICE_CALLS_H_
