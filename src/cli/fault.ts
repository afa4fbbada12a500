/** `softdpu fault add|list|clear`: the fabric's fault plan (docs/faults.md), through the `Faults` API. */
import { readFileSync } from 'node:fs';
import { DocaError } from '../core/error.js';
import type { Fabric } from '../fabric/fabric.js';
import { type FaultListing, Faults } from '../fabric/faults/api.js';
import type { FaultPlan, FaultSpec } from '../fabric/faults/plan.js';
import { noArguments, subcommand, UsageError } from './usage.js';

export interface FaultOptions {
  json?: boolean;
  seed?: string;
}

/**
 * Runs one subcommand and returns what it prints. The command line is checked (UsageError) before the
 * fabric is joined; what the plan refuses is the `Faults` API's DocaError.
 */
export function faultCommand(fabric: () => Fabric, positionals: string[], options: FaultOptions): string {
  const [sub, args] = subcommand('fault', positionals, ['add', 'list', 'clear']);
  if (sub !== 'add' && options.seed !== undefined) throw new UsageError(`fault ${sub}`, '--seed belongs to fault add');
  switch (sub) {
    case 'add': {
      if (args.length === 0) throw new UsageError('fault add', 'missing the fault: JSON (a fault, an array, a plan) or a file holding it');
      const seed = options.seed === undefined ? undefined : seedOf(options.seed);
      const faults = args.flatMap((arg) => toArray(parse(arg)));
      const dir = fabric().dir;
      const ids = Faults.add(seed === undefined ? faults : ({ seed, faults } as FaultPlan), { fabric: dir });
      return options.json ? JSON.stringify({ added: ids }) : `added ${ids.join(', ')} to the fault plan of ${dir}`;
    }
    case 'clear': {
      const dir = fabric().dir;
      const ids = Faults.clear(args.length > 0 ? { fabric: dir, ids: args } : { fabric: dir });
      return options.json ? JSON.stringify({ removed: ids }) : `removed ${ids.length === 0 ? 'nothing' : ids.join(', ')} from the fault plan of ${dir}`;
    }
    default: {
      noArguments('fault list', args);
      const listing = Faults.list({ fabric: fabric().dir });
      return options.json ? JSON.stringify(listing, null, 2) : formatListing(listing);
    }
  }
}

/** `--seed N`: the plan's seed, an integer in [0, 2^32) as the plan format has it. */
function seedOf(text: string): number {
  const seed = Number(text);
  if (!/^\d+$/.test(text) || seed >= 2 ** 32) throw new UsageError('fault add', `--seed ${JSON.stringify(text)} is not an integer from 0 to 4294967295`);
  return seed;
}

/** The text of `softdpu fault list` (and of the faults line of `softdpu devices`). */
export function formatListing(l: FaultListing): string {
  const lines = [`fault plan of ${l.where}: generation ${l.generation ?? 0}, seed ${l.seed ?? 1}, ${l.faults.length === 0 ? 'no faults' : `${l.faults.length} fault(s)`}`];
  for (const f of l.faults) {
    const { id, kind, injections, source: _source, ...rest } = f;
    lines.push(`  ${id.padEnd(6)} ${kind.padEnd(13)} ${JSON.stringify(rest)}  injections ${injections}`);
  }
  for (const p of l.processes ?? []) lines.push(`  pid ${p.pid} thread ${p.tid}${p.alive ? '' : ' (ended)'}: its own fault ${p.id} (${p.kind}, from ${p.source}) injected ${p.injections} time(s)`);
  return lines.join('\n');
}

/** A JSON argument, or the path of a file holding one (as $SOFTDPU_FAULTS). */
function parse(arg: string): unknown {
  const text = arg.trimStart().startsWith('{') || arg.trimStart().startsWith('[') ? arg : readFile(arg);
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new DocaError('INVALID_VALUE', 'softdpu fault add', `${JSON.stringify(arg.slice(0, 40))} is not JSON: ${(err as Error).message}`);
  }
}

function readFile(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new DocaError('INVALID_VALUE', 'softdpu fault add', `${JSON.stringify(path)} is neither JSON nor a readable file: ${(err as Error).message}`);
  }
}

/** A fault, an array of faults, or a plan's faults; the plan's seed is `--seed`'s job. */
function toArray(json: unknown): FaultSpec[] {
  if (Array.isArray(json)) return json as FaultSpec[];
  const plan = json as { faults?: unknown; seed?: unknown };
  if (plan && typeof plan === 'object' && 'faults' in plan) {
    if (plan.seed !== undefined) throw new DocaError('INVALID_VALUE', 'softdpu fault add', 'give the plan\'s seed with --seed');
    return plan.faults as FaultSpec[];
  }
  return [json as FaultSpec];
}
