// worldgen-echo-server: a bench-only WorldGen server that answers GenerateChunk with pre-built
// ChunkData of the same sizes as worldgen's, with no blending, so a load run measures what gRPC and
// protobuf alone cost on this machine. worldgen's chunks/s at the same concurrency, divided by this
// server's, is how much the service costs beyond gRPC itself (issue 12's target: >= 0.8).
//
// At start it blends `--prebuilt` chunks of the default world (16x16, weights, heights and dominant
// biome, the load generator's request) and then streams, for each requested coordinate, one of them
// with the coordinate replaced, one write outstanding at a time (as worldgen's stream does for a
// reader that keeps up). Only GenerateChunk is implemented.
//
//   build/bench/worldgen-echo-server --port=50070 &
//   build/client/worldgen --target=127.0.0.1:50070 load --concurrency=4 --duration=10s
//   --pattern=hot
#include <signal.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "engine/hash.h"
#include "engine/world.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "server/service/request_validation.h"
#include "server/service/wire_encoding.h"
#include "worldgen/v1/worldgen.grpc.pb.h"

ABSL_FLAG(int32_t, port, 50070, "gRPC port on 127.0.0.1; 0 picks a free one (printed)");
ABSL_FLAG(int32_t, prebuilt, 256, "Distinct pre-built chunks streamed round-robin");

namespace worldgen {
namespace {

class EchoStream final : public grpc::ServerWriteReactor<v1::ChunkData> {
 public:
  EchoStream(const std::vector<v1::ChunkData>& prebuilt, ChunkSelection selection)
      : prebuilt_(prebuilt), selection_(std::move(selection)) {
    WriteNext();
  }
  void OnWriteDone(bool ok) override {
    if (!ok) {
      Finish(grpc::Status(grpc::StatusCode::CANCELLED, "client gone"));
      return;
    }
    WriteNext();
  }
  void OnDone() override { delete this; }

 private:
  void WriteNext() {
    if (next_ == selection_.count()) {
      Finish(grpc::Status::OK);
      return;
    }
    const ChunkSelection::Coord c = selection_.at(next_);
    current_ = prebuilt_[static_cast<size_t>(HashCoords(3, c.x, c.z) % prebuilt_.size())];
    current_.mutable_coord()->set_x(c.x);
    current_.mutable_coord()->set_z(c.z);
    ++next_;
    StartWrite(&current_);
  }

  const std::vector<v1::ChunkData>& prebuilt_;
  const ChunkSelection selection_;
  int64_t next_ = 0;
  v1::ChunkData current_;
};

class EchoService final : public v1::WorldGen::CallbackService {
 public:
  explicit EchoService(std::vector<v1::ChunkData> prebuilt) : prebuilt_(std::move(prebuilt)) {}

  grpc::ServerWriteReactor<v1::ChunkData>* GenerateChunk(
      grpc::CallbackServerContext*, const v1::GenerateChunkRequest* request) override {
    absl::StatusOr<ChunkSelection> selection = ValidateChunkRequest(*request, 16, RequestLimits{});
    if (!selection.ok()) {
      class Refused final : public grpc::ServerWriteReactor<v1::ChunkData> {
       public:
        explicit Refused(grpc::Status s) { Finish(std::move(s)); }
        void OnDone() override { delete this; }
      };
      return new Refused(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                                      std::string(selection.status().message())));
    }
    return new EchoStream(prebuilt_, *std::move(selection));
  }

 private:
  const std::vector<v1::ChunkData> prebuilt_;
};

int Run(int argc, char** argv) {
  // As worldgen-server (server/main.cc says why): the echo server is its gRPC floor.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  absl::ParseCommandLine(argc, argv);
  const std::shared_ptr<const World> world = *World::Create(DefaultWorldSpec());
  std::vector<v1::ChunkData> prebuilt;
  const int count = std::max(1, absl::GetFlag(FLAGS_prebuilt));
  for (int k = 0; k < count; ++k) {
    // The load generator's random pattern draws from [-4096, 4096)^2 chunks: same mix of borders.
    const int64_t cx = static_cast<int64_t>(HashCoords(11, k, 0) % 8192) - 4096;
    const int64_t cz = static_cast<int64_t>(HashCoords(11, k, 1) % 8192) - 4096;
    ChunkBlend blend = *world->BlendChunk(cx, cz, 16, {.heights = true});
    EncodeChunk(blend, &prebuilt.emplace_back());
  }
  EchoService service(std::move(prebuilt));
  int bound_port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort(absl::StrCat("127.0.0.1:", absl::GetFlag(FLAGS_port)),
                           grpc::InsecureServerCredentials(), &bound_port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr) {
    std::fprintf(stderr, "worldgen-echo-server: cannot listen on port %d\n",
                 absl::GetFlag(FLAGS_port));
    return 1;
  }
  std::printf("worldgen-echo-server: listening on 127.0.0.1:%d (%d pre-built chunks)\n", bound_port,
              count);
  std::fflush(stdout);
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  int signal_number = 0;
  sigwait(&stop, &signal_number);
  server->Shutdown();
  return 0;
}

}  // namespace
}  // namespace worldgen

int main(int argc, char** argv) { return worldgen::Run(argc, argv); }
