/**
 * Comch control path benchmark, across processes: round trips with both sides busy-polling (next to a C
 * shared-memory spin) and with both sides asleep between messages, through callbacks, at message sizes
 * from 64 bytes to the default max_msg_size (next to Node's Unix-socket ping-pong in callback style of the
 * same size, and a C futex ping-pong copying the same bytes through shared buffers; at 64 bytes also the C
 * limits of a sleeping wake: futex, eventfd, pipe), and through the promise/iterator API of the README
 * (next to a socket ping-pong written with promises); the one-way rate of 64-byte messages next to a
 * socket with one write per message and a batched one. Every contender of a scenario does the same
 * number of messages; sleeping scenarios give both processes' CPU.
 */
import { join } from 'node:path';
import { atMostBaseline, buildC, canPin, count, cpuArgs, medians, pingPong, printScenarios, repeat, type Rtt, rttBaseline, rttFigure, ringRtt, runCRuns, scenario, serverAndClient, sizeLabel, SOCKET_BATCH, sleepingTrips, socketRtt, socketStream, type StreamRate, withTempDir } from './lib.js';

/** Control-path message sizes of the sleeping round trip: up to 4080, the default max_msg_size. */
export const COMCH_RTT_SIZES = [64, 256, 1024, 4080];

const SWEEP = { id: 'comch_rtt_asleep', title: 'comch control path: round trip, both asleep (callbacks)' };

export async function comchBench(): Promise<Record<string, unknown>> {
  const ref = buildC('fabric_ref');
  return withTempDir(async (dir) => {
    const env = { SOFTDPU_FABRIC: dir };
    const sock = join(dir, 'bench.sock');
    // Busy trips take about a microsecond: 20 000 of them ended inside V8's tiering (p99 15.7 us, 2.3 at 200 000).
    const nBusy = count(200_000);
    const nAsleep = sleepingTrips();
    // One-way streams of 500 000 messages last about 0.15 s, and their kept nine tenths still ran
    // slower: three alternating pairs of runs gave 3.1 / 2.9 / 1.2 M msg/s at 500 000 against 5.2 / 3.1 /
    // 3.1 at 2 000 000 (every contender streams the same count).
    const nRate = count(2_000_000);
    await scenario('rtt_busy', async () => ({
      title: 'RTT both busy-polling, 64 B',
      metric: 'p50_us',
      count: nBusy,
      unit: 'trips',
      size_bytes: 64,
      softdpu: rttFigure(await pingPong(['comch-peer', ['echo', 'busy']], ['comch-peer', ['ping', 'busy', String(nBusy)]], env)),
      baselines: { c_spin: rttBaseline('C spin', await runCRuns<Rtt>(ref, ['spin', String(nBusy), ...cpuArgs()])) },
      targets: [
        { metric: 'p50_us', op: '<=', limit: 2 },
        { metric: 'p99_us', op: '<=', limit: 3 },
      ],
    }));
    for (const size of COMCH_RTT_SIZES) {
      await scenario(`rtt_asleep_${size}`, async () => {
        const soft = await pingPong(['comch-peer', ['echo', 'notify']], ['comch-peer', ['ping', 'notify', String(nAsleep), String(size)]], env);
        const socket = await socketRtt(sock, nAsleep, size, env);
        const cRing = await ringRtt(ref, size, nAsleep);
        const doorbells: Record<string, ReturnType<typeof rttBaseline>> = {};
        // The limits of a sleeping wake alone (no payload): once, at the smallest size.
        if (size === COMCH_RTT_SIZES[0]) for (const m of ['futex', 'eventfd', 'pipe'] as const) doorbells[`c_${m}`] = rttBaseline(`C ${m}`, await runCRuns<Rtt>(ref, [m, String(nAsleep), ...cpuArgs()]));
        return {
          title: `RTT both asleep, callbacks, ${sizeLabel(size)}`,
          metric: 'p50_us',
          count: nAsleep,
          unit: 'trips',
          size_bytes: size,
          sweep: SWEEP,
          softdpu: rttFigure(soft),
          baselines: { socket_callbacks: rttBaseline('socket, callbacks', socket), c_futex_shm: rttBaseline('C futex, shared buffers', cRing), ...doorbells },
          targets: [
            ...atMostBaseline('socket_callbacks'),
            ...(doorbells.c_futex ? [{ metric: 'p50_us', op: '<=', limit: 2, of: 'c_futex', note: 'stretch' } as const] : []),
          ],
        };
      });
    }
    await scenario('rtt_asleep_promises', async () => ({
      title: 'RTT both asleep, promise API of the README, 64 B',
      metric: 'p50_us',
      count: nAsleep,
      unit: 'trips',
      size_bytes: 64,
      softdpu: rttFigure(await pingPong(['promise-peer', ['echo', 'bench']], ['promise-peer', ['ping', 'bench', String(nAsleep)]], env)),
      baselines: { socket_promises: rttBaseline('socket, promises', await socketRtt(sock, nAsleep, 64, env, 'promises')) },
      targets: atMostBaseline('socket_promises'),
    }));
    await scenario('rate', async () => {
      const soft = medians(await repeat(() => serverAndClient<StreamRate>(['comch-peer', ['sink', String(nRate)]], ['comch-peer', ['flood', String(nRate)]], env, 'server')));
      const one = await socketStream(sock, nRate, 64, 1, env);
      const batched = await socketStream(sock, nRate, 64, SOCKET_BATCH, env);
      return {
        title: 'one-way rate, busy, 64 B',
        metric: 'msgs_per_s',
        count: nRate,
        unit: 'msgs',
        size_bytes: 64,
        softdpu: { msgs_per_s: soft.rate, whole_msgs_per_s: soft.whole_rate },
        baselines: {
          socket_one_write_per_msg: { label: 'socket, one write per message', msgs_per_s: one.rate, whole_msgs_per_s: one.whole_rate },
          socket_batched: { label: `socket, batched: ${SOCKET_BATCH} msgs per write`, msgs_per_s: batched.rate, whole_msgs_per_s: batched.whole_rate },
        },
        targets: [{ metric: 'msgs_per_s', op: '>=', limit: 6e6 }],
      };
    });
    printScenarios(`comch control path, cross-process${canPin ? ' (sides pinned to cpu 0 and 1)' : ''}; latency cells: p50 / p99 / p99.9 (steady state: every contender drops its first 10 % of trips, shown as warm-up); ratio = softdpu / reference`);
    return { pinned: canPin };
  });
}
