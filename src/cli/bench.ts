/**
 * `softdpu bench [NAME...] [--quick] [--filter REGEX] [--json FILE] [--plot FILE.svg|FILE.html]`: the
 * benchmark suite (bench/ in the source repository, compiled to dist/bench; `npm run bench` runs this).
 * The npm package ships no benchmarks: there it says where they are, exit code 2.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { UsageError } from './usage.js';
import { repositoryUrl } from './version.js';

export interface BenchOptions {
  names: string[];
  quick: boolean;
  filter?: string | undefined;
  json?: string | undefined;
  plot?: string | undefined;
}

/** dist/bench/run.js of a built checkout, next to this file's dist/src/cli. */
const RUNNER = new URL('../../bench/run.js', import.meta.url);

/** What the CLI uses of bench/run.ts (declared here: the package's declarations must not reach into bench/). */
interface Progress {
  bench: string;
  index: number;
  of: number;
  scenario?: string;
}
interface Runner {
  checkNames(names: string[]): void;
  runBenchmarks(o: { names: string[]; quick: boolean; filter?: RegExp | undefined; onProgress(p: Progress): void; beforeOutput(): void }): Promise<Result>;
  plotSvg(result: Result): string;
  plotHtml(result: Result): string;
}
interface Result {
  seconds: number;
  scenarios: unknown[];
  failed: string[];
}

/** A line on stderr saying what runs: rewritten in place on a terminal, one line per step otherwise. */
function progressLine(): { update(p: Progress): void; clear(): void; done(): void } {
  const tty = process.stderr.isTTY;
  const t0 = performance.now();
  let what = '';
  let shown = false;
  const elapsed = () => {
    const s = Math.round((performance.now() - t0) / 1000);
    return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
  };
  const draw = () => {
    if (!what) return;
    const line = `softdpu bench ${elapsed()} ${what}`;
    process.stderr.write(`\r\x1b[2K${line.slice(0, Math.max(20, (process.stderr.columns ?? 80) - 1))}`);
    shown = true;
  };
  const timer = tty ? setInterval(draw, 500) : undefined;
  timer?.unref();
  return {
    update({ bench, index, of, scenario }) {
      what = `[${index + 1}/${of}] ${bench}${scenario ? ` > ${scenario}` : ''}`;
      if (tty) draw();
      else process.stderr.write(`softdpu bench ${elapsed()} ${what}\n`);
    },
    clear() {
      if (shown) process.stderr.write('\r\x1b[2K');
      shown = false;
    },
    done() {
      if (timer) clearInterval(timer);
      this.clear();
    },
  };
}

export async function bench(o: BenchOptions): Promise<number> {
  if (!existsSync(RUNNER)) {
    const repo = repositoryUrl();
    process.stderr.write(`softdpu bench: the benchmarks ship with the source repository, not the npm package: ${repo ? `git clone ${repo}` : 'clone it'}, then run \`npm ci && npm run bench\` there\n`);
    return 2;
  }
  let filter: RegExp | undefined;
  try {
    filter = o.filter === undefined ? undefined : new RegExp(o.filter);
  } catch (err) {
    throw new UsageError('bench', `--filter ${JSON.stringify(o.filter)} is not a regular expression: ${(err as Error).message}`);
  }
  if (o.plot !== undefined && !/\.(svg|html?)$/i.test(o.plot)) throw new UsageError('bench', `--plot ${JSON.stringify(o.plot)}: the file name must end in .svg or .html`);
  const runner = (await import(RUNNER.href)) as Runner;
  try {
    runner.checkNames(o.names);
  } catch (err) {
    throw new UsageError('bench', (err as Error).message);
  }
  const progress = progressLine();
  let result: Result;
  try {
    result = await runner.runBenchmarks({ names: o.names, quick: o.quick, filter, onProgress: (p) => progress.update(p), beforeOutput: () => progress.clear() });
  } finally {
    progress.done();
  }
  if (!result.scenarios.length && filter) process.stderr.write(`softdpu bench: --filter ${o.filter} selected no scenario\n`);
  const json = JSON.stringify(result, null, 2) + '\n';
  if (o.json === '-') process.stdout.write(json);
  else if (o.json !== undefined) writeFileSync(o.json, json);
  if (o.plot !== undefined) writeFileSync(o.plot, /\.svg$/i.test(o.plot) ? runner.plotSvg(result) : runner.plotHtml(result));
  process.stderr.write(`softdpu bench: ${result.scenarios.length} scenarios in ${result.seconds.toFixed(1)} s${o.json && o.json !== '-' ? `; figures in ${o.json}` : ''}${o.plot ? `; plot in ${o.plot}` : ''}\n`);
  if (result.failed.length) {
    process.stderr.write(`softdpu bench: ${result.failed.join(', ')} failed (the table says why)\n`);
    return 1;
  }
  return 0;
}
