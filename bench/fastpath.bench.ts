/**
 * Comch fast-path benchmark: one producer to one consumer across processes (64 KiB, 1 MiB and 64-byte
 * payloads) and 4 producers to 4 consumers, next to Node's Unix socket streaming the same payloads and
 * Buffer.copy of the same sizes in one process (the single-copy limit), all in the same run; zeromq's
 * ipc:// transport is a further baseline.
 */
import { join } from 'node:path';
import { bandwidth, gbps, medians, msgRate, printTable, ratio, repeat, type Row, serverAndClient, withTempDir } from './lib.js';

interface Result {
  gbps: number;
  rate: number;
}

const label = (size: number) => (size >= 1 << 20 ? `${size >> 20} MiB` : size >= 1024 ? `${size >> 10} KiB` : `${size} B`);

export async function fastpathBench(): Promise<Record<string, unknown>> {
  return withTempDir(async (dir) => {
    const env = { SOFTDPU_FABRIC: dir };
    const sock = join(dir, 'stream.sock');
    const fast = async (o: { size: number; count: number; consumers: number; producers: number; posted: number }) =>
      medians(await repeat(() => serverAndClient<Result>(['fastpath-peer', ['consume', JSON.stringify(o)]], ['fastpath-peer', ['produce', JSON.stringify(o)]], env, 'server')));
    const socket = async (size: number, count: number) =>
      medians(await repeat(() => serverAndClient<Result>(['socket-peer', ['sink', sock, String(count), String(size)]], ['socket-peer', ['flood', sock, String(count), String(size)]], env, 'server')));
    const zmq = async (size: number, count: number) => {
      const addr = `ipc://${join(dir, 'zmq.ipc')}`;
      return medians(await repeat(() => serverAndClient<Result>(['zmq-peer', ['pull', addr, String(count), String(size)]], ['zmq-peer', ['push', addr, String(count), String(size)]], env, 'server')));
    };
    const rows: Row[] = [];
    const results: Record<string, unknown> = {};
    for (const [size, count, posted] of [[65536, 20_000, 32], [1 << 20, 2_000, 16]] as const) {
      const f = await fast({ size, count, consumers: 1, producers: 1, posted });
      const s = await socket(size, count);
      const z = await zmq(size, count);
      const copy = bandwidth(size, Buffer.alloc(posted * size), (src, dst, off) => (src as Buffer).copy(dst, off));
      results[`bulk_${size}`] = { softdpu_gbps: f.gbps, socket_gbps: s.gbps, zmq_ipc_gbps: z.gbps, buffer_copy_gbps: copy };
      rows.push({ what: `1->1 ${label(size)}: vs Buffer.copy (target >= 0.6x)`, softdpu: gbps(f.gbps), reference: `${gbps(copy)} (copy)`, ratio: ratio(f.gbps / copy) });
      rows.push({ what: `1->1 ${label(size)}: vs Unix socket (target >= 5x)`, softdpu: gbps(f.gbps), reference: `${gbps(s.gbps)} (socket)`, ratio: ratio(f.gbps / s.gbps) });
      rows.push({ what: `1->1 ${label(size)}: vs zeromq ipc://`, softdpu: gbps(f.gbps), reference: `${gbps(z.gbps)} (zmq)`, ratio: ratio(f.gbps / z.gbps) });
    }
    const small = await fast({ size: 64, count: 2_000_000, consumers: 1, producers: 1, posted: 1024 });
    const smallSocket = await socket(64, 200_000);
    const smallZmq = await zmq(64, 200_000);
    results.small_64 = { softdpu_msgs_per_s: small.rate, socket_msgs_per_s: smallSocket.rate, zmq_ipc_msgs_per_s: smallZmq.rate };
    rows.push({ what: '1->1 64 B messages (target >= 2 M/s)', softdpu: msgRate(small.rate), reference: `${msgRate(smallSocket.rate)} (socket)`, ratio: ratio(small.rate / smallSocket.rate) });
    rows.push({ what: '1->1 64 B messages vs zeromq ipc://', softdpu: msgRate(small.rate), reference: `${msgRate(smallZmq.rate)} (zmq)`, ratio: ratio(small.rate / smallZmq.rate) });
    const many = await fast({ size: 65536, count: 40_000, consumers: 4, producers: 4, posted: 16 });
    const manySmall = await fast({ size: 64, count: 2_000_000, consumers: 4, producers: 4, posted: 512 });
    results.many_4x4 = { bulk_64k_gbps: many.gbps, small_64_msgs_per_s: manySmall.rate };
    rows.push({ what: '4->4 64 KiB, aggregate', softdpu: gbps(many.gbps), reference: '-', ratio: '-' });
    rows.push({ what: '4->4 64 B, aggregate', softdpu: msgRate(manySmall.rate), reference: '-', ratio: '-' });
    printTable('comch fast path, producer -> consumer across processes (busy-polling); ratio = softdpu / reference', rows);
    return results;
  });
}
