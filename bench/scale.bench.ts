/**
 * Scale of sleepers: one echo server process and one host process, both through the promise API under
 * pe.run() (README.md). The host holds one pinging client and K idle clients, each its own ComchClient on
 * its own engine driven by its own pe.run() (the README's pattern, repeated per client; all on one
 * device), each waiting in `connection.messages().next()`. Per K: the pinging client's round-trip
 * p50 / p99, its ratio to K = 0 (target: K = 511 within 1.2x), the host's CPU per round trip, and the
 * host's CPU while everything sits idle for 1 s. K stops at 511: the server's max_clients is 512.
 */
import { count, printScenarios, scenario, serverAndClientBoth, withTempDir } from './lib.js';

interface PerK {
  k: number;
  p50_us: number;
  p99_us: number;
  cpu_us_per_msg: number;
  idle_cpu_pct: number;
}

export const SCALE_KS = [0, 8, 32, 128, 511];

export async function scaleBench(): Promise<Record<string, unknown>> {
  return withTempDir(async (dir) => {
    const n = count(2_000);
    // One process pair measures every K: run once, when the first selected scenario needs it.
    let perK: Promise<PerK[]> | undefined;
    const results = () => (perK ??= serverAndClientBoth<unknown, { results: PerK[] }>(['promise-peer', ['echo', 'scale']], ['promise-peer', ['scale', 'scale', String(n), SCALE_KS.join(',')]], { SOFTDPU_FABRIC: dir }).then((r) => r.client.results));
    const figure = ({ k: _k, ...f }: PerK) => f;
    for (const k of SCALE_KS.slice(1)) {
      await scenario(`rtt_k${k}`, async () => {
        const all = await results();
        return {
          title: `RTT with ${k} idle clients; host CPU per round trip and idle 1 s`,
          metric: 'p50_us',
          count: n,
          unit: 'trips',
          size_bytes: 64,
          softdpu: figure(all.find((r) => r.k === k)!),
          baselines: { k0: { label: 'K = 0', ...figure(all[0]!) } },
          targets: k === SCALE_KS.at(-1) ? [{ metric: 'p50_us', op: '<=', limit: 1.2, of: 'k0' }] : [],
        };
      });
    }
    printScenarios('scale of sleepers: promise-API ping-pong next to K idle clients (own engine each, one host process); latency cells: p50 / p99; ratio = K / K=0');
    return { engines: 'one ProgressEngine per client, each driven by its own pe.run()' };
  });
}
