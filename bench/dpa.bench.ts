/**
 * DPA benchmark: CPU -> DPA -> CPU immediate round trips over two comch MsgQs, with both sides polling
 * and with the DPA thread activated by completions (the CPU asleep), next to a worker_threads
 * MessagePort ping-pong and a SharedArrayBuffer spin ping-pong between threads (the in-process limit),
 * all with the same number of round trips; one-way MsgQ message rate; kernel launch-to-completion latency.
 * Everything runs in one process (bench/dpa-peer.ts), as a DPA does; CPU is the process's, every thread.
 * Last, how long a process takes to exit with a started DPA it never destroyed, next to one that
 * destroyed it first (bench/dpa-exit-peer.ts, a process per exit).
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_TOPOLOGY_JSON } from '../src/fabric/topology.js';
import { count, medians, percentiles, printScenarios, repeat, root, runNode, scenario, withTempDir } from './lib.js';
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
    // At least 10 000 of each, so that a p99 is the steady state's, not the warm-up's (the first tenth is
    // dropped): 10 000 launches at 6 us each end within the JIT's first 0.4 s, whose millisecond stalls were the p99.
    const n = count(20_000);
    const rateN = count(200_000, 1000);
    const launchN = count(30_000);
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
          { metric: 'p50_us', op: '<=', limit: 5, of: 'sab_spin' },
          { metric: 'p99_us', op: '<=', limit: 10, of: 'sab_spin' },
          { metric: 'p50_us', op: '<=', limit: 0.1, of: 'message_port' },
        ],
      };
    });
    await scenario('rtt_activated', async () => {
      const m = await measured();
      return { ...trips, title: 'RTT, DPA thread activated, CPU asleep', softdpu: m.rtt_activated, baselines: { message_port: { label: 'MessagePort', ...m.message_port } }, targets: [{ metric: 'p50_us', op: '<=', limit: 1, of: 'message_port' }] };
    });
    await scenario('msgq_rate', async () => ({ title: 'one-way CPU -> DPA MsgQ messages, 32 B immediate', metric: 'msgs_per_s', count: rateN, unit: 'msgs', size_bytes: 32, softdpu: { msgs_per_s: (await measured()).rate_msgs_per_s } }));
    await scenario('launch', async () => ({ title: 'kernel launch to completion', metric: 'p50_us', count: launchN, unit: 'launches', softdpu: (await measured()).launch, targets: [{ metric: 'p99_us', op: '<=', limit: 10, per: 'p50_us' }] }));
    const exits = count(20, 6);
    await scenario('exit', async () => {
      const topology = join(dir, 'exit-topology.json');
      writeFileSync(topology, JSON.stringify({ ...DEFAULT_TOPOLOGY_JSON, caps: { dpa: { numEus: EXIT_EUS } } }));
      const timed = async (how: 'keep' | 'destroy') => {
        const samples: number[] = [];
        for (let i = 0; i < exits; i++) samples.push(await exitUs(how, { SOFTDPU_FABRIC: dir, SOFTDPU_TOPOLOGY: topology }));
        const { p50, p99 } = percentiles(samples);
        return { p50_us: p50, p99_us: p99 };
      };
      const kept = await timed('keep');
      const destroyed = await timed('destroy');
      return {
        title: `process exit with a started ${EXIT_EUS}-EU DPA it never destroyed`,
        metric: 'p50_us',
        count: exits,
        unit: 'exits',
        softdpu: kept,
        baselines: { destroyed: { label: 'destroy() first', ...destroyed } },
        targets: [{ metric: 'p50_us', op: '<=', limit: 1.5, of: 'destroyed' }],
      };
    });
    printScenarios('dpa: one process, the DPA on its worker threads; latency cells: p50 / p99 / p99.9 (steady state: the first 10 % of trips dropped, shown as warm-up); CPU: the process, per trip; ratio = softdpu / reference');
    return {};
  });
}

const EXIT_EUS = 8;

/** One dpa-exit-peer process: the time from its last line to its exit, in microseconds. */
function exitUs(how: 'keep' | 'destroy', env: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(root, 'dist', 'bench', 'dpa-exit-peer.js'), String(EXIT_EUS), how], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.once('error', reject);
    child.once('exit', (code) => {
      const exitedAt = Date.now(); // the wall clock: one clock for both processes (each one's performance.timeOrigin is its own)
      if (code !== 0) return reject(new Error(`dpa-exit-peer ${how} exited with ${code}`));
      resolve((exitedAt - (JSON.parse(out) as { end: number }).end) * 1000);
    });
  });
}
