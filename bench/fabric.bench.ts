/**
 * Fabric benchmark: cross-process wake round trips (busy polling with Atomics.load, and futex sleep)
 * and copy bandwidth into a shared mapping, next to a C reference built and run in the same invocation.
 */
import { DESCRIPTOR_SIZE, encodeDescriptor, Segment } from '../src/fabric/segment.js';
import { bandwidth, buildC, canPin, count, gbps, lat, latRatio, medians, printTable, ratio, repeat, type Row, type Rtt, runC, startNode, together } from './lib.js';

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
    ['spin', count(20_000), [0, 1], 'busy poll, two cores'],
    ['futex', count(5_000), [0, 1], 'futex sleep, two cores'],
    ['futex', count(5_000), [0, 0], 'futex sleep, one core'],
  ] as const;
  for (const [mode, n, cpus, label] of cases) {
    const pinned = canPin ? ([...cpus] as [number, number]) : undefined;
    const js = medians(await repeat(() => nodeRtt(mode, n, pinned)));
    const c = medians(await repeat(() => runC<Rtt>(ref, [mode, String(n), ...(pinned ? pinned.map(String) : [])])));
    results[`rtt_${mode}_${cpus[0] === cpus[1] ? 'one_core' : 'two_cores'}`] = {
      pinned: !!pinned,
      node_p50_us: js.p50_us,
      node_p99_us: js.p99_us,
      c_p50_us: c.p50_us,
      c_p99_us: c.p99_us,
    };
    rows.push({ what: `wake RTT, ${label} (${n} trips)${pinned ? '' : ' (unpinned)'}`, softdpu: lat(js), reference: `${lat(c)} (C)`, ratio: latRatio(js, c) });
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
  printTable('fabric: cross-process wake round trip and copy bandwidth; latency cells: p50 / p99; ratio = softdpu / reference', rows);
  return results;
}
