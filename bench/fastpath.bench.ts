/**
 * Comch fast-path benchmark, across processes. Bandwidth of one producer to one consumer, busy-polling, at
 * message sizes from 64 bytes to 1 MiB, next to the C two-process shared-memory ring built from bench/c in
 * the same run (the same size, message count and number of posted buffers: the limit of a cross-process
 * copy here), Node's Unix socket (one write per message; at 64 B also batched), zeromq ipc://, and a
 * cache-hot Buffer.copy in one process; 4 producers to 4 consumers; and round trips with both sides
 * asleep, 64 bytes to 64 KiB, next to a socket ping-pong of the same size and a C futex ping-pong
 * through shared buffers. Every stream's rate is its receiver's after the warm-up (the first tenth of its
 * messages, as the round trips drop: lib/measure.ts StreamClock, bench/c/bench.h), its rate over every
 * message in a row of its own.
 */
import { join } from 'node:path';
import { atMostBaseline, bandwidth, type Baseline, buildC, count, cpuArgs, type FastpathRun, fastpathRun, medians, pingPong, printScenarios, repeat, rttBaseline, rttFigure, ringRtt, runCRuns, scenario, serverAndClient, sizeLabel, SOCKET_BATCH, sleepingTrips, socketRtt, socketStream, type StreamRate, type TargetSpec, withTempDir } from './lib.js';

type Result = StreamRate;

/**
 * The bandwidth sweep: size, messages (every contender sends as many), buffers the consumer posts. The
 * counts are what it takes for the rate after the first tenth to be the steady state's: softdpu's rate
 * climbs for the first few tenths of a second (V8's tiering). At 200 000 messages of 64 B it was 1.7 M
 * msg/s after the tenth, 3.9 M at 1 000 000; 64 KiB: 14 GB/s at 20 000, 43 at 100 000, 55-58 at 200 000,
 * 65-68 at 300 000; 1 MiB: 32 GB/s at 10 000, 37 at 20 000 (the C ring about the same at every count).
 */
export const FASTPATH_SIZES: [size: number, count: number, posted: number][] = [
  [64, 1_000_000, 1024],
  [1024, 500_000, 1024],
  [4096, 200_000, 512],
  [16384, 200_000, 128],
  [65536, 200_000, 32],
  [1 << 20, 20_000, 16],
];
/** The sizes of the sleeping round trip. */
export const FASTPATH_RTT_SIZES = [64, 1024, 4096, 16384, 65536];

const BANDWIDTH = { id: 'fastpath_bandwidth', title: 'comch fast path: one-way bandwidth, 1 -> 1, busy-polling' };
const RTT = { id: 'fastpath_rtt_asleep', title: 'comch fast path: round trip, both asleep' };

export async function fastpathBench(): Promise<Record<string, unknown>> {
  const ref = buildC('fabric_ref');
  return withTempDir(async (dir) => {
    const env = { SOFTDPU_FABRIC: dir };
    const sock = join(dir, 'stream.sock');
    const fast = async (o: FastpathRun) => medians(await repeat(() => fastpathRun(o, env)));
    // The consumer is the first side (cpu 1, as the Node consumer), the producer the second (cpu 0).
    const cRing = (size: number, n: number, posted: number) => runCRuns<Result>(ref, ['shm_ring', String(size), String(n), String(posted), ...cpuArgs([1, 0])]);
    const zmq = async (size: number, n: number) => {
      const addr = `ipc://${join(dir, 'zmq.ipc')}`;
      return medians(await repeat(() => serverAndClient<Result>(['zmq-peer', ['pull', addr, String(n), String(size)]], ['zmq-peer', ['push', addr, String(n), String(size)]], env, 'server')));
    };
    const figure = (r: Result) => ({ gbps: r.gbps, msgs_per_s: r.rate, whole_msgs_per_s: r.whole_rate });
    for (const [size, full, posted] of FASTPATH_SIZES) {
      const n = count(full);
      await scenario(`bandwidth_${size}`, async () => {
        const soft = await fast({ size, count: n, consumers: 1, producers: 1, posted });
        const c = await cRing(size, n, posted);
        const s = await socketStream(sock, n, size, 1, env);
        const batched: Record<string, Baseline> = size === 64 ? { socket_batched: { label: `socket, batched: ${SOCKET_BATCH} msgs per write`, ...figure(await socketStream(sock, n, size, SOCKET_BATCH, env)) } } : {};
        const z = await zmq(size, n);
        const copy = bandwidth(size, Buffer.alloc(posted * size), (src, dst, off) => (src as Buffer).copy(dst, off), n * size);
        // The project's targets: 3 M msg/s for small messages; 0.5x the C ring at 64 KiB, 0.8x at 1 MiB.
        const ring = (limit: number): TargetSpec[] => [{ metric: 'gbps', op: '>=', limit, of: 'c_shm_ring' }];
        const targets: TargetSpec[] = size === 64 ? [{ metric: 'msgs_per_s', op: '>=', limit: 3e6 }] : size === 65536 ? ring(0.5) : size >= 1 << 20 ? ring(0.8) : [];
        return {
          title: `1 -> 1, ${sizeLabel(size)}, ${posted} posted`,
          metric: 'gbps',
          count: n,
          unit: 'msgs',
          size_bytes: size,
          sweep: BANDWIDTH,
          softdpu: figure(soft),
          baselines: {
            c_shm_ring: { label: 'C two-process ring', ...figure(c) },
            socket_one_write_per_msg: { label: 'socket, one write per message', ...figure(s) },
            ...batched,
            zmq_ipc: { label: 'zeromq ipc://', ...figure(z) },
            buffer_copy_one_process: { label: 'Buffer.copy, one process, cache-hot', gbps: copy, msgs_per_s: (copy * 1e9) / size },
          },
          targets,
        };
      });
    }
    for (const [size, n, posted] of [[65536, count(40_000), 16], [64, count(200_000), 512]] as const) {
      await scenario(`many_4x4_${size}`, async () => ({
        title: `4 -> 4, ${sizeLabel(size)}, aggregate`,
        metric: size === 64 ? 'msgs_per_s' : 'gbps',
        count: n,
        unit: 'msgs',
        size_bytes: size,
        softdpu: figure(await fast({ size, count: n, consumers: 4, producers: 4, posted })),
      }));
    }
    const nRtt = sleepingTrips();
    for (const size of FASTPATH_RTT_SIZES) {
      await scenario(`rtt_asleep_${size}`, async () => ({
        title: `round trip, both asleep, ${sizeLabel(size)}`,
        metric: 'p50_us',
        count: nRtt,
        unit: 'trips',
        size_bytes: size,
        sweep: RTT,
        softdpu: rttFigure(await pingPong(['fastpath-rtt-peer', ['echo', String(size), String(nRtt)]], ['fastpath-rtt-peer', ['ping', String(size), String(nRtt)]], env)),
        baselines: {
          socket_callbacks: rttBaseline('socket, callbacks', await socketRtt(sock, nRtt, size, env)),
          c_futex_shm: rttBaseline('C futex, shared buffers', await ringRtt(ref, size, nRtt)),
        },
        targets: atMostBaseline('socket_callbacks'),
      }));
    }
    printScenarios('comch fast path, producer -> consumer across processes (busy-polling unless "asleep"); latency cells: p50 / p99 / p99.9 (steady state: every contender drops its first 10 % of trips, shown as warm-up); ratio = softdpu / reference');
    return {};
  });
}
