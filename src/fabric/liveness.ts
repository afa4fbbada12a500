/**
 * Process identity and liveness. A pid alone is not an identity (pids are reused) and `kill(pid, 0)`
 * is fooled by zombies, so an owner is (pid, start time in clock ticks since boot) read from
 * /proc/<pid>/stat, and a zombie counts as dead.
 */
import { readFileSync } from 'node:fs';

export interface ProcessIdentity {
  readonly pid: number;
  /** Field 22 of /proc/<pid>/stat. */
  readonly start: number;
}

function readStat(pid: number): { state: string; start: number } | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return undefined;
  }
  // The command name (field 2) may contain spaces and parentheses: parse after the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { state: fields[0]!, start: Number(fields[19]) };
}

/** The identity of a running process, or undefined if it does not exist or is a zombie. */
export function processIdentity(pid: number): ProcessIdentity | undefined {
  const stat = readStat(pid);
  if (!stat || stat.state === 'Z' || stat.state === 'X') return undefined;
  return { pid, start: stat.start };
}

/** This process. */
export const self: ProcessIdentity = processIdentity(process.pid)!;

/** True while the process that had this identity still runs (not a zombie, pid not reused). */
export function isAlive(owner: ProcessIdentity): boolean {
  if (owner.pid === self.pid) return owner.start === self.start;
  const now = processIdentity(owner.pid);
  return now !== undefined && now.start === owner.start;
}

/**
 * How long an answer of `recentlyAlive` is trusted: reading /proc costs microseconds, so a call on a hot
 * path (using an imported map or event) learns of its exporter's death within this bound.
 */
const ANSWER_TTL_MS = 20;
const answers = new Map<string, { alive: boolean; at: number }>();

/** `isAlive`, from an answer at most ANSWER_TTL_MS old (a dead process stays dead). */
export function recentlyAlive(owner: ProcessIdentity): boolean {
  const key = `${owner.pid}:${owner.start}`;
  const now = performance.now();
  const known = answers.get(key);
  if (known && (!known.alive || now - known.at <= ANSWER_TTL_MS)) return known.alive;
  const alive = isAlive(owner);
  if (answers.size >= 4096) answers.clear(); // bounded: answers are only a cache
  answers.set(key, { alive, at: now });
  return alive;
}

/**
 * The one liveness cadence of a thread: every object that depends on another process (a connection's
 * peer, an imported event's exporter) registers here, and every LIVENESS_INTERVAL_MS one pass reads
 * /proc once per watched process and tells the objects whose process died. The pass runs from a timer
 * (unreferenced: it never keeps a process alive) and, for programs that poll without turning the event
 * loop, from `livenessTick()`, which progress engines call now and then.
 */
export const LIVENESS_INTERVAL_MS = 200;

interface ProcessWatch {
  readonly owner: ProcessIdentity;
  readonly onDeath: () => void;
}

const watched = new Set<ProcessWatch>();
let timer: NodeJS.Timeout | undefined;
let nextPass = 0;

/** Calls `onDeath` once, from a later pass, if `owner` dies; the returned function cancels the watch. */
export function watchProcess(owner: ProcessIdentity, onDeath: () => void): () => void {
  const w: ProcessWatch = { owner, onDeath };
  watched.add(w);
  if (!timer) {
    timer = setInterval(pass, LIVENESS_INTERVAL_MS);
    timer.unref();
  }
  return () => {
    watched.delete(w);
    if (watched.size === 0 && timer) {
      clearInterval(timer);
      timer = undefined;
    }
  };
}

/** Runs a pass if one is due (cheap otherwise): for loops that never let timers run. */
export function livenessTick(): void {
  if (watched.size > 0 && performance.now() >= nextPass) pass();
}

function pass(): void {
  nextPass = performance.now() + LIVENESS_INTERVAL_MS;
  const verdict = new Map<string, boolean>();
  for (const w of [...watched]) {
    const key = `${w.owner.pid}:${w.owner.start}`;
    let alive = verdict.get(key);
    if (alive === undefined) {
      verdict.set(key, (alive = isAlive(w.owner)));
      answers.set(key, { alive, at: performance.now() });
    }
    if (alive || !watched.delete(w)) continue;
    w.onDeath();
  }
  if (watched.size === 0 && timer) {
    clearInterval(timer);
    timer = undefined;
  }
}
