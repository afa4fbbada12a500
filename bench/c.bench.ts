/**
 * The C library (capi/) measured against C references, in one run with the same counts for every
 * contender of a row: an install tree from `softdpu sdk` in a temp prefix, the programs of bench/c
 * compiled against it (lib/capi.ts), two processes per measurement, pinned as the other benchmarks pin.
 * Comch control path, 64 B: round trips with both sides spinning on doca_pe_progress (next to the C
 * shared-memory spin), with both asleep on the engine's notification handle (next to a C Unix-socket
 * ping-pong and a C futex one, with both processes' CPU), C against the TypeScript peer both ways; the
 * one-way rate; sync event update_add + wait_eq round trips, busy and yielding; and the fast path, 64 KiB
 * and 1 MiB, next to the C two-process ring (skipped, saying so, while the library has no fast path).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { FASTPATH_SIZES } from './fastpath.bench.js';
import { buildC, canPin, ccProgram, count, cpuArgs, hooks, medians, pingPong, printScenarios, repeat, type Rtt, rttBaseline, rttFigure, runCRuns, scenario, selected, serverAndClientBoth, sizeLabel, type StreamRate, withTempDir, writeSdk } from './lib.js';

type Peer = [string, string[]];
type Mode = 'busy' | 'notify';

/** What the fast-path rows print while the library has none. */
export const NO_FASTPATH = 'skipped: the C library has no fast path yet (doca_comch_producer_* answers NOT_SUPPORTED)';

/** Runs `fn` once, on first use (a figure several rows compare with, whichever row --filter keeps). */
function once<T>(fn: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | undefined;
  return () => (p ??= fn());
}

export async function cBench(): Promise<Record<string, unknown>> {
  const ref = buildC('fabric_ref');
  return withTempDir(async (dir) => {
    const tree = writeSdk(dir);
    const prog = { comch: ccProgram(tree, 'comch_pingpong'), se: ccProgram(tree, 'se_pingpong'), fast: ccProgram(tree, 'fastpath') };
    const fabric = join(dir, 'fabric');
    mkdirSync(fabric, { mode: 0o700 });
    const env = { SOFTDPU_FABRIC: fabric };
    const c = (mode: string, n: number, cpus?: [number, number]) => runCRuns<Rtt>(ref, [mode, String(n), ...cpuArgs(cpus)]);
    const [nBusy, nAsleep, nRate, nSeBusy, nSeYield] = [count(20_000), count(10_000), count(1_000_000), count(20_000), count(10_000)];
    const n = { busy: nBusy, notify: nAsleep };

    // comch control path: C or TypeScript on each side (the C program speaks bench/comch-peer.ts's lines).
    const echo = (side: 'c' | 'ts', mode: Mode): Peer => (side === 'c' ? [prog.comch, ['echo', mode]] : ['comch-peer', ['echo', mode]]);
    const ping = (side: 'c' | 'ts', mode: Mode): Peer => (side === 'c' ? [prog.comch, ['ping', mode, String(n[mode])]] : ['comch-peer', ['ping', mode, String(n[mode])]]);
    const rtt = (pinger: 'c' | 'ts', echoer: 'c' | 'ts', mode: Mode) => once(async () => rttFigure(await pingPong(echo(echoer, mode), ping(pinger, mode), env)));
    const cc = { busy: rtt('c', 'c', 'busy'), notify: rtt('c', 'c', 'notify') };
    const tsts = { busy: rtt('ts', 'ts', 'busy'), notify: rtt('ts', 'ts', 'notify') };
    const trips = (mode: Mode) => ({ metric: 'p50_us', count: n[mode], unit: 'trips', size_bytes: 64 }) as const;

    await scenario('rtt_busy', async () => ({
      ...trips('busy'),
      title: 'comch RTT 64 B, C <-> C, both spinning on doca_pe_progress',
      softdpu: await cc.busy(),
      baselines: { c_spin: rttBaseline('C shared-memory spin', await c('spin', nBusy)), ts_ts: { label: 'TypeScript <-> TypeScript', ...(await tsts.busy()) } },
      targets: [{ metric: 'p50_us', op: '<=', limit: 3.0, of: 'c_spin' }],
    }));
    await scenario('rtt_asleep', async () => ({
      ...trips('notify'),
      title: 'comch RTT 64 B, C <-> C, both asleep on the notification handle',
      softdpu: await cc.notify(),
      baselines: {
        c_unix: rttBaseline('C Unix socket, blocking', await c('unix', nAsleep)),
        c_futex: rttBaseline('C futex', await c('futex', nAsleep)),
        ts_ts: { label: 'TypeScript <-> TypeScript', ...(await tsts.notify()) },
      },
      targets: [{ metric: 'p50_us', op: '<=', limit: 1.0, of: 'c_unix' }],
    }));
    for (const mode of ['busy', 'notify'] as const) {
      const how = mode === 'busy' ? 'busy' : 'asleep';
      for (const [pinger, echoer] of [['c', 'ts'], ['ts', 'c']] as const) {
        const label = `${pinger === 'c' ? 'C' : 'TypeScript'} pings, ${echoer === 'c' ? 'C' : 'TypeScript'} echoes`;
        await scenario(`rtt_${how}_${pinger}_${echoer}`, async () => ({
          ...trips(mode),
          title: `comch RTT 64 B, ${how}, ${label}`,
          softdpu_label: label,
          softdpu: await rtt(pinger, echoer, mode)(),
          baselines: { c_c: { label: 'C <-> C', ...(await cc[mode]()) }, ts_ts: { label: 'TypeScript <-> TypeScript', ...(await tsts[mode]()) } },
        }));
      }
    }
    await scenario('rate', async () => {
      const rate = async (sink: Peer, flood: Peer) => {
        const r = medians(await repeat(async () => (await serverAndClientBoth<StreamRate, unknown>(sink, flood, env)).server));
        return { msgs_per_s: r.rate, whole_msgs_per_s: r.whole_rate };
      };
      return {
        title: 'comch one-way rate 64 B, C -> C, spinning, 1024 sends in flight',
        metric: 'msgs_per_s',
        count: nRate,
        unit: 'msgs',
        size_bytes: 64,
        softdpu: await rate([prog.comch, ['sink', String(nRate)]], [prog.comch, ['flood', String(nRate)]]),
        baselines: { ts_ts: { label: 'TypeScript -> TypeScript', ...(await rate(['comch-peer', ['sink', String(nRate)]], ['comch-peer', ['flood', String(nRate)]])) } },
        targets: [{ metric: 'msgs_per_s', op: '>=', limit: 5e6 }],
      };
    });

    // Sync event: the creator ('a', the server side, cpu 1) pings with update_add, the importer answers.
    const blobs = join(dir, 'blobs');
    const se = (a: string, b: string, mode: string, k: number) => pingPong([a, ['a', mode, String(k), blobs]], [b, ['b', mode, String(k), blobs]], env, 'server');
    for (const [mode, k, refMode, refLabel] of [['busy', nSeBusy, 'spin', 'C shared-memory spin'], ['yield', nSeYield, 'yield', 'C sched_yield loop']] as const) {
      await scenario(`se_rtt_${mode}`, async () => ({
        metric: 'p50_us',
        count: k,
        unit: 'trips',
        size_bytes: 8,
        title: `sync event update_add + wait_eq RTT, C <-> C, ${mode === 'busy' ? 'busy waits' : 'yielding waits'}`,
        softdpu: rttFigure(await se(prog.se, prog.se, mode, k)),
        baselines: { [`c_${refMode}`]: rttBaseline(refLabel, await c(refMode, k, [1, 0])), ts_ts: rttBaseline('TypeScript <-> TypeScript (update_set)', await se('sync-event-peer', 'sync-event-peer', mode, k)) },
      }));
    }

    const fastpath = await fastpathRows(prog.fast, ref, env);
    printScenarios(`C library (capi/), cross-process${canPin ? ' (sides pinned to cpu 0 and 1)' : ''}; latency cells: p50 / p99; ratio = softdpu (C) / reference`, 'softdpu (C)');
    if (fastpath.skipped) {
      hooks.beforeOutput();
      process.stdout.write(`  fast path 64 KiB and 1 MiB, C -> C: ${NO_FASTPATH}; ${fastpath.skipped}\n`);
    }
    return { pinned: canPin, fastpath };
  });
}

/**
 * The fast-path rows: one producer to one consumer, both spinning, 64 KiB and 1 MiB (the counts and
 * posted buffers of fastpath.bench.ts), next to the C two-process ring; or, while the C library has no
 * fast path (its programs say {"skipped"}), no rows and the reason.
 */
async function fastpathRows(program: string, ref: string, fabricEnv: Record<string, string>): Promise<{ skipped?: string }> {
  const env = { ...fabricEnv, SOFTDPU_SDK_LOG_LEVEL: 'error' }; // no line per stub called
  type Out = StreamRate & { skipped?: string };
  const run = async (size: number, k: number, posted: number) => {
    const args = [String(size), String(k), String(posted)];
    return (await serverAndClientBoth<Out, unknown>([program, ['consume', ...args]], [program, ['produce', ...args]], env)).server;
  };
  for (const [size, full, posted] of FASTPATH_SIZES.filter(([s]) => s >= 65536)) {
    if (!selected(`fastpath_${size}`)) continue;
    const k = count(full);
    const probe = await run(size, k, posted); // a warm-up run, whose figures are not kept
    if (probe.skipped) return { skipped: probe.skipped };
    await scenario(`fastpath_${size}`, async () => {
      const soft = medians(await repeat(() => run(size, k, posted)));
      const ring = await runCRuns<StreamRate>(ref, ['shm_ring', String(size), String(k), String(posted), ...cpuArgs([1, 0])]);
      return {
        title: `fast path ${sizeLabel(size)}, C -> C, 1 -> 1, ${posted} posted, spinning`,
        metric: 'gbps',
        count: k,
        unit: 'msgs',
        size_bytes: size,
        softdpu: { gbps: soft.gbps, msgs_per_s: soft.rate, whole_msgs_per_s: soft.whole_rate },
        baselines: { c_shm_ring: { label: 'C two-process ring', gbps: ring.gbps, msgs_per_s: ring.rate, whole_msgs_per_s: ring.whole_rate } },
        targets: [{ metric: 'gbps', op: '>=', limit: 0.8, of: 'c_shm_ring' }],
      };
    });
  }
  return {};
}
