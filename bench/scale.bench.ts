/**
 * Scale of sleepers: one echo server process and one host process, both through the promise API under
 * pe.run() (README.md). The host holds one pinging client and K idle clients, each its own ComchClient on
 * its own engine driven by its own pe.run() (the README's pattern, repeated per client; all on one
 * device), each waiting in `connection.messages().next()`. Per K: the pinging client's round-trip
 * p50 / p99, its ratio to K = 0 (target: K = 511 within 1.2x), the host's CPU per round trip, and the
 * host's CPU while everything sits idle for 1 s. K stops at 511: the server's max_clients is 512.
 */
import { count, lat, latRatio, printTable, ratio, type Row, serverAndClientBoth, target, withTempDir } from './lib.js';

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
    const { client } = await serverAndClientBoth<unknown, { results: PerK[] }>(['promise-peer', ['echo', 'scale']], ['promise-peer', ['scale', 'scale', String(n), SCALE_KS.join(',')]], { SOFTDPU_FABRIC: dir });
    const base = client.results[0]!;
    const rows: Row[] = client.results.flatMap((r): Row[] => [
      {
        what: `RTT with ${r.k} idle clients (${n} trips)`,
        softdpu: lat(r),
        reference: `${lat(base)} (K = 0)`,
        ratio: latRatio(r, base),
        ...(r.k === SCALE_KS.at(-1) ? { target: target(r.p50_us / base.p50_us, '<=', 1.2, 'x p50') } : {}),
      },
      { what: '  host CPU per round trip; host CPU idle 1 s', softdpu: `${r.cpu_us_per_msg.toFixed(1)} us; ${r.idle_cpu_pct.toFixed(2)} %`, reference: `${base.cpu_us_per_msg.toFixed(1)} us; ${base.idle_cpu_pct.toFixed(2)} % (K = 0)`, ratio: ratio(r.cpu_us_per_msg / base.cpu_us_per_msg) },
    ]);
    printTable('scale of sleepers: promise-API ping-pong next to K idle clients (own engine each, one host process); latency cells: p50 / p99; ratio = K / K=0', rows);
    return { count: n, engines: 'one ProgressEngine per client, each driven by its own pe.run()', per_k: client.results };
  });
}
