#!/usr/bin/python3
"""A second, independent worldgen client in Python, checked against the C++ client.

Generates Python stubs from proto/ into a temp dir (see generate_stubs),
calls DescribeWorld, GenerateChunk (a region) and SampleWeights, and compares every response with the
`worldgen` CLI's --json output for the same request (the C++ client underneath): the messages must
serialize to the same bytes, floats included. Run with /usr/bin/python3 (apt's grpc modules).

usage: python_client.py --target=HOST:PORT --cli=PATH/worldgen --proto_dir=PATH/proto
           [--tls_ca=CA.pem [--tls_cert=CLIENT.pem --tls_key=CLIENT.key]]
With --tls_ca both clients connect with TLS (grpcio's own, and the CLI's --tls_ca_file), and
with --tls_cert/--tls_key as a client of mutual TLS.
Exit 0 and a final "python-client: OK ..." line on success, 1 on any mismatch or error.
"""
import argparse
import subprocess
import sys
import tempfile


def generate_stubs(proto_dir, out_dir):
    """Python messages and gRPC stubs from proto/, into out_dir (added to sys.path).

    First choice is grpc_tools.protoc (apt's python3-grpc-tools). Debian 12's build of it bundles
    protoc 3.5.1, which predates proto3 `optional` (world_config.proto uses it) and fails; then the
    same stubs come from apt's protoc 3.21 with apt's grpc_python_plugin (protobuf-compiler-grpc).
    """
    protos = ["worldgen/v1/world_config.proto", "worldgen/v1/worldgen.proto"]
    outputs = ["-I", proto_dir, "--python_out=" + out_dir, "--grpc_python_out=" + out_dir]
    tools = subprocess.run([sys.executable, "-m", "grpc_tools.protoc"] + outputs + protos,
                           capture_output=True, text=True)
    if tools.returncode != 0:
        print("python-client: grpc_tools.protoc cannot compile proto/ (%s); using /usr/bin/protoc "
              "with /usr/bin/grpc_python_plugin" % tools.stderr.strip().splitlines()[-1])
        subprocess.run(["/usr/bin/protoc", "--plugin=protoc-gen-grpc_python=/usr/bin/grpc_python_plugin"]
                       + outputs + protos, check=True)
    sys.path.insert(0, out_dir)


def cli_json(cli, target, args, message):
    from google.protobuf import json_format
    result = subprocess.run([cli, "--target=" + target] + CLI_TLS_FLAGS + args,
                            capture_output=True, text=True, timeout=60)
    if result.returncode != 0:
        raise RuntimeError("worldgen %s failed (%d): %s" % (" ".join(args), result.returncode,
                                                             result.stderr))
    return json_format.Parse(result.stdout, message)


# The CLI's TLS flags, mirroring this client's (set in main).
CLI_TLS_FLAGS = []


def open_channel(grpc, args):
    """A channel to args.target: plaintext, or TLS with args.tls_* (PEM files)."""
    if not args.tls_ca:
        return grpc.insecure_channel(args.target)

    def read(path):
        with open(path, "rb") as f:
            return f.read()

    key = read(args.tls_key) if args.tls_key else None
    chain = read(args.tls_cert) if args.tls_cert else None
    credentials = grpc.ssl_channel_credentials(root_certificates=read(args.tls_ca),
                                               private_key=key, certificate_chain=chain)
    return grpc.secure_channel(args.target, credentials)


def same(a, b):
    return a.SerializeToString(deterministic=True) == b.SerializeToString(deterministic=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--target", required=True)
    parser.add_argument("--cli", required=True)
    parser.add_argument("--proto_dir", required=True)
    parser.add_argument("--tls_ca")
    parser.add_argument("--tls_cert")
    parser.add_argument("--tls_key")
    args = parser.parse_args()
    if args.tls_ca:
        CLI_TLS_FLAGS.append("--tls_ca_file=" + args.tls_ca)
    if args.tls_cert:
        CLI_TLS_FLAGS.extend(["--tls_cert_file=" + args.tls_cert, "--tls_key_file=" + args.tls_key])

    with tempfile.TemporaryDirectory(prefix="worldgen-py") as out_dir:
        generate_stubs(args.proto_dir, out_dir)
        import grpc
        from worldgen.v1 import worldgen_pb2, worldgen_pb2_grpc

        failures = []
        with open_channel(grpc, args) as channel:
            stub = worldgen_pb2_grpc.WorldGenStub(channel)

            # DescribeWorld.
            world = stub.DescribeWorld(worldgen_pb2.DescribeWorldRequest(), timeout=30)
            cpp_world = cli_json(args.cli, args.target, ["describe", "--json"],
                                 worldgen_pb2.WorldDescription())
            if not same(world, cpp_world):
                failures.append("DescribeWorld differs")
            if world.config.name != "default" or len(world.config.biomes) == 0:
                failures.append("DescribeWorld: unexpected world %r" % world.config.name)

            # GenerateChunk over a region; each chunk against `worldgen chunk X Z --json`.
            request = worldgen_pb2.GenerateChunkRequest(
                chunk_size=16, include_heights=True, include_dominant_biome=True,
                region=worldgen_pb2.ChunkRegion(min_x=-2, min_z=-1, max_x=1, max_z=1))
            chunks = list(stub.GenerateChunk(request, timeout=60))
            coords = sorted((c.coord.x, c.coord.z) for c in chunks)
            want = sorted((x, z) for x in range(-2, 2) for z in range(-1, 2))
            if coords != want:
                failures.append("GenerateChunk returned chunks %r, want %r" % (coords, want))
            for chunk in chunks:
                n = chunk.chunk_size
                for column in range(n * n):
                    total = sum(1.0 if chunk.single_biome else b.weights[column] for b in chunk.biomes)
                    if abs(total - 1.0) > 1e-5:
                        failures.append("chunk (%d, %d) column %d sums to %r"
                                        % (chunk.coord.x, chunk.coord.z, column, total))
                        break
                cpp_chunk = cli_json(args.cli, args.target,
                                     ["chunk", str(chunk.coord.x), str(chunk.coord.z), "--size=16",
                                      "--json"], worldgen_pb2.ChunkData())
                if not same(chunk, cpp_chunk):
                    failures.append("chunk (%d, %d) differs" % (chunk.coord.x, chunk.coord.z))

            # SampleWeights.
            points = [(0.0, 0.0), (100.5, -7.25), (320.0, 640.0), (-12345.75, 999.125)]
            points += [(i * 91.5 - 2000.0, i * -47.25 + 300.0) for i in range(40)]
            sample_request = worldgen_pb2.SampleWeightsRequest(
                include_heights=True, points=[worldgen_pb2.Point(x=x, z=z) for x, z in points])
            samples = stub.SampleWeights(sample_request, timeout=30)
            cli_args = ["sample", "--json"]
            for x, z in points:
                cli_args += [repr(x), repr(z)]
            cpp_samples = cli_json(args.cli, args.target, cli_args,
                                   worldgen_pb2.SampleWeightsResponse())
            if len(samples.samples) != len(points):
                failures.append("SampleWeights returned %d samples for %d points"
                                % (len(samples.samples), len(points)))
            if not same(samples, cpp_samples):
                failures.append("SampleWeights differs")

        for failure in failures:
            print("python-client: FAIL " + failure)
        if failures:
            return 1
        print("python-client: OK %d chunks, %d points, %d biomes; identical to the C++ client%s"
              % (len(chunks), len(points), len(world.config.biomes),
                 " (TLS)" if args.tls_ca else ""))
        return 0


if __name__ == "__main__":
    sys.exit(main())
