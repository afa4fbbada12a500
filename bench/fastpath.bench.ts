/**
 * Comch fast-path benchmark: one producer to one consumer across processes, busy-polling (64 KiB, 1 MiB
 * and 64-byte payloads), next to the C two-process shared-memory ring built from bench/c in the same run
 * (the same sizes, message count and number of posted buffers: the limit of a cross-process copy here),
 * Node's Unix socket (one write per message; for 64 B also batched), zeromq ipc://, and a cache-hot
 * Buffer.copy in one process; 4 producers to 4 consumers; and a 64 KiB round trip with both sides
 * asleep, next to a socket ping-pong of 64 KiB and a C futex ping-pong through shared buffers.
 */
import { join } from 'node:path';
import { bandwidth, buildC, count, cpuArgs, gbps, medians, msgRate, pingPong, printTable, ratio, repeat, type Row, type Rtt, rttRows, runCRuns, serverAndClient, SOCKET_BATCH, socketStream, target, withTempDir } from './lib.js';

interface Result {
  gbps: number;
  rate: number;
}

const label = (size: number) => (size >= 1 << 20 ? `${size >> 20} MiB` : size >= 1024 ? `${size >> 10} KiB` : `${size} B`);

export async function fastpathBench(): Promise<Record<string, unknown>> {
  const ref = buildC('fabric_ref');
  return withTempDir(async (dir) => {
    const env = { SOFTDPU_FABRIC: dir };
    const sock = join(dir, 'stream.sock');
    const fast = async (o: { size: number; count: number; consumers: number; producers: number; posted: number }) =>
      medians(await repeat(() => serverAndClient<Result>(['fastpath-peer', ['consume', JSON.stringify(o)]], ['fastpath-peer', ['produce', JSON.stringify(o)]], env, 'server')));
    // The consumer is the first side (cpu 1, as the Node consumer), the producer the second (cpu 0).
    const cRing = (size: number, n: number, posted: number) => runCRuns<Result>(ref, ['shm_ring', String(size), String(n), String(posted), ...cpuArgs([1, 0])]);
    const zmq = async (size: number, n: number) => {
      const addr = `ipc://${join(dir, 'zmq.ipc')}`;
      return medians(await repeat(() => serverAndClient<Result>(['zmq-peer', ['pull', addr, String(n), String(size)]], ['zmq-peer', ['push', addr, String(n), String(size)]], env, 'server')));
    };
    const rows: Row[] = [];
    const results: Record<string, unknown> = {};
    for (const [size, n, posted] of [[65536, count(20_000), 32], [1 << 20, count(2_000), 16]] as const) {
      const f = await fast({ size, count: n, consumers: 1, producers: 1, posted });
      const c = await cRing(size, n, posted);
      const s = await socketStream(sock, n, size, 1, env);
      const z = await zmq(size, n);
      const copy = bandwidth(size, Buffer.alloc(posted * size), (src, dst, off) => (src as Buffer).copy(dst, off), n * size);
      results[`bulk_${size}`] = { count: n, posted, softdpu_gbps: f.gbps, c_shm_ring_gbps: c.gbps, socket_one_write_per_msg_gbps: s.gbps, zmq_ipc_gbps: z.gbps, buffer_copy_one_process_gbps: copy };
      const what = `1->1 ${label(size)} (${n} msgs, ${posted} posted)`;
      rows.push({ what: `${what} vs C shm ring`, softdpu: gbps(f.gbps), reference: `${gbps(c.gbps)} (C two-process ring)`, ratio: ratio(f.gbps / c.gbps), target: target(f.gbps / c.gbps, '>=', 0.8, 'x') });
      rows.push({ what: `${what} vs Unix socket`, softdpu: gbps(f.gbps), reference: `${gbps(s.gbps)} (socket, one write per message)`, ratio: ratio(f.gbps / s.gbps) });
      rows.push({ what: `${what} vs zeromq ipc://`, softdpu: gbps(f.gbps), reference: `${gbps(z.gbps)} (zmq)`, ratio: ratio(f.gbps / z.gbps) });
      rows.push({ what: `${what} vs Buffer.copy`, softdpu: gbps(f.gbps), reference: `${gbps(copy)} (cache-hot copy, one process)`, ratio: ratio(f.gbps / copy) });
    }
    const nSmall = count(200_000);
    const small = await fast({ size: 64, count: nSmall, consumers: 1, producers: 1, posted: 1024 });
    const smallC = await cRing(64, nSmall, 1024);
    const smallSocket = (await socketStream(sock, nSmall, 64, 1, env)).rate;
    const smallBatched = (await socketStream(sock, nSmall, 64, SOCKET_BATCH, env)).rate;
    const smallZmq = await zmq(64, nSmall);
    results.small_64 = { count: nSmall, posted: 1024, softdpu_msgs_per_s: small.rate, c_shm_ring_msgs_per_s: smallC.rate, socket_one_write_per_msg_msgs_per_s: smallSocket, socket_batched_msgs_per_s: smallBatched, socket_batch_msgs_per_write: SOCKET_BATCH, zmq_ipc_msgs_per_s: smallZmq.rate };
    const what = `1->1 64 B (${nSmall} msgs, 1024 posted)`;
    rows.push({ what: `${what} vs C shm ring`, softdpu: msgRate(small.rate), reference: `${msgRate(smallC.rate)} (C two-process ring)`, ratio: ratio(small.rate / smallC.rate), target: target(small.rate / 1e6, '>=', 2, ' M/s') });
    rows.push({ what: `${what} vs Unix socket`, softdpu: msgRate(small.rate), reference: `${msgRate(smallSocket)} (socket, one write per message)`, ratio: ratio(small.rate / smallSocket) });
    rows.push({ what: `${what} vs batched socket`, softdpu: msgRate(small.rate), reference: `${msgRate(smallBatched)} (socket, batched: ${SOCKET_BATCH} msgs per write)`, ratio: ratio(small.rate / smallBatched) });
    rows.push({ what: `${what} vs zeromq ipc://`, softdpu: msgRate(small.rate), reference: `${msgRate(smallZmq.rate)} (zmq)`, ratio: ratio(small.rate / smallZmq.rate) });
    const many = await fast({ size: 65536, count: count(40_000), consumers: 4, producers: 4, posted: 16 });
    const manySmall = await fast({ size: 64, count: count(200_000), consumers: 4, producers: 4, posted: 512 });
    results.many_4x4 = { bulk_64k_gbps: many.gbps, small_64_msgs_per_s: manySmall.rate };
    rows.push({ what: `4->4 64 KiB, aggregate (${count(40_000)} msgs)`, softdpu: gbps(many.gbps), reference: '-', ratio: '-' });
    rows.push({ what: `4->4 64 B, aggregate (${count(200_000)} msgs)`, softdpu: msgRate(manySmall.rate), reference: '-', ratio: '-' });
    const size = 65536;
    const nRtt = count(2_000);
    const rtt = await pingPong(['fastpath-rtt-peer', ['echo', String(size), String(nRtt)]], ['fastpath-rtt-peer', ['ping', String(size), String(nRtt)]], env);
    const socketRtt = await pingPong(['socket-peer', ['echo', sock, String(size)]], ['socket-peer', ['ping', sock, String(nRtt), String(size)]], env);
    const cRtt = await runCRuns<Rtt>(ref, ['ring_rtt', String(size), String(nRtt), ...cpuArgs()]);
    results.rtt_64k_asleep = { count: nRtt, softdpu: rtt, socket_callbacks: socketRtt, c_futex_shm: cRtt };
    rows.push(...rttRows(`64 KiB round trip, both asleep (${nRtt} trips)`, rtt, socketRtt, 'socket, callbacks', target(rtt.p50_us / socketRtt.p50_us, '<=', 1.0, 'x')));
    rows.push(...rttRows('64 KiB round trip, both asleep, vs C', rtt, cRtt, 'C futex, shared buffers'));
    printTable('comch fast path, producer -> consumer across processes (busy-polling unless "asleep"); latency cells: p50 / p99; ratio = softdpu / reference', rows);
    return results;
  });
}
