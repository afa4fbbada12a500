/**
 * Threads benchmark: 64-byte round trips between the main thread and a worker thread of one process,
 * softdpu's fast path (server side in the main thread, client side in a worker from `connection.share()`)
 * next to a worker_threads MessagePort ping-pong and SharedArrayBuffer Atomics.wait and spin ping-pongs
 * (the in-process limits). Both threads share the process's CPUs (not pinned); CPU is the process's.
 */
import { count, medians, printTable, ratio, repeat, type Row, runNode, withTempDir } from './lib.js';
import type { ThreadRtt } from './threads-peer.js';

type Out = Record<'message_port' | 'sab_wait' | 'sab_spin' | 'softdpu_fastpath_notify' | 'softdpu_fastpath_busy', ThreadRtt>;

export async function threadsBench(): Promise<Record<string, unknown>> {
  return withTempDir(async (dir) => {
    const n = count(5_000);
    const runs = await repeat(async () => JSON.parse(await runNode('threads-peer', [String(n)], undefined, { SOFTDPU_FABRIC: dir })) as Out);
    const m = Object.fromEntries(Object.keys(runs[0]!).map((k) => [k, medians(runs.map((r) => r[k as keyof Out]))])) as Out;
    const cell = (r: ThreadRtt) => `${r.p50_us.toFixed(2)} / ${r.p99_us.toFixed(2)} us, CPU ${r.cpu_us_per_msg.toFixed(1)} us`;
    const row = (what: string, soft: ThreadRtt, ref: ThreadRtt, label: string): Row => ({ what, softdpu: cell(soft), reference: `${cell(ref)} (${label})`, ratio: `${ratio(soft.p50_us / ref.p50_us)} / ${ratio(soft.p99_us / ref.p99_us)}` });
    const rows: Row[] = [
      row(`RTT main <-> worker, both asleep (${n} trips)`, m.softdpu_fastpath_notify, m.message_port, 'MessagePort'),
      row('RTT main <-> worker, both asleep', m.softdpu_fastpath_notify, m.sab_wait, 'SAB Atomics.wait'),
      row(`RTT main <-> worker, both busy-polling (${n} trips)`, m.softdpu_fastpath_busy, m.sab_spin, 'SAB spin'),
    ];
    printTable('threads: main thread <-> worker thread, 64 B round trips in one process; cells: p50 / p99, process CPU per trip; ratio = softdpu / reference', rows);
    return { count: n, ...m };
  });
}
