// Times the published Java scattered blender (KdotJPG/Scattered-Biome-Blender, not part of this
// repository) on the anchor map's terms, so blend_bench's figures can be set against it in one
// session: 16x16 chunks at chunk-aligned positions spread over a 32768-block square, one thread, a
// noise-max biome callback over the library's OpenSimplex2S (4 biomes, 3 octaves, base frequency
// 0.002, lacunarity 2, gain 0.5: the statistics bench/anchor_world.h matches), the kernel radius
// equal to ours (the library adds its lattice's minimum radius to the padding it is given, so the
// padding passed is radius minus that minimum).
//
// Usage: java ReferenceBench <interval> <radius> [rounds]
// Prints one line per round: ns per column, biomes per chunk, share of single-biome chunks.
public final class ReferenceBench {
    private static final int BIOMES = 4;
    private static final int OCTAVES = 3;
    private static final int CHUNK = 16;
    private static final int CHUNKS = 512;
    private static final OpenSimplex2S[] FIELDS = new OpenSimplex2S[BIOMES * OCTAVES];

    static {
        for (int k = 0; k < FIELDS.length; k++) {
            FIELDS[k] = new OpenSimplex2S(7001 + k);
        }
    }

    private static int biomeAt(double x, double z) {
        int best = 0;
        double bestValue = Double.NEGATIVE_INFINITY;
        for (int biome = 0; biome < BIOMES; biome++) {
            double value = 0;
            double frequency = 0.002;
            double amplitude = 1;
            for (int octave = 0; octave < OCTAVES; octave++) {
                value += amplitude * FIELDS[biome * OCTAVES + octave].noise2(x * frequency, z * frequency);
                frequency *= 2;
                amplitude *= 0.5;
            }
            if (value > bestValue) {
                bestValue = value;
                best = biome;
            }
        }
        return best;
    }

    public static void main(String[] args) {
        final double interval = Double.parseDouble(args[0]);
        final double radius = Double.parseDouble(args[1]);
        final int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 8;
        final double frequency = 1.0 / interval;
        final double padding = radius - ScatteredBiomeBlender.getInternalMinBlendRadiusForFrequency(frequency);
        if (padding < 0) {
            throw new IllegalArgumentException("radius below the lattice's minimum for this interval");
        }
        final ScatteredBiomeBlender blender = new ScatteredBiomeBlender(frequency, padding, CHUNK);

        final int[] chunkX = new int[CHUNKS];
        final int[] chunkZ = new int[CHUNKS];
        final java.util.SplittableRandom random = new java.util.SplittableRandom(42);
        final int span = 32768 / CHUNK;
        for (int k = 0; k < CHUNKS; k++) {
            chunkX[k] = (random.nextInt(span) - span / 2) * CHUNK;
            chunkZ[k] = (random.nextInt(span) - span / 2) * CHUNK;
        }
        // A few seconds per round at either anchor (about 2 s and 3.5 s on the machine of README).
        final int passes = Math.max(1, (int) Math.round(60.0 * 24 * 24 / (radius * radius) * (interval / 8)));

        for (int round = 0; round < rounds; round++) {
            long layers = 0;
            long single = 0;
            long chunks = 0;
            final long start = System.nanoTime();
            for (int pass = 0; pass < passes; pass++) {
                for (int k = 0; k < CHUNKS; k++) {
                    int count = 0;
                    for (LinkedBiomeWeightMap m = blender.getBlendForChunk(1234, chunkX[k], chunkZ[k], ReferenceBench::biomeAt);
                         m != null; m = m.getNext()) {
                        count++;
                    }
                    layers += count;
                    single += count == 1 ? 1 : 0;
                    chunks++;
                }
            }
            final long elapsed = System.nanoTime() - start;
            System.out.printf("java gi=%s r=%s round %d: %.1f ns/column, biomes/chunk %.2f, single-biome %.1f%%%n",
                    args[0], args[1], round, elapsed / (double) (chunks * CHUNK * CHUNK),
                    layers / (double) chunks, 100.0 * single / chunks);
        }
    }
}
