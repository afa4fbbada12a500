/**
 * `softdpu run`: a host<->DPU test as a CI job runs it. The commands of both sides run on a fabric made
 * for this run alone (a fresh temporary directory in $SOFTDPU_FABRIC), which is swept and removed at
 * the end (kept with --keep-fabric); the supervision itself is run-procs.ts. docs/c.md#run-a-test-softdpu-run.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DocaError } from '../core/error.js';
import { sweepFabricDir } from '../fabric/dir.js';
import { sweepEpitaphs } from '../fabric/epitaphs.js';
import { loadTopologyFile } from '../fabric/topology.js';
import { supervise } from './run-procs.js';
import { UsageError } from './usage.js';

export interface RunOptions {
  dpu: string[];
  host: string[];
  /** --fabric, refused: the run's fabric is its own. */
  fabric?: string;
  topology?: string;
  ready?: string;
  timeout?: string;
  grace?: string;
  untilHost: boolean;
  keepFabric: boolean;
}

export const DEFAULT_TIMEOUT_S = 300;
export const DEFAULT_GRACE_S = 5;

const say = (line: string) => process.stderr.write(`softdpu run: ${line}\n`);

function seconds(option: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const s = Number(value);
  if (value.trim() === '' || !Number.isFinite(s) || s < 0) throw new UsageError('run', `${option} ${JSON.stringify(value)} is not a number of seconds (0 or more)`);
  return s;
}

/** The topology file (--topology, else $SOFTDPU_TOPOLOGY) as an absolute path, read as the library reads it. */
function checkedTopology(option: string | undefined): string | undefined {
  const file = option ?? (process.env.SOFTDPU_TOPOLOGY || undefined);
  if (file === undefined) return undefined;
  const path = resolve(file);
  try {
    loadTopologyFile(path);
  } catch (err) {
    if (!(err instanceof DocaError)) throw err;
    const what = option === undefined ? '$SOFTDPU_TOPOLOGY' : '--topology';
    throw new UsageError('run', `${what} ${file}: ${err.message.replace(/^topology: /, '')}`, 'docs/topology.md');
  }
  return path;
}

/** rm -r, again while a process that is ending still writes its epitaph into it. */
function removeDir(dir: string): void {
  for (let attempt = 1; ; attempt++) {
    try {
      return rmSync(dir, { recursive: true, force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOTEMPTY' || attempt === 10) throw err;
    }
  }
}

export async function run(o: RunOptions): Promise<number> {
  if (o.fabric !== undefined) throw new UsageError('run', '--fabric does not apply: softdpu run makes a fresh fabric for its commands (--keep-fabric keeps it)');
  if (o.dpu.length + o.host.length === 0) throw new UsageError('run', 'nothing to run: give --dpu CMD and/or --host CMD');
  for (const [flag, list] of [['--dpu', o.dpu], ['--host', o.host]] as const) {
    if (list.some((c) => c.trim() === '')) throw new UsageError('run', `${flag} needs a command, not an empty string`);
  }
  if (o.ready !== undefined && o.dpu.length === 0) throw new UsageError('run', '--ready waits for a line of the DPU side, and there is no --dpu');
  if (o.untilHost && o.host.length === 0) throw new UsageError('run', '--until-host needs a host side (--host CMD)');
  let ready: RegExp | undefined;
  try {
    ready = o.ready === undefined ? undefined : new RegExp(o.ready);
  } catch {
    throw new UsageError('run', `--ready ${JSON.stringify(o.ready)} is not a regular expression`);
  }
  const timeoutS = seconds('--timeout', o.timeout, DEFAULT_TIMEOUT_S);
  const graceS = seconds('--grace', o.grace, DEFAULT_GRACE_S);
  const topology = checkedTopology(o.topology);

  const fabric = mkdtempSync(join(tmpdir(), 'softdpu-run-'));
  try {
    return await supervise({
      dpu: o.dpu,
      host: o.host,
      env: { ...process.env, SOFTDPU_FABRIC: fabric, ...(topology === undefined ? {} : { SOFTDPU_TOPOLOGY: topology }) },
      ...(ready === undefined ? {} : { ready }),
      untilHost: o.untilHost,
      timeoutMs: timeoutS * 1000,
      graceMs: graceS * 1000,
      stdout: process.stdout,
      stderr: process.stderr,
      say,
    });
  } finally {
    // Every command's process group is gone by now: what is left in the directory is the dead's.
    const swept = sweepFabricDir(fabric);
    sweepEpitaphs(fabric, { ms: 0, count: 0 });
    if (swept.live > 0) say(`${swept.live} entries of the fabric are still in use by processes that left their command's process group`);
    if (o.keepFabric) say(`kept the fabric directory ${fabric}`);
    else removeDir(fabric);
  }
}
