/**
 * DPA benchmark: CPU -> DPA -> CPU immediate round trips over two comch MsgQs, with both sides polling
 * and with the DPA thread activated by completions (the CPU asleep), next to a worker_threads
 * MessagePort ping-pong and a SharedArrayBuffer spin ping-pong between threads (the in-process limit),
 * all with the same number of round trips; one-way MsgQ message rate; kernel launch-to-completion latency.
 * Everything runs in one process (bench/dpa-peer.ts), as a DPA does; CPU is the process's, every thread.
 */
import { count, medians, printTable, ratio, repeat, type Row, runNode, target, withTempDir } from './lib.js';
import type { ThreadRtt } from './threads-peer.js';

interface Out {
  rtt_poll: ThreadRtt;
  rtt_activated: ThreadRtt;
  message_port: ThreadRtt;
  sab_spin: ThreadRtt;
  rate_msgs_per_s: number;
  launch: ThreadRtt;
}

export async function dpaBench(): Promise<Record<string, unknown>> {
  return withTempDir(async (dir) => {
    const n = count(5_000);
    const rateN = count(200_000, 1000);
    const launchN = count(2_000);
    const runs = await repeat(async () => JSON.parse(await runNode('dpa-peer', [String(n), String(rateN), String(launchN)], undefined, { SOFTDPU_FABRIC: dir })) as Out);
    const keys = ['rtt_poll', 'rtt_activated', 'message_port', 'sab_spin', 'launch'] as const;
    const m = Object.fromEntries(keys.map((k) => [k, medians(runs.map((r) => r[k]))])) as Pick<Out, (typeof keys)[number]>;
    const rate = medians(runs.map((r) => ({ v: r.rate_msgs_per_s }))).v;
    const cell = (r: ThreadRtt) => `${r.p50_us.toFixed(2)} / ${r.p99_us.toFixed(2)} us, CPU ${r.cpu_us_per_msg.toFixed(1)} us`;
    const row = (what: string, soft: ThreadRtt, ref: ThreadRtt, label: string, goal?: string): Row => ({
      what,
      softdpu: cell(soft),
      reference: `${cell(ref)} (${label})`,
      ratio: `${ratio(soft.p50_us / ref.p50_us)} / ${ratio(soft.p99_us / ref.p99_us)}`,
      ...(goal ? { target: goal } : {}),
    });
    const rows: Row[] = [
      row(`RTT CPU -> DPA -> CPU, both polling (${n} trips)`, m.rtt_poll, m.sab_spin, 'SAB spin', target(m.rtt_poll.p50_us / m.sab_spin.p50_us, '<=', 3, 'x')),
      row('RTT CPU -> DPA -> CPU, both polling', m.rtt_poll, m.message_port, 'MessagePort', target(m.rtt_poll.p50_us / m.message_port.p50_us, '<=', 0.1, 'x')),
      row(`RTT, DPA thread activated, CPU asleep (${n} trips)`, m.rtt_activated, m.message_port, 'MessagePort', target(m.rtt_activated.p50_us / m.message_port.p50_us, '<=', 1, 'x')),
      { what: `one-way CPU -> DPA MsgQ messages (${rateN}, 32 B immediate)`, softdpu: `${(rate / 1e6).toFixed(3)} M msg/s`, reference: '-', ratio: '-' },
      { what: `kernel launch to completion (${launchN} launches)`, softdpu: cell(m.launch), reference: '-', ratio: '-' },
    ];
    printTable('dpa: one process, the DPA on its worker threads; cells: p50 / p99, process CPU per trip; ratio = softdpu / reference', rows);
    return { counts: { rtt: n, rate: rateN, launch: launchN }, ...m, rate_msgs_per_s: rate };
  });
}
