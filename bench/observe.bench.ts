/**
 * What watching a fabric costs the watched (docs/observe.md): the hot paths with and without an observer
 * attached, the same counts for both. The observer is `softdpu top --json --interval 50` (the shortest
 * interval it takes), a process of its own, unpinned, reading every thread's stats segment 20 times a
 * second and printing each snapshot, from before the peers start until they are done.
 *
 * Hot paths: the control-path round trip (busy-polling ping-pong), the fast-path send rate (busy, 64-byte
 * messages, one producer to one consumer) and sync event update_add (one process adding to an event
 * another holds). Runs alternate (without, with; then with, without; ...) so that drift of the machine
 * falls on both; each row gives the median over the runs, the spread of the runs, and the ratio
 * with / without. The target is 2% (ratio within 0.98x..1.02x); the spread says whether this machine
 * can resolve that.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { count, fastpathRun, type Figure, median, medians, printScenarios, QUICK, root, type Rtt, scenario, serverAndClientBoth, startNode, together, withTempDir } from './lib.js';

/** Pairs of runs (one with, one without an observer) per hot path. */
const PAIRS = () => (QUICK ? 2 : 5);
const TARGET = 0.02;

interface Observer {
  /** Snapshots printed, and how many of them showed an object of the peers. */
  stop(): Promise<{ frames: number; seeing: number; cpuPct: number }>;
}

/** `softdpu top --json --interval 50 --fabric DIR`, counting its frames. */
function observe(dir: string): Observer {
  const child = spawn(process.execPath, [join(root, 'dist', 'src', 'cli', 'main.js'), 'top', '--json', '--interval', '50', '--fabric', dir], { stdio: ['ignore', 'pipe', 'inherit'] });
  let frames = 0;
  let seeing = 0;
  let partial = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop()!;
    for (const line of lines) {
      frames++;
      if (line.includes('"objects":[{')) seeing++;
    }
  });
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const t0 = performance.now();
  return {
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`softdpu top (the observer) exited early (${child.exitCode ?? child.signalCode}) after ${frames} frames`);
      // Its CPU (user + system, from /proc) over its life, as % of one core: what it takes from the peers.
      const ticks = readFileSync(`/proc/${child.pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
      const cpuPct = ((Number(ticks[11]) + Number(ticks[12])) / 100 / ((performance.now() - t0) / 1000)) * 100;
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 5000); // bounded: a stuck observer is killed
      await closed;
      clearTimeout(killer);
      return { frames, seeing, cpuPct };
    },
  };
}

interface Sides<T> {
  without: T[];
  with: T[];
  /** Snapshots the observer printed over the watched runs, and how many showed the peers' objects. */
  frames: number;
  seeing: number;
  /** The observer's CPU over each watched run, % of one core. */
  cpuPct: number[];
}

/**
 * Runs `measure` PAIRS times without and PAIRS times with an observer, alternating which goes first, and
 * returns each side's per-run results (and what the observer saw).
 */
async function alternate<T>(dir: string, measure: () => Promise<T>): Promise<Sides<T>> {
  const out: Sides<T> = { without: [], with: [], frames: 0, seeing: 0, cpuPct: [] };
  for (let pair = 0; pair < PAIRS(); pair++) {
    for (const watched of pair % 2 === 0 ? [false, true] : [true, false]) {
      const observer = watched ? observe(dir) : undefined;
      if (observer) await new Promise((resolve) => setTimeout(resolve, 150)); // it is looking before the peers start
      let value: T;
      let seen: Awaited<ReturnType<Observer['stop']>> | undefined;
      try {
        value = await measure();
      } finally {
        // Also when the measurement failed: a live observer would keep `softdpu bench` from exiting.
        seen = await observer?.stop();
      }
      (watched ? out.with : out.without).push(value);
      out.frames += seen?.frames ?? 0;
      out.seeing += seen?.seeing ?? 0;
      if (seen) out.cpuPct.push(seen.cpuPct);
    }
  }
  return out;
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
/** How far apart a side's runs are, relative to their median: whether this machine can resolve 2% at all. */
const noise = (xs: number[]) => (Math.max(...xs) - Math.min(...xs)) / median(xs);

/**
 * A scenario of one hot path: softdpu watched against softdpu unwatched (the baseline), medians of the
 * runs of each side; the target is the 2% ratio. The note gives the runs' spread.
 */
async function watchedScenario<T>(id: string, title: string, metric: 'p50_us' | 'msgs_per_s' | 'ops_per_s', n: number, sides: () => Promise<Sides<T>>, figure: (t: T) => Figure, seen: Record<string, { frames: number; seeing: number; cpu_pct: number }>): Promise<void> {
  await scenario(id, async () => {
    const s = await sides();
    seen[id] = { frames: s.frames, seeing: s.seeing, cpu_pct: median(s.cpuPct) };
    const side = (runs: T[]) => medians(runs.map(figure));
    const lower = metric === 'p50_us';
    const spreadNote = `runs spread ${pct(noise(s.without.map((r) => figure(r)[metric]!)))} unwatched, ${pct(noise(s.with.map((r) => figure(r)[metric]!)))} watched`;
    return {
      title,
      metric,
      count: n,
      unit: metric === 'p50_us' ? 'trips' : metric === 'ops_per_s' ? 'adds' : 'msgs',
      size_bytes: metric === 'ops_per_s' ? undefined : 64,
      softdpu_label: 'softdpu, watched',
      softdpu: side(s.with),
      baselines: { unwatched: { label: 'softdpu, unwatched', ...side(s.without) } },
      targets: [{ metric, op: lower ? '<=' : '>=', limit: lower ? 1 + TARGET : 1 - TARGET, of: 'unwatched', note: spreadNote }],
    };
  });
}

export async function observeBench(): Promise<Record<string, unknown>> {
  return withTempDir(async (dir) => {
    const env = { SOFTDPU_FABRIC: dir };
    const nRtt = count(20_000);
    const nFast = count(500_000);
    const nAdd = count(5_000_000);
    const seen: Record<string, { frames: number; seeing: number; cpu_pct: number }> = {};

    // Control path: busy-polling ping-pong, p50 and p99 of each run.
    await watchedScenario('rtt_busy', 'control-path RTT, busy', 'p50_us', nRtt, () =>
      alternate(dir, async () => (await serverAndClientBoth<unknown, Rtt>(['comch-peer', ['echo', 'busy']], ['comch-peer', ['ping', 'busy', String(nRtt)]], env)).client),
      (r) => ({ p50_us: r.p50_us, p99_us: r.p99_us }), seen);

    // Fast path: one producer to one consumer, 64-byte messages, both busy-polling; messages/s at the consumer.
    const o = { size: 64, count: nFast, consumers: 1, producers: 1, posted: 1024 };
    await watchedScenario('fastpath_busy_64', 'fast-path send rate, busy, 64 B', 'msgs_per_s', nFast, () =>
      alternate(dir, async () => (await fastpathRun(o, env)).rate),
      (rate) => ({ msgs_per_s: rate }), seen);

    // Sync event update_add: a holder (cpu 1) exports an event, an importer (cpu 0) adds 1 N times.
    const blobs = join(dir, 'blobs');
    await watchedScenario('update_add', 'sync event update_add, one process adding to an event another holds', 'ops_per_s', nAdd, () =>
      alternate(dir, async () => {
        const holder = startNode('sync-event-peer', ['hold', blobs, String(nAdd)], 1, env);
        await holder.ready;
        const [out] = await together([startNode('sync-event-peer', ['add', String(nAdd), blobs, String(Date.now() + 300)], 0, env), holder]);
        const span = JSON.parse(out!) as { start: number; end: number };
        return nAdd / ((span.end - span.start) / 1000);
      }),
      (rate) => ({ ops_per_s: rate }), seen);

    printScenarios(`observe: the hot paths watched (softdpu top --json --interval 50 attached) and unwatched; medians of ${PAIRS()} runs each, alternating; target: within 2%`);
    const frames = Object.entries(seen).map(([id, v]) => `${id} ${v.frames} (${v.seeing}), ${v.cpu_pct.toFixed(1)} %`);
    if (frames.length) process.stdout.write(`  observer frames (of them showing the peers' objects), observer CPU (% of one core, median): ${frames.join('; ')}\n`);
    return { observer: seen, pairs_of_runs: PAIRS() };
  });
}
