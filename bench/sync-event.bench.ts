/**
 * Sync event benchmark: cross-process update-to-wake round trips with busy waits (next to a C
 * shared-memory spin), yielding waits, and async waits in notification mode (next to Node's Unix-socket
 * ping-pong), all in the same run; and update_add throughput, uncontended and with two processes adding.
 */
import { join } from 'node:path';
import { buildC, canPin, median, medians, printTable, ratio, repeat, type Row, RUNS, type Rtt, runC, serverAndClient, startNode, together, us, withTempDir } from './lib.js';

const mops = (r: number) => `${(r / 1e6).toFixed(2)} M ops/s`;

export async function syncEventBench(): Promise<Record<string, unknown>> {
  const ref = buildC('fabric_ref');
  return withTempDir(async (dir) => {
    const env = { SOFTDPU_FABRIC: dir };
    const blobs = join(dir, 'blobs');
    const sock = join(dir, 'ping.sock');
    const rtt = async (mode: string, n: number) => {
      const { p50_us: p50, p99_us: p99 } = medians(await repeat(() => serverAndClient<Rtt>(['sync-event-peer', ['a', mode, String(n), blobs]], ['sync-event-peer', ['b', mode, String(n), blobs]], env, 'server')));
      return { p50, p99 };
    };
    const busy = await rtt('busy', 20_000);
    const yielding = await rtt('yield', 5_000);
    const asleep = await rtt('async', 2_000);
    const sockP50 = medians(await repeat(() => serverAndClient<Rtt>(['socket-peer', ['echo', sock]], ['socket-peer', ['ping', sock, '2000']], env, 'client'))).p50_us;
    const cSpin = medians(await repeat(() => runC<Rtt>(ref, ['spin', '20000', ...(canPin ? ['0', '1'] : [])]))).p50_us;
    // Throughput: an exporter holds the event; one, then two processes add to it, RUNS times each.
    const adds = 2_000_000;
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
      { what: 'update-to-wake RTT p50, busy waits', softdpu: us(busy.p50), reference: `${us(cSpin)} (C spin)`, ratio: ratio(busy.p50 / cSpin) },
      { what: 'update-to-wake RTT p50, yielding waits', softdpu: us(yielding.p50), reference: `${us(cSpin)} (C spin)`, ratio: ratio(yielding.p50 / cSpin) },
      { what: 'RTT p50, async waits asleep (target <= 1.2x socket)', softdpu: us(asleep.p50), reference: `${us(sockP50)} (socket)`, ratio: ratio(asleep.p50 / sockP50) },
      { what: 'update_add, one process', softdpu: mops(one), reference: '-', ratio: '-' },
      { what: 'update_add, two processes contending (total)', softdpu: mops(two), reference: `${mops(one)} (one)`, ratio: ratio(two / one) },
    ];
    printTable('sync event, cross-process (ratio = softdpu / reference)', rows);
    return {
      rtt_busy: busy,
      rtt_yield: yielding,
      rtt_async: asleep,
      socket_rtt_p50_us: sockP50,
      c_spin_rtt_p50_us: cSpin,
      update_add_ops_per_s: { one_process: one, two_processes: two },
    };
  });
}
