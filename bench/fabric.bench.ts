/**
 * Fabric benchmark: cross-process wake round trips (busy polling with Atomics.load, and futex sleep)
 * and copy bandwidth into a shared mapping, next to a C reference built and run in the same invocation.
 */
import { DESCRIPTOR_SIZE, encodeDescriptor, Segment } from '../src/fabric/segment.js';
import { bandwidth, type Baseline, buildC, canPin, count, medians, printScenarios, repeat, type Rtt, rttBaseline, rttFigure, runC, scenario, selected, sizeLabel, startNode, together } from './lib.js';

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
  // A sleeping wake costs twice as much across cores (an IPI through the hypervisor) as on one core,
  // so both sides are pinned the same way for Node and C; a spin needs two cores.
  const cases = [
    ['spin', count(20_000), [0, 1], 'busy poll, two cores'],
    ['futex', count(5_000), [0, 1], 'futex sleep, two cores'],
    ['futex', count(5_000), [0, 0], 'futex sleep, one core'],
  ] as const;
  for (const [mode, n, cpus, label] of cases) {
    const pinned = canPin ? ([...cpus] as [number, number]) : undefined;
    await scenario(`wake_rtt_${mode}_${cpus[0] === cpus[1] ? 'one_core' : 'two_cores'}`, async () => ({
      title: `wake RTT, ${label}${pinned ? '' : ' (unpinned)'}`,
      metric: 'p50_us',
      count: n,
      unit: 'trips',
      size_bytes: 4,
      softdpu_label: 'softdpu (Node, native futex)',
      softdpu: rttFigure(medians(await repeat(() => nodeRtt(mode, n, pinned)))),
      baselines: { c: rttBaseline('C', medians(await repeat(() => runC<Rtt>(ref, [mode, String(n), ...(pinned ? pinned.map(String) : [])])))) },
    }));
  }
  const sizes = [4096, 65536, 1 << 20];
  if (sizes.some((size) => selected(`copy_${size}`) || selected(`copy_set_${size}`))) {
    const region = 64 << 20;
    const seg = Segment.create('bench', region);
    try {
      const mapping = seg.u8.subarray(64, 64 + region);
      mapping.fill(0); // fault the pages in: copies, not page faults, are measured
      const heap = Buffer.alloc(region);
      const mappingBuf = Buffer.from(mapping.buffer, mapping.byteOffset, mapping.length);
      const copy = { metric: 'gbps' } as const;
      for (const size of sizes) {
        let heapFigure: Baseline | undefined;
        const heapCopy = () => (heapFigure ??= { label: 'Buffer.copy to the heap', gbps: bandwidth(size, heap, (src, dst, off) => (src as Buffer).copy(dst, off)) });
        await scenario(`copy_${size}`, async () => ({
          ...copy,
          title: `copy ${sizeLabel(size)} into a mapping, Buffer.copy`,
          size_bytes: size,
          softdpu: { gbps: bandwidth(size, mappingBuf, (src, dst, off) => (src as Buffer).copy(dst, off)) },
          baselines: { c_memcpy: { label: 'C memcpy into a mapping', gbps: runC<{ gbps: number }>(ref, ['copy', String(size)]).gbps }, heap_buffer_copy: heapCopy() },
        }));
        await scenario(`copy_set_${size}`, async () => ({
          ...copy,
          title: `copy ${sizeLabel(size)} into a mapping, Uint8Array.set`,
          size_bytes: size,
          softdpu: { gbps: bandwidth(size, mapping, (src, dst, off) => dst.set(src, off)) },
          baselines: { heap_buffer_copy: heapCopy() },
        }));
      }
    } finally {
      seg.close();
    }
  }
  printScenarios('fabric: cross-process wake round trip and copy bandwidth; latency cells: p50 / p99; ratio = softdpu / reference');
  return {};
}
