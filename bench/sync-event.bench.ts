/**
 * Sync event benchmark: cross-process update-to-wake round trips with busy waits (next to a C
 * shared-memory spin), yielding waits (next to a C sched_yield loop), and async waits in notification
 * mode, asleep (next to Node's Unix-socket ping-pong and a C futex ping-pong, with both processes' CPU),
 * all with the same number of round trips; and update_add throughput, uncontended and with two processes.
 */
import { join } from 'node:path';
import { buildC, count, cpuArgs, lat, latRatio, median, pingPong, printTable, ratio, repeat, type Row, RUNS, type Rtt, rttRows, runCRuns, startNode, target, together, withTempDir } from './lib.js';

const mops = (r: number) => `${(r / 1e6).toFixed(2)} M ops/s`;

export async function syncEventBench(): Promise<Record<string, unknown>> {
  const ref = buildC('fabric_ref');
  return withTempDir(async (dir) => {
    const env = { SOFTDPU_FABRIC: dir };
    const blobs = join(dir, 'blobs');
    const sock = join(dir, 'ping.sock');
    // The creator ('a', the server process, cpu 1) pings; the importer ('b', cpu 0) answers.
    const rtt = (mode: string, n: number) => pingPong(['sync-event-peer', ['a', mode, String(n), blobs]], ['sync-event-peer', ['b', mode, String(n), blobs]], env, 'server');
    const c = (mode: string, n: number) => runCRuns<Rtt>(ref, [mode, String(n), ...cpuArgs([1, 0])]);
    const [nBusy, nYield, nAsleep] = [count(20_000), count(5_000), count(2_000)];
    const busy = await rtt('busy', nBusy);
    const cSpin = await c('spin', nBusy);
    const yielding = await rtt('yield', nYield);
    const cYield = await c('yield', nYield);
    const asleep = await rtt('async', nAsleep);
    const socket = await pingPong(['socket-peer', ['echo', sock]], ['socket-peer', ['ping', sock, String(nAsleep)]], env);
    const cFutex = await c('futex', nAsleep);
    // Throughput: an exporter holds the event; one, then two processes add to it, RUNS times each.
    const adds = count(2_000_000);
    const holder = startNode('sync-event-peer', ['hold', blobs, String((RUNS + 2 * RUNS) * adds)], 1, env);
    await holder.ready;
    const addRate = async (procs: number) => {
      const start = String(Date.now() + 300);
      const outs = await together(Array.from({ length: procs }, (_, p) => startNode('sync-event-peer', ['add', String(adds), blobs, start], p, env)));
      const spans = outs.map((o) => JSON.parse(o) as { start: number; end: number });
      return (procs * adds) / ((Math.max(...spans.map((s) => s.end)) - Math.min(...spans.map((s) => s.start))) / 1000);
    };
    let one: number;
    let two: number;
    try {
      one = median(await repeat(() => addRate(1)));
      two = median(await repeat(() => addRate(2)));
    } catch (err) {
      holder.kill(); // it waits for adds that will not come
      throw err;
    }
    await holder.done;
    const rows: Row[] = [
      { what: `update-to-wake RTT, busy waits (${nBusy} trips)`, softdpu: lat(busy), reference: `${lat(cSpin)} (C spin)`, ratio: latRatio(busy, cSpin) },
      { what: `update-to-wake RTT, yielding waits (${nYield} trips)`, softdpu: lat(yielding), reference: `${lat(cYield)} (C sched_yield loop)`, ratio: latRatio(yielding, cYield) },
      ...rttRows(`RTT, async waits asleep (${nAsleep} trips)`, asleep, socket, 'socket, callbacks', target(asleep.p50_us / socket.p50_us, '<=', 1.0, 'x')),
      ...rttRows('RTT, async waits asleep, vs C futex', asleep, cFutex, 'C futex'),
      { what: `update_add, one process (${adds} adds)`, softdpu: mops(one), reference: '-', ratio: '-' },
      { what: 'update_add, two processes contending (total)', softdpu: mops(two), reference: `${mops(one)} (one)`, ratio: ratio(two / one) },
    ];
    printTable('sync event, cross-process; latency cells: p50 / p99; ratio = softdpu / reference', rows);
    return {
      counts: { rtt_busy: nBusy, rtt_yield: nYield, rtt_async: nAsleep, update_add: adds },
      rtt_busy: { softdpu: busy, c_spin: cSpin },
      rtt_yield: { softdpu: yielding, c_sched_yield: cYield },
      rtt_async_asleep: { softdpu: asleep, socket_callbacks: socket, c_futex: cFutex },
      update_add_ops_per_s: { one_process: one, two_processes: two },
    };
  });
}
