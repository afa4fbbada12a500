/**
 * Sync event benchmark: cross-process update-to-wake round trips with busy waits (next to a C
 * shared-memory spin), yielding waits (next to a C sched_yield loop), and async waits in notification
 * mode, asleep (next to Node's Unix-socket ping-pong and a C futex ping-pong, with both processes' CPU:
 * each wait driving its engine with a run() of its own, and the README's promise API, one run() in the
 * background and an awaited submitAsync() per wait, next to the socket's promise ping-pong),
 * all with the same number of round trips; and update_add throughput, uncontended and with two processes.
 */
import { join } from 'node:path';
import { atMostBaseline, buildC, count, cpuArgs, median, pingPong, printScenarios, repeat, RUNS, type Rtt, rttBaseline, rttFigure, runCRuns, scenario, sleepingTrips, socketRtt, startNode, together, withTempDir } from './lib.js';

export async function syncEventBench(): Promise<Record<string, unknown>> {
  const ref = buildC('fabric_ref');
  return withTempDir(async (dir) => {
    const env = { SOFTDPU_FABRIC: dir };
    const blobs = join(dir, 'blobs');
    const sock = join(dir, 'ping.sock');
    // The creator ('a', the server process, cpu 1) pings; the importer ('b', cpu 0) answers.
    const rtt = async (mode: string, n: number) => rttFigure(await pingPong(['sync-event-peer', ['a', mode, String(n), blobs]], ['sync-event-peer', ['b', mode, String(n), blobs]], env, 'server'));
    const c = (mode: string, n: number) => runCRuns<Rtt>(ref, [mode, String(n), ...cpuArgs([1, 0])]);
    const [nBusy, nYield, nAsleep] = [count(20_000), count(10_000), sleepingTrips()];
    const trips = { metric: 'p50_us', unit: 'trips', size_bytes: 8 } as const;
    await scenario('rtt_busy', async () => ({ ...trips, title: 'update-to-wake RTT, busy waits', count: nBusy, softdpu: await rtt('busy', nBusy), baselines: { c_spin: rttBaseline('C spin', await c('spin', nBusy)) } }));
    await scenario('rtt_yield', async () => ({ ...trips, title: 'update-to-wake RTT, yielding waits', count: nYield, softdpu: await rtt('yield', nYield), baselines: { c_sched_yield: rttBaseline('C sched_yield loop', await c('yield', nYield)) } }));
    await scenario('rtt_async_asleep', async () => ({
      ...trips,
      title: 'update-to-wake RTT, async waits asleep, a run() per wait',
      count: nAsleep,
      softdpu: await rtt('async', nAsleep),
      baselines: {
        socket_callbacks: rttBaseline('socket, callbacks', await socketRtt(sock, nAsleep, 64, env)),
        c_futex: rttBaseline('C futex', await c('futex', nAsleep)),
      },
      targets: atMostBaseline('socket_callbacks'),
    }));
    // The README's promise API: one pe.run() per engine in the background, each wait an awaited
    // submitAsync(); next to the socket's promise ping-pong (as comch's promise row).
    await scenario('rtt_promises_asleep', async () => ({
      ...trips,
      title: 'update-to-wake RTT, asleep, promise API of the README',
      count: nAsleep,
      softdpu: await rtt('promises', nAsleep),
      baselines: { socket_promises: rttBaseline('socket, promises', await socketRtt(sock, nAsleep, 64, env, 'promises')) },
      targets: atMostBaseline('socket_promises'),
    }));
    // Throughput: an exporter holds the event; one, then two processes add to it, RUNS times each.
    const adds = count(2_000_000);
    let rates: { one: number; two: number } | undefined;
    const addRates = async () => {
      const holder = startNode('sync-event-peer', ['hold', blobs, String((RUNS + 2 * RUNS) * adds)], 1, env);
      await holder.ready;
      const addRate = async (procs: number) => {
        const start = String(Date.now() + 300);
        const outs = await together(Array.from({ length: procs }, (_, p) => startNode('sync-event-peer', ['add', String(adds), blobs, start], p, env)));
        const spans = outs.map((o) => JSON.parse(o) as { start: number; end: number });
        return (procs * adds) / ((Math.max(...spans.map((s) => s.end)) - Math.min(...spans.map((s) => s.start))) / 1000);
      };
      try {
        rates = { one: median(await repeat(() => addRate(1))), two: median(await repeat(() => addRate(2))) };
      } catch (err) {
        holder.kill(); // it waits for adds that will not come
        throw err;
      }
      await holder.done;
      return rates;
    };
    const add = { metric: 'ops_per_s', count: adds, unit: 'adds', size_bytes: 8 } as const;
    await scenario('update_add', async () => ({ ...add, title: 'update_add, one process', softdpu: { ops_per_s: (rates ?? (await addRates())).one } }));
    await scenario('update_add_contended', async () => {
      const r = rates ?? (await addRates());
      return { ...add, title: 'update_add, two processes contending (total)', softdpu: { ops_per_s: r.two }, baselines: { one_process: { label: 'one process', ops_per_s: r.one } } };
    });
    printScenarios('sync event, cross-process; latency cells: p50 / p99 / p99.9 (steady state: every contender drops its first 10 % of trips, shown as warm-up); ratio = softdpu / reference');
    return {};
  });
}
