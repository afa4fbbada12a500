/**
 * Copy benchmark (issue 20, "big copies at C speed"): what a copy into shared memory costs in Node next
 * to C memcpy into the same kind of mapping, measured in the same run, per size from 64 B to 4 MiB. The
 * destination is a segment as Segment.create makes it (a memfd mapped shared), walked slot by slot the
 * way a producer walks a consumer's posted buffers (SLOTS below), its pages faulted in first; the source
 * is ordinary memory (a user's payload) and, in the `_mapped` rows, a second mapping (the producer's own
 * mmap'd memory). Node (copy-peer.ts) and C (bench/c/copy.c) make the same copies, the same number of
 * samples of the same batch, drop the same warm-up, and are pinned to the same CPU; each is run RUNS
 * times and the medians kept. The table gives each Node contender's p50 per copy and GB/s next to C's;
 * the lines after it compare Buffer#copy and copyInto (src/fabric/copy.ts, what softdpu copies with)
 * with Uint8Array#set, say from which size copyInto reaches memcpy, and what it costs beyond memcpy.
 */
import { type Baseline, buildC, canPin, count, type Figure, hooks, medians, printScenarios, repeat, runNode, scenario, selected, sizeLabel } from './lib.js';

/** The sweep's sizes. */
export const COPY_SIZES = [64, 256, 1024, 4096, 16384, 65536, 256 << 10, 1 << 20, 4 << 20];

/** Slots of the destination: about the consumer's posted buffers of bench/fastpath.bench.ts (1024 small ones; 4 MiB of them, at least 16). */
const slots = (size: number) => Math.max(16, Math.min(1024, (4 << 20) / size));

/** Copies per sample: 1 MiB of them (at least one), so that a sample is long beside the clock. */
const batch = (size: number) => Math.max(1, (1 << 20) / size);

type Out = Record<string, { p50_ns: number; gbps: number }>;

/** The Node contenders: [key in copy-peer's output, label, key of the C figure compared]. */
const CONTENDERS: [string, string, string][] = [
  ['set', 'Uint8Array#set', 'memcpy'],
  ['buffer_copy', 'Buffer#copy', 'memcpy'],
  ['copy_into', 'copyInto (softdpu: set through a reference)', 'memcpy'],
  ['loop', 'byte loop', 'memcpy'],
  ['set_mapped', 'Uint8Array#set, source mapped', 'memcpy_mapped'],
  ['buffer_copy_mapped', 'Buffer#copy, source mapped', 'memcpy_mapped'],
];

const figure = (f: { p50_ns: number; gbps: number }): Figure => ({ gbps: f.gbps, p50_us: f.p50_ns / 1000 });

export async function copyBench(): Promise<Record<string, unknown>> {
  const program = buildC('copy');
  const samples = count(300, 50);
  const cpu = canPin ? 0 : undefined;
  const sweep: Record<number, { node: Out; c: Out }> = {};
  for (const size of COPY_SIZES) {
    if (!CONTENDERS.some(([key]) => selected(`${key}_${size}`))) continue;
    const args = [String(size), String(slots(size)), String(batch(size)), String(samples)];
    // Node then C, RUNS times: a drift of the machine's load reaches both.
    const runs = await repeat(async () => ({ node: JSON.parse(await runNode('copy-peer', args, cpu)) as Out, c: JSON.parse(await runNode(program, ['copy', ...args], cpu)) as Out }));
    const m = (sweep[size] = medians(runs));
    for (const [key, label, cKey] of CONTENDERS) {
      const f = m.node[key];
      if (!f) continue;
      const baselines: Record<string, Baseline> = { [`c_${cKey}`]: { label: `C ${cKey === 'memcpy' ? 'memcpy' : 'memcpy, source mapped'}`, ...figure(m.c[cKey]!) } };
      if (key === 'set') baselines.c_memmove = { label: 'C memmove', ...figure(m.c.memmove!) };
      await scenario(`${key}_${size}`, async () => ({
        title: `copy ${sizeLabel(size)} into a mapping, ${label}`,
        metric: 'gbps',
        count: samples * batch(size),
        unit: 'copies',
        size_bytes: size,
        softdpu_label: label,
        softdpu: figure(f),
        baselines,
      }));
    }
  }
  printScenarios(`copy into a shared mapping (memfd, MAP_SHARED, pages faulted in), Node next to C in the same run${canPin ? ', both on cpu 0' : ''}; cells: GB/s, p50 per copy; ratio = Node / C`, 'Node');
  const summary = crossovers(sweep);
  hooks.beforeOutput();
  process.stdout.write(summary.lines.map((l) => `  ${l}\n`).join(''));
  return { samples, sweep, ...summary.figures };
}

/**
 * What the sweep says: Buffer#copy and copyInto (what softdpu copies with) next to `dst.set` per size,
 * copyInto over memcpy and the smallest size from which it stays within 5 % of it, what copyInto spends
 * per copy beyond memcpy (the call's own cost), and the first copy into untouched pages (C) next to the
 * warm figures.
 */
function crossovers(sweep: Record<number, { node: Out; c: Out }>): { lines: string[]; figures: Record<string, unknown> } {
  const sizes = Object.keys(sweep).map(Number).sort((a, b) => a - b);
  if (!sizes.length) return { lines: [], figures: {} };
  const node = (size: number, key: string) => sweep[size]!.node[key]!;
  const c = (size: number) => sweep[size]!.c.memcpy!;
  const vsC = (size: number) => node(size, 'copy_into').gbps / c(size).gbps;
  let reachesC: number | null = null;
  for (let i = sizes.length - 1; i >= 0 && vsC(sizes[i]!) >= 0.95; i--) reachesC = sizes[i]!;
  const per = (f: (size: number) => string) => sizes.map((s) => `${sizeLabel(s)} ${f(s)}`).join(', ');
  const over = (key: string) => per((s) => `${(node(s, key).gbps / node(s, 'set').gbps).toFixed(2)}x`);
  const lines = [
    `Buffer#copy / Uint8Array#set: ${over('buffer_copy')}`,
    `copyInto / Uint8Array#set: ${over('copy_into')}`,
    `copyInto / C memcpy: ${per((s) => `${vsC(s).toFixed(2)}x`)}; within 5 % ${reachesC === null ? 'at no size measured' : `from ${sizeLabel(reachesC)} up`}`,
    `copyInto's p50 per copy minus memcpy's (the call's own cost): ${per((s) => `${(node(s, 'copy_into').p50_ns - c(s).p50_ns).toFixed(1)} ns`)}`,
    `C memcpy into pages never touched (one copy, page faults included): ${per((s) => `${sweep[s]!.c.fresh!.gbps.toFixed(2)} GB/s`)}`,
  ];
  return { lines, figures: { reaches_memcpy_from: reachesC } };
}
