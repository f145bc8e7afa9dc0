#include "tests/server/service_calls.h"

#include <cstring>

#include "absl/time/clock.h"

namespace worldgen::testing {

std::chrono::system_clock::time_point Deadline(absl::Duration timeout) {
  return absl::ToChronoTime(absl::Now() + timeout);
}

std::unique_ptr<v1::WorldGen::Stub> Connect(const std::string& target) {
  return v1::WorldGen::NewStub(grpc::CreateChannel(target, grpc::InsecureChannelCredentials()));
}

StreamResult GenerateAll(v1::WorldGen::Stub& stub, const v1::GenerateChunkRequest& request,
                         absl::Duration timeout,
                         const std::vector<std::pair<std::string, std::string>>& headers) {
  grpc::ClientContext context;
  context.set_deadline(Deadline(timeout));
  for (const auto& [name, value] : headers) context.AddMetadata(name, value);
  StreamResult result;
  std::unique_ptr<grpc::ClientReader<v1::ChunkData>> reader = stub.GenerateChunk(&context, request);
  v1::ChunkData chunk;
  while (reader->Read(&chunk)) result.chunks.push_back(chunk);
  result.status = reader->Finish();
  return result;
}

grpc::Status Sample(v1::WorldGen::Stub& stub, const v1::SampleWeightsRequest& request,
                    v1::SampleWeightsResponse* response) {
  grpc::ClientContext context;
  context.set_deadline(Deadline(kCallTimeout));
  return stub.SampleWeights(&context, request, response);
}

grpc::Status Describe(v1::WorldGen::Stub& stub, const std::string& world,
                      v1::WorldDescription* response) {
  grpc::ClientContext context;
  context.set_deadline(Deadline(kCallTimeout));
  v1::DescribeWorldRequest request;
  request.set_world(world);
  return stub.DescribeWorld(&context, request, response);
}

v1::GenerateChunkRequest RegionRequest(int64_t min_x, int64_t min_z, int64_t max_x, int64_t max_z,
                                       uint32_t size) {
  v1::GenerateChunkRequest request;
  request.set_chunk_size(size);
  request.mutable_region()->set_min_x(min_x);
  request.mutable_region()->set_min_z(min_z);
  request.mutable_region()->set_max_x(max_x);
  request.mutable_region()->set_max_z(max_z);
  return request;
}

v1::GenerateChunkRequest ListRequest(const std::vector<std::pair<int64_t, int64_t>>& coords,
                                     uint32_t size) {
  v1::GenerateChunkRequest request;
  request.set_chunk_size(size);
  request.mutable_chunks();
  for (auto [x, z] : coords) {
    v1::ChunkCoord* coord = request.mutable_chunks()->add_coords();
    coord->set_x(x);
    coord->set_z(z);
  }
  return request;
}

bool SameBits(float a, float b) { return std::memcmp(&a, &b, sizeof(float)) == 0; }

}  // namespace worldgen::testing
