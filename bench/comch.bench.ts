/**
 * Comch control path benchmark: cross-process round trips of 64-byte messages (both sides busy-polling;
 * both sides asleep between messages) and the one-way message rate, next to Node's Unix-socket
 * ping-pong and a C shared-memory spin ping-pong measured in the same run.
 */
import { join } from 'node:path';
import { buildC, canPin, medians, msgRate, printTable, ratio, repeat, type Row, type Rtt, runC, serverAndClient, us, withTempDir } from './lib.js';

export async function comchBench(): Promise<Record<string, unknown>> {
  const ref = buildC('fabric_ref');
  return withTempDir(async (dir) => {
    const env = { SOFTDPU_FABRIC: dir };
    const sock = join(dir, 'bench.sock');
    const comchBusy = medians(await repeat(() => serverAndClient<Rtt>(['comch-peer', ['echo', 'busy']], ['comch-peer', ['ping', 'busy', '20000']], env, 'client')));
    const comchNotify = medians(await repeat(() => serverAndClient<Rtt>(['comch-peer', ['echo', 'notify']], ['comch-peer', ['ping', 'notify', '3000']], env, 'client')));
    const socketRtt = medians(await repeat(() => serverAndClient<Rtt>(['socket-peer', ['echo', sock]], ['socket-peer', ['ping', sock, '3000']], env, 'client')));
    const cSpin = medians(await repeat(() => runC<Rtt>(ref, ['spin', '20000', ...(canPin ? ['0', '1'] : [])])));
    const comchRate = medians(await repeat(() => serverAndClient<{ rate: number }>(['comch-peer', ['sink', '1000000']], ['comch-peer', ['flood', '1000000']], env, 'server'))).rate;
    const socketRate = medians(await repeat(() => serverAndClient<{ rate: number }>(['socket-peer', ['sink', sock, '200000']], ['socket-peer', ['flood', sock, '200000']], env, 'server'))).rate;

    const rows: Row[] = [
      { what: 'RTT p50, both busy-polling (target <= 2 us)', softdpu: us(comchBusy.p50_us), reference: `${us(cSpin.p50_us)} (C spin)`, ratio: ratio(comchBusy.p50_us / cSpin.p50_us) },
      { what: 'RTT p50, both asleep (target <= 1.2x socket)', softdpu: us(comchNotify.p50_us), reference: `${us(socketRtt.p50_us)} (socket)`, ratio: ratio(comchNotify.p50_us / socketRtt.p50_us) },
      { what: 'RTT p99, both asleep', softdpu: us(comchNotify.p99_us), reference: `${us(socketRtt.p99_us)} (socket)`, ratio: ratio(comchNotify.p99_us / socketRtt.p99_us) },
      { what: 'one-way rate, busy (target >= 3 M/s, >= 10x socket)', softdpu: msgRate(comchRate), reference: `${msgRate(socketRate)} (socket)`, ratio: ratio(comchRate / socketRate) },
    ];
    printTable(`comch control path, 64-byte messages, cross-process${canPin ? ' (sides pinned to cpu 0 and 1)' : ''}; ratio = softdpu / reference`, rows);
    return {
      pinned: canPin,
      rtt_busy: { softdpu_p50_us: comchBusy.p50_us, softdpu_p99_us: comchBusy.p99_us, c_spin_p50_us: cSpin.p50_us },
      rtt_notify: { softdpu_p50_us: comchNotify.p50_us, softdpu_p99_us: comchNotify.p99_us, socket_p50_us: socketRtt.p50_us, socket_p99_us: socketRtt.p99_us },
      rate: { softdpu_msgs_per_s: comchRate, socket_msgs_per_s: socketRate },
    };
  });
}
