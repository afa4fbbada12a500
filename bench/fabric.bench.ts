/**
 * Fabric benchmark: cross-process wake round trips (busy polling with Atomics.load, and futex sleep)
 * and copy bandwidth into a shared mapping, next to a C reference built and run in the same invocation.
 */
import { DESCRIPTOR_SIZE, encodeDescriptor, Segment } from '../src/fabric/segment.js';
import { bandwidth, buildC, canPin, gbps, median, printTable, ratio, type Row, runC, startNode, together, us } from './lib.js';

interface Rtt {
  p50_us: number;
  p99_us: number;
}

async function nodeRtt(mode: 'spin' | 'futex', n: number, cpus: [number, number] | undefined): Promise<Rtt> {
  const seg = Segment.create('bench', 256);
  const d = new Uint8Array(DESCRIPTOR_SIZE);
  encodeDescriptor(seg.descriptor, new DataView(d.buffer), 0);
  const args = [Buffer.from(d).toString('hex'), mode, String(n)];
  try {
    const [out] = await together([startNode('fabric-peer', ['ping', ...args], cpus?.[0]), startNode('fabric-peer', ['pong', ...args], cpus?.[1])]);
    return JSON.parse(out) as Rtt;
  } finally {
    seg.close();
  }
}

export async function fabricBench(): Promise<Record<string, unknown>> {
  const ref = buildC('fabric_ref');
  const results: Record<string, unknown> = {};
  const rows: Row[] = [];
  // A sleeping wake costs twice as much across cores (an IPI through the hypervisor) as on one core,
  // so both sides are pinned the same way for Node and C; a spin needs two cores.
  const cases = [
    ['spin', 20_000, [0, 1], 'busy poll, two cores'],
    ['futex', 5_000, [0, 1], 'futex sleep, two cores'],
    ['futex', 5_000, [0, 0], 'futex sleep, one core'],
  ] as const;
  for (const [mode, n, cpus, label] of cases) {
    const pinned = canPin ? ([...cpus] as [number, number]) : undefined;
    const js: Rtt[] = [];
    for (let run = 0; run < 3; run++) js.push(await nodeRtt(mode, n, pinned));
    const c = [0, 1, 2].map(() => runC<Rtt>(ref, [mode, String(n), ...(pinned ? pinned.map(String) : [])]));
    const jsP50 = median(js.map((r) => r.p50_us));
    const cP50 = median(c.map((r) => r.p50_us));
    results[`rtt_${mode}_${cpus[0] === cpus[1] ? 'one_core' : 'two_cores'}`] = {
      pinned: !!pinned,
      node_p50_us: jsP50,
      node_p99_us: median(js.map((r) => r.p99_us)),
      c_p50_us: cP50,
      c_p99_us: median(c.map((r) => r.p99_us)),
    };
    rows.push({ what: `wake RTT p50, ${label}${pinned ? '' : ' (unpinned)'}`, softdpu: us(jsP50), reference: `${us(cP50)} (C)`, ratio: ratio(jsP50 / cP50) });
  }
  const region = 64 << 20;
  const seg = Segment.create('bench', region);
  const mapping = seg.u8.subarray(64, 64 + region);
  mapping.fill(0); // fault the pages in: copies, not page faults, are measured
  const heap = Buffer.alloc(region);
  const mappingBuf = Buffer.from(mapping.buffer, mapping.byteOffset, mapping.length);
  for (const size of [4096, 65536, 1 << 20]) {
    const set = bandwidth(size, mapping, (src, dst, off) => dst.set(src, off));
    const copyToMapping = bandwidth(size, mappingBuf, (src, dst, off) => (src as Buffer).copy(dst, off));
    const copyToHeap = bandwidth(size, heap, (src, dst, off) => (src as Buffer).copy(dst, off));
    const c = runC<{ gbps: number }>(ref, ['copy', String(size)]).gbps;
    const label = size >= 1 << 20 ? `${size >> 20} MiB` : `${size >> 10} KiB`;
    results[`copy_${size}`] = { mapping_set_gbps: set, mapping_buffer_copy_gbps: copyToMapping, heap_buffer_copy_gbps: copyToHeap, c_memcpy_mapping_gbps: c };
    rows.push({ what: `copy ${label} into mapping (set) vs Buffer.copy to heap`, softdpu: gbps(set), reference: gbps(copyToHeap), ratio: ratio(set / copyToHeap) });
    rows.push({ what: `copy ${label} into mapping (Buffer.copy) vs C memcpy`, softdpu: gbps(copyToMapping), reference: `${gbps(c)} (C)`, ratio: ratio(copyToMapping / c) });
  }
  seg.close();
  printTable('fabric: cross-process wake round trip and copy bandwidth (ratio = softdpu / reference)', rows);
  return results;
}
