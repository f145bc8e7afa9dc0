// 200 players loading their surroundings at the same instant, from Node's pure-JS gRPC stack
// (@grpc/grpc-js, an HTTP/2 implementation independent of gRPC C++), on ONE channel, without
// retries: each opens a GenerateChunk stream of 16 chunks of 16x16 (4x4 chunks around its own spot),
// deadline 10 s (x WORLDGEN_TIMEOUT_FACTOR). Every stream must end OK with its 16 chunks: the server
// admits a burst that fits.
//
// Usage: node burst_client.mjs TARGET PROTO_DIR [STREAMS]    Prints one "node-burst:" line; exit 0
// when every stream succeeded.
import grpc from "@grpc/grpc-js";
import protoLoader from "@grpc/proto-loader";
import path from "node:path";

const [target, protoDir, streamsArg] = process.argv.slice(2);
if (!target || !protoDir) {
  console.error("usage: node burst_client.mjs TARGET PROTO_DIR [STREAMS]");
  process.exit(2);
}
const streams = Number(streamsArg || 200);
// 10 s, x3 under AddressSanitizer (WORLDGEN_TIMEOUT_FACTOR, set by ctest): the admission estimate
// there is ~5x the uninstrumented one and refuses what cannot finish in time.
const deadlineMs = 10000 * Number(process.env.WORLDGEN_TIMEOUT_FACTOR || 1);
const definition = protoLoader.loadSync(path.join(protoDir, "worldgen/v1/worldgen.proto"), {
  includeDirs: [protoDir],
  keepCase: true,
  longs: String,
});
const v1 = grpc.loadPackageDefinition(definition).worldgen.v1;
const client = new v1.WorldGen(target, grpc.credentials.createInsecure(), {
  "grpc.enable_retries": 0,
  "grpc.max_receive_message_length": -1,
});

const start = process.hrtime.bigint();
const results = await Promise.all(Array.from({ length: streams }, (_, i) => new Promise((resolve) => {
  const x = (i % 20) * 64;
  const z = Math.floor(i / 20) * 64;
  const call = client.GenerateChunk(
    { region: { min_x: x, min_z: z, max_x: x + 3, max_z: z + 3 }, chunk_size: 16 },
    { deadline: new Date(Date.now() + deadlineMs) });
  let chunks = 0;
  call.on("data", () => { chunks += 1; });
  call.on("error", (e) => resolve({ code: e.code, chunks, message: e.details }));
  call.on("end", () => resolve({ code: grpc.status.OK, chunks }));
})));
const seconds = Number(process.hrtime.bigint() - start) / 1e9;
client.close();

const ok = results.filter((r) => r.code === grpc.status.OK && r.chunks === 16).length;
const refused = results.filter((r) => r.code === grpc.status.RESOURCE_EXHAUSTED).length;
const other = results.filter((r) => !(r.code === grpc.status.OK && r.chunks === 16) &&
  r.code !== grpc.status.RESOURCE_EXHAUSTED);
const chunks = results.reduce((sum, r) => sum + r.chunks, 0);
console.log(`node-burst: ${streams} streams of 16 chunks on one @grpc/grpc-js channel: ${ok} complete,` +
  ` ${refused} refused, ${other.length} other` +
  (other.length ? ` (e.g. ${grpc.status[other[0].code]}: ${other[0].message})` : "") +
  (refused ? ` (e.g. "${results.find((r) => r.code === grpc.status.RESOURCE_EXHAUSTED).message}")` : "") +
  `; ${chunks} chunks in ${seconds.toFixed(2)} s`);
process.exit(ok === streams ? 0 : 1);
