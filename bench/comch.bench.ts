/**
 * Comch control path benchmark, 64-byte messages across processes: round trips with both sides
 * busy-polling (next to a C shared-memory spin) and with both sides asleep between messages, through
 * callbacks (next to Node's Unix-socket ping-pong in callback style, and the C limits of a sleeping wake:
 * futex, eventfd, pipe) and through the promise/iterator API of the README (next to a socket ping-pong
 * written with promises); the one-way rate next to a socket with one write per message and a batched one.
 * Every contender of a row does the same number of messages; sleeping rows give both processes' CPU.
 */
import { join } from 'node:path';
import { buildC, canPin, count, cpuArgs, lat, latRatio, medians, msgRate, pingPong, printTable, ratio, repeat, type Row, type Rtt, rttRows, runCRuns, serverAndClient, SOCKET_BATCH, socketStream, target, withTempDir } from './lib.js';

export async function comchBench(): Promise<Record<string, unknown>> {
  const ref = buildC('fabric_ref');
  return withTempDir(async (dir) => {
    const env = { SOFTDPU_FABRIC: dir };
    const sock = join(dir, 'bench.sock');
    const nBusy = count(20_000);
    const nAsleep = count(3_000);
    const nRate = count(500_000);
    const comchBusy = await pingPong(['comch-peer', ['echo', 'busy']], ['comch-peer', ['ping', 'busy', String(nBusy)]], env);
    const cSpin = await runCRuns<Rtt>(ref, ['spin', String(nBusy), ...cpuArgs()]);
    const comchNotify = await pingPong(['comch-peer', ['echo', 'notify']], ['comch-peer', ['ping', 'notify', String(nAsleep)]], env);
    const socketRtt = await pingPong(['socket-peer', ['echo', sock]], ['socket-peer', ['ping', sock, String(nAsleep)]], env);
    const cWake = { futex: {} as Rtt, eventfd: {} as Rtt, pipe: {} as Rtt };
    for (const m of ['futex', 'eventfd', 'pipe'] as const) cWake[m] = await runCRuns<Rtt>(ref, [m, String(nAsleep), ...cpuArgs()]);
    const promise = await pingPong(['promise-peer', ['echo', 'bench']], ['promise-peer', ['ping', 'bench', String(nAsleep)]], env);
    const socketPromise = await pingPong(['socket-peer', ['promise-echo', sock]], ['socket-peer', ['promise-ping', sock, String(nAsleep)]], env);
    const comchRate = medians(await repeat(() => serverAndClient<{ rate: number }>(['comch-peer', ['sink', String(nRate)]], ['comch-peer', ['flood', String(nRate)]], env, 'server'))).rate;
    const sockRate1 = (await socketStream(sock, nRate, 64, 1, env)).rate;
    const sockRateB = (await socketStream(sock, nRate, 64, SOCKET_BATCH, env)).rate;

    const asleepTarget = target(comchNotify.p50_us / socketRtt.p50_us, '<=', 1.0, 'x') + (comchNotify.p99_us <= socketRtt.p99_us ? ', p99 met' : ', p99 MISSED');
    const rows: Row[] = [
      { what: `RTT both busy-polling (${nBusy} trips)`, softdpu: lat(comchBusy), reference: `${lat(cSpin)} (C spin)`, ratio: latRatio(comchBusy, cSpin), target: target(comchBusy.p50_us, '<=', 2, ' us p50') },
      ...rttRows(`RTT both asleep, callbacks (${nAsleep} trips)`, comchNotify, socketRtt, 'socket, callbacks', asleepTarget),
      ...rttRows('RTT both asleep, callbacks vs C futex', comchNotify, cWake.futex, 'C futex', target(comchNotify.p50_us / cWake.futex.p50_us, '<=', 2, 'x (stretch)')),
      ...rttRows('RTT both asleep, callbacks vs C eventfd doorbell', comchNotify, cWake.eventfd, 'C eventfd'),
      ...rttRows('RTT both asleep, callbacks vs C pipe doorbell', comchNotify, cWake.pipe, 'C pipe'),
      ...rttRows(`RTT both asleep, promise API of the README (${nAsleep} trips)`, promise, socketPromise, 'socket, promises', target(promise.p50_us / socketPromise.p50_us, '<=', 1.0, 'x') + (promise.p99_us <= socketPromise.p99_us ? ', p99 met' : ', p99 MISSED')),
      { what: `one-way rate, busy (${nRate} msgs)`, softdpu: msgRate(comchRate), reference: `${msgRate(sockRate1)} (socket, one write per message)`, ratio: ratio(comchRate / sockRate1), target: target(comchRate / 1e6, '>=', 3, ' M/s') },
      { what: 'one-way rate, busy, vs batched socket', softdpu: msgRate(comchRate), reference: `${msgRate(sockRateB)} (socket, batched: ${SOCKET_BATCH} msgs per write)`, ratio: ratio(comchRate / sockRateB) },
    ];
    printTable(`comch control path, 64-byte messages, cross-process${canPin ? ' (sides pinned to cpu 0 and 1)' : ''}; latency cells: p50 / p99; ratio = softdpu / reference`, rows);
    return {
      pinned: canPin,
      counts: { rtt_busy: nBusy, rtt_asleep: nAsleep, rate: nRate },
      rtt_busy: { softdpu: comchBusy, c_spin: cSpin },
      rtt_asleep_callbacks: { softdpu: comchNotify, socket_callbacks: socketRtt, c_futex: cWake.futex, c_eventfd: cWake.eventfd, c_pipe: cWake.pipe },
      rtt_asleep_promises: { softdpu: promise, socket_promises: socketPromise },
      rate: { softdpu_msgs_per_s: comchRate, socket_one_write_per_msg_msgs_per_s: sockRate1, socket_batched_msgs_per_s: sockRateB, socket_batch_msgs_per_write: SOCKET_BATCH },
    };
  });
}
