/**
 * DPA benchmark: CPU -> DPA -> CPU immediate round trips over two comch MsgQs, with both sides polling
 * and with the DPA thread activated by completions (the CPU asleep), next to a worker_threads
 * MessagePort ping-pong and a SharedArrayBuffer spin ping-pong between threads (the in-process limit),
 * all with the same number of round trips; one-way MsgQ message rate; kernel launch-to-completion latency.
 * Everything runs in one process (bench/dpa-peer.ts), as a DPA does; CPU is the process's, every thread.
 */
import { count, medians, printScenarios, repeat, runNode, scenario, withTempDir } from './lib.js';
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
    // One process measures everything: run (RUNS times) when the first selected scenario needs it.
    let out: Promise<Out> | undefined;
    const measured = () =>
      (out ??= repeat(async () => JSON.parse(await runNode('dpa-peer', [String(n), String(rateN), String(launchN)], undefined, { SOFTDPU_FABRIC: dir })) as Out).then(medians));
    const trips = { metric: 'p50_us', count: n, unit: 'trips', size_bytes: 32 } as const;
    await scenario('rtt_poll', async () => {
      const m = await measured();
      return {
        ...trips,
        title: 'RTT CPU -> DPA -> CPU, both polling',
        softdpu: m.rtt_poll,
        baselines: { sab_spin: { label: 'SAB spin', ...m.sab_spin }, message_port: { label: 'MessagePort', ...m.message_port } },
        targets: [
          { metric: 'p50_us', op: '<=', limit: 3, of: 'sab_spin' },
          { metric: 'p50_us', op: '<=', limit: 0.1, of: 'message_port' },
        ],
      };
    });
    await scenario('rtt_activated', async () => {
      const m = await measured();
      return { ...trips, title: 'RTT, DPA thread activated, CPU asleep', softdpu: m.rtt_activated, baselines: { message_port: { label: 'MessagePort', ...m.message_port } }, targets: [{ metric: 'p50_us', op: '<=', limit: 1, of: 'message_port' }] };
    });
    await scenario('msgq_rate', async () => ({ title: 'one-way CPU -> DPA MsgQ messages, 32 B immediate', metric: 'msgs_per_s', count: rateN, unit: 'msgs', size_bytes: 32, softdpu: { msgs_per_s: (await measured()).rate_msgs_per_s } }));
    await scenario('launch', async () => ({ title: 'kernel launch to completion', metric: 'p50_us', count: launchN, unit: 'launches', softdpu: (await measured()).launch }));
    printScenarios('dpa: one process, the DPA on its worker threads; latency cells: p50 / p99; CPU: the process, per trip; ratio = softdpu / reference');
    return {};
  });
}
