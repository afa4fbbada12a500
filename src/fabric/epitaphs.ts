/**
 * Epitaphs: the final record a thread leaves in the fabric directory when it ends (fabric/stats.ts
 * writes one at exit: a copy of its stats segment), so that observers can show a process that lived
 * less than one of their intervals (docs/observe.md). Named after the entry they follow
 * (`<entry>.exited`, names.ts), they outlive their owner by design, so the sweep of dead owners'
 * entries (dir.ts) leaves them, and this file holds the one rule that removes them: an epitaph is kept
 * while it is one of the newest `count` and younger than `ms` (by its mtime: when its owner exited), and
 * removed by the next sweep after that. docs/protocol.md#epitaphs specifies them.
 */
import { lstatSync, readdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { sdkLogSource } from '../core/log.js';
import type { ProcessIdentity } from './liveness.js';
import { epitaphOwner } from './names.js';

const log = sdkLogSource('fabric');

/** How long and how many epitaphs are kept. */
export interface EpitaphRetention {
  /** Milliseconds after its owner's exit. */
  readonly ms: number;
  /** The newest this many, at most. */
  readonly count: number;
}

/** 60 s, the newest 64: long enough to look at a run that just ended, bounded however many end. */
export const DEFAULT_RETENTION: EpitaphRetention = { ms: 60_000, count: 64 };
/** Retention in milliseconds, if not 60 s (the tests use it; so can a user who wants longer). */
export const RETENTION_ENV = 'SOFTDPU_EPITAPH_MS';

let warned = '';

/** The retention in force: `$SOFTDPU_EPITAPH_MS` (an integer of milliseconds, 0 or more), else 60 s. */
export function epitaphRetention(): EpitaphRetention {
  const text = process.env[RETENTION_ENV];
  if (text === undefined || text === '') return DEFAULT_RETENTION;
  const ms = Number(text);
  if (Number.isSafeInteger(ms) && ms >= 0) return { ...DEFAULT_RETENTION, ms };
  if (warned !== text) log.warn(`${RETENTION_ENV}=${JSON.stringify(text)} is not a number of milliseconds (0 or more): keeping epitaphs ${DEFAULT_RETENTION.ms} ms`);
  warned = text;
  return DEFAULT_RETENTION;
}

export interface Epitaph {
  readonly name: string;
  /** The thread it is the epitaph of: its process, and the entry's kind and tag (the tid for stats). */
  readonly owner: ProcessIdentity & { kind: string; tag: string };
  /** When it was written (its owner exited), ms since the epoch. */
  readonly mtimeMs: number;
  readonly size: number;
}

/**
 * The epitaphs among `names` (a listing of `dir`), newest first: those kept under `retention` at `now`,
 * and those past it. Files that vanish meanwhile, or are not regular files, are left out.
 */
export function epitaphsIn(dir: string, names: readonly string[], retention = epitaphRetention(), now = Date.now()): { kept: Epitaph[]; expired: Epitaph[] } {
  const all: Epitaph[] = [];
  for (const name of names) {
    const owner = epitaphOwner(name);
    if (!owner) continue;
    try {
      const st = lstatSync(join(dir, name));
      if (st.isFile()) all.push({ name, owner, mtimeMs: st.mtimeMs, size: st.size });
    } catch {
      // removed meanwhile
    }
  }
  all.sort((a, b) => b.mtimeMs - a.mtimeMs || (a.name < b.name ? -1 : 1));
  const kept: Epitaph[] = [];
  const expired: Epitaph[] = [];
  for (const e of all) (kept.length < retention.count && now - e.mtimeMs < retention.ms ? kept : expired).push(e);
  return { kept, expired };
}

/**
 * Removes the epitaphs in `dir` past `retention`; returns their names. Joining a fabric runs it with the
 * retention in force; `softdpu fabric clean` with none (it removes them all).
 */
export function sweepEpitaphs(dir: string, retention = epitaphRetention()): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const e of epitaphsIn(dir, names, retention).expired) {
    try {
      unlinkSync(join(dir, e.name));
      removed.push(e.name);
      log.info(`removed ${e.name}: pid ${e.owner.pid} exited at ${new Date(e.mtimeMs).toISOString()}`);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') log.warn(`cannot remove ${e.name}: ${(err as Error).message}`);
    }
  }
  return removed;
}
