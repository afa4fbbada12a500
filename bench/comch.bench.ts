/**
 * Comch control path benchmark: cross-process round trips of 64-byte messages (both sides busy-polling;
 * both sides asleep between messages) and the one-way message rate, next to Node's Unix-socket
 * ping-pong and a C shared-memory spin ping-pong measured in the same run.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { buildC, canPin, median, printTable, ratio, type Row, runC, serverAndClient, us } from './lib.js';

interface Rtt {
  p50_us: number;
  p99_us: number;
}

const RUNS = 3;

async function repeat<T>(fn: () => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < RUNS; i++) out.push(await fn());
  return out;
}

const fmtRate = (r: number) => `${(r / 1e6).toFixed(2)} M msg/s`;

export async function comchBench(): Promise<Record<string, unknown>> {
  const ref = buildC('fabric_ref');
  const dir = mkdtempSync('/tmp/sdpu-bench-');
  const env = { SOFTDPU_FABRIC: dir };
  const sock = join(dir, 'bench.sock');
  try {
    const comchBusy = await repeat(() => serverAndClient<Rtt>(['comch-peer', ['echo', 'busy']], ['comch-peer', ['ping', 'busy', '20000']], env, 'client'));
    const comchNotify = await repeat(() => serverAndClient<Rtt>(['comch-peer', ['echo', 'notify']], ['comch-peer', ['ping', 'notify', '3000']], env, 'client'));
    const socketRtt = await repeat(() => serverAndClient<Rtt>(['socket-peer', ['echo', sock]], ['socket-peer', ['ping', sock, '3000']], env, 'client'));
    const cSpin = [0, 1, 2].map(() => runC<Rtt>(ref, ['spin', '20000', ...(canPin ? ['0', '1'] : [])]));
    const comchRate = await repeat(() => serverAndClient<{ rate: number }>(['comch-peer', ['sink', '1000000']], ['comch-peer', ['flood', '1000000']], env, 'server'));
    const socketRate = await repeat(() => serverAndClient<{ rate: number }>(['socket-peer', ['sink', sock, '200000']], ['socket-peer', ['flood', sock, '200000']], env, 'server'));

    const p50 = (rs: Rtt[]) => median(rs.map((r) => r.p50_us));
    const p99 = (rs: Rtt[]) => median(rs.map((r) => r.p99_us));
    const rate = (rs: { rate: number }[]) => median(rs.map((r) => r.rate));
    const rows: Row[] = [
      { what: 'RTT p50, both busy-polling (target <= 2 us)', softdpu: us(p50(comchBusy)), reference: `${us(p50(cSpin))} (C spin)`, ratio: ratio(p50(comchBusy) / p50(cSpin)) },
      { what: 'RTT p50, both asleep (target <= 1.2x socket)', softdpu: us(p50(comchNotify)), reference: `${us(p50(socketRtt))} (socket)`, ratio: ratio(p50(comchNotify) / p50(socketRtt)) },
      { what: 'RTT p99, both asleep', softdpu: us(p99(comchNotify)), reference: `${us(p99(socketRtt))} (socket)`, ratio: ratio(p99(comchNotify) / p99(socketRtt)) },
      { what: 'one-way rate, busy (target >= 3 M/s, >= 10x socket)', softdpu: fmtRate(rate(comchRate)), reference: `${fmtRate(rate(socketRate))} (socket)`, ratio: ratio(rate(comchRate) / rate(socketRate)) },
    ];
    printTable(`comch control path, 64-byte messages, cross-process${canPin ? ' (sides pinned to cpu 0 and 1)' : ''}; ratio = softdpu / reference`, rows);
    return {
      pinned: canPin,
      rtt_busy: { softdpu_p50_us: p50(comchBusy), softdpu_p99_us: p99(comchBusy), c_spin_p50_us: p50(cSpin) },
      rtt_notify: { softdpu_p50_us: p50(comchNotify), softdpu_p99_us: p99(comchNotify), socket_p50_us: p50(socketRtt), socket_p99_us: p99(socketRtt) },
      rate: { softdpu_msgs_per_s: rate(comchRate), socket_msgs_per_s: rate(socketRate) },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
