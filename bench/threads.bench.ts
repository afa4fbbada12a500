/**
 * Threads benchmark: 64-byte round trips between the main thread and a worker thread of one process,
 * softdpu's fast path (server side in the main thread, client side in a worker from `connection.share()`)
 * next to a worker_threads MessagePort ping-pong and SharedArrayBuffer Atomics.wait and spin ping-pongs
 * (the in-process limits). Both threads share the process's CPUs (not pinned); CPU is the process's.
 */
import { count, medians, printScenarios, repeat, runNode, scenario, sleepingTrips, withTempDir } from './lib.js';
import type { ThreadRtt } from './threads-peer.js';

type Out = Record<'message_port' | 'sab_wait' | 'sab_spin' | 'softdpu_fastpath_notify' | 'softdpu_fastpath_busy', ThreadRtt>;

export async function threadsBench(): Promise<Record<string, unknown>> {
  return withTempDir(async (dir) => {
    const n = sleepingTrips();
    // The spinning contenders' trips take about a microsecond: 10 000 would end inside V8's tiering.
    const nBusy = count(200_000);
    // One process measures every contender: run (RUNS times) when the first selected scenario needs it.
    let out: Promise<Out> | undefined;
    const measured = () =>
      (out ??= repeat(async () => JSON.parse(await runNode('threads-peer', [String(n), String(nBusy)], undefined, { SOFTDPU_FABRIC: dir })) as Out).then(medians));
    const trips = { metric: 'p50_us', count: n, unit: 'trips', size_bytes: 64 } as const;
    await scenario('rtt_asleep', async () => {
      const m = await measured();
      return { ...trips, title: 'RTT main <-> worker, both asleep', softdpu: m.softdpu_fastpath_notify, baselines: { message_port: { label: 'MessagePort', ...m.message_port }, sab_wait: { label: 'SAB Atomics.wait', ...m.sab_wait } } };
    });
    await scenario('rtt_busy', async () => {
      const m = await measured();
      return { ...trips, count: nBusy, title: 'RTT main <-> worker, both busy-polling', softdpu: m.softdpu_fastpath_busy, baselines: { sab_spin: { label: 'SAB spin', ...m.sab_spin } }, targets: [{ metric: 'p50_us', op: '<=', limit: 5, of: 'sab_spin' }] };
    });
    printScenarios('threads: main thread <-> worker thread, 64 B round trips in one process; latency cells: p50 / p99 / p99.9 (steady state: every contender drops its first 10 % of trips, shown as warm-up); CPU: the process, per trip; ratio = softdpu / reference');
    return {};
  });
}
