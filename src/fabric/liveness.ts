/**
 * Process and thread identity and liveness. A pid alone is not an identity (pids are reused) and
 * `kill(pid, 0)` is fooled by zombies, so an owner is (pid, start time in clock ticks since boot) read
 * from /proc/<pid>/stat, and a zombie counts as dead. A thread (a worker that owns producers, consumers
 * or claims) is its process plus (kernel tid, the thread's own start time) from /proc/<pid>/task/<tid>/stat.
 */
import { closeSync, openSync, readlinkSync, readSync } from 'node:fs';

export interface ProcessIdentity {
  readonly pid: number;
  /** Field 22 of /proc/<pid>/stat. */
  readonly start: number;
}

/** A thread of a process: what owns an endpoint or a claim in shared memory. */
export interface ThreadIdentity extends ProcessIdentity {
  /** Kernel thread id (equal to pid for the main thread). */
  readonly tid: number;
  /** Field 22 of /proc/<pid>/task/<tid>/stat. */
  readonly tstart: number;
}

/**
 * Where /proc reads land: a stat file is at most about 1.1 KB (a command name of at most 16 bytes and
 * 52 numeric fields), so one buffer kept for the thread's life takes it whole, and a read makes no
 * Buffer and no strings of its fields (a busy wait's liveness check reads it every 20 ms: readFileSync
 * and split made about 3 KB each time).
 */
const statBuf = Buffer.alloc(4096);
const CLOSE_PAREN = 0x29;
const SPACE = 0x20;
const DIGIT_0 = 0x30;
const ZOMBIE = 0x5a; // 'Z'
const DEAD = 0x58; // 'X'

/** Fields 3 and 22 of a stat file: whether the task is a zombie or dead, and its start time. */
function readStat(pid: number, tid?: number): { gone: boolean; start: number } | undefined {
  const path = tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`;
  let n: number;
  try {
    const fd = openSync(path, 'r');
    try {
      n = readSync(fd, statBuf, 0, statBuf.length, 0);
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
  // The command name (field 2) may contain spaces and parentheses: parse after the last ')'. Then
  // field 3 (the state) is one character, and field 22 (the start time) 19 spaces further.
  let at = statBuf.lastIndexOf(CLOSE_PAREN, n - 1);
  if (at < 0 || at + 2 >= n) return undefined;
  at += 2;
  const gone = statBuf[at] === ZOMBIE || statBuf[at] === DEAD;
  for (let spaces = 0; at < n && spaces < 19; at++) if (statBuf[at] === SPACE) spaces++;
  let start = 0;
  for (; at < n && statBuf[at]! >= DIGIT_0 && statBuf[at]! <= DIGIT_0 + 9; at++) start = start * 10 + statBuf[at]! - DIGIT_0;
  return { gone, start };
}

/** The identity of a running process, or undefined if it does not exist or is a zombie. */
export function processIdentity(pid: number): ProcessIdentity | undefined {
  const stat = readStat(pid);
  if (!stat || stat.gone) return undefined;
  return { pid, start: stat.start };
}

/** This process. */
export const self: ProcessIdentity = processIdentity(process.pid)!;

/** This thread (each thread has its own instance of this module). */
export const selfThread: ThreadIdentity = (() => {
  const tid = Number(/task\/(\d+)$/.exec(readlinkSync('/proc/thread-self'))?.[1] ?? self.pid);
  return { ...self, tid, tstart: tid === self.pid ? self.start : (readStat(self.pid, tid)?.start ?? self.start) };
})();

/** True while the process (and, for a thread identity, the thread) still runs: not a zombie, not reused. */
export function isAlive(owner: ProcessIdentity | ThreadIdentity): boolean {
  if (owner.pid === self.pid) {
    if (owner.start !== self.start) return false;
  } else {
    const now = processIdentity(owner.pid);
    if (now === undefined || now.start !== owner.start) return false;
  }
  if (!('tid' in owner) || owner.tid === owner.pid) return true;
  const thread = readStat(owner.pid, owner.tid);
  return thread !== undefined && !thread.gone && thread.start === owner.tstart;
}

/**
 * How long an answer of `recentlyAlive` is trusted: reading /proc costs microseconds, so a call on a hot
 * path (using an imported map or event) learns of its exporter's death within this bound.
 */
const ANSWER_TTL_MS = 20;
const answers = new Map<string, { alive: boolean; at: number }>();

/** `isAlive`, from an answer at most ANSWER_TTL_MS old (a dead process stays dead). */
export function recentlyAlive(owner: ProcessIdentity | ThreadIdentity): boolean {
  const key = keyOf(owner);
  const now = performance.now();
  const known = answers.get(key);
  if (known && (!known.alive || now - known.at <= ANSWER_TTL_MS)) return known.alive;
  const alive = isAlive(owner);
  if (answers.size >= 4096) answers.clear(); // bounded: answers are only a cache
  answers.set(key, { alive, at: now });
  return alive;
}

/**
 * Asks between two looks at the clock for a LivenessAnswer in a loop that never lets timers run: a
 * look makes a number (the clock's), an ask nothing.
 */
const ASKS_PER_LOOK = 64;
/** Bumped ANSWER_TTL_MS after an answer was looked at (one timer at a time, armed only by looks). */
let ttlEpoch = 0;
let ttlTimer: NodeJS.Timeout | undefined;

function armTtlTimer(): void {
  if (ttlTimer) return;
  ttlTimer = setTimeout(() => {
    ttlTimer = undefined;
    ttlEpoch++;
  }, ANSWER_TTL_MS);
  ttlTimer.unref();
}

/**
 * `recentlyAlive` of one owner, for a busy path that asks on every call (each use of an imported
 * event): the clock is looked at only once a timer says ANSWER_TTL_MS passed since the last look, or
 * every ASKS_PER_LOOK asks in a loop that lets no timer run, and /proc is read when the answer is older
 * than ANSWER_TTL_MS; so an ask reads no clock and builds no key (recentlyAlive does both). A death is
 * learnt within 2 x ANSWER_TTL_MS by a program that turns its event loop, and within ASKS_PER_LOOK
 * asks after ANSWER_TTL_MS by one that does not. A dead owner stays dead.
 */
export class LivenessAnswer {
  private alive = true;
  private at = -Infinity;
  private asks = 0;
  private epoch = -1;
  private deathsSeen = 0;

  constructor(private readonly owner: ProcessIdentity | ThreadIdentity) {}

  recent(): boolean {
    if (!this.alive) return false;
    if (this.deathsSeen === deaths) {
      if (this.epoch === ttlEpoch && ++this.asks < ASKS_PER_LOOK) return true;
    } else {
      // The cadence learnt of a death since: it may be this owner's, and its watchers (told next) ask
      // this answer to decide. An answer kept from before must not tell them "alive".
      this.deathsSeen = deaths;
      this.at = -Infinity;
    }
    this.asks = 0;
    this.epoch = ttlEpoch;
    armTtlTimer();
    const now = performance.now();
    if (now - this.at <= ANSWER_TTL_MS) return true;
    this.at = now;
    return (this.alive = isAlive(this.owner));
  }
}

/**
 * The one liveness cadence of a thread: every object that depends on another process (a connection's
 * peer, an imported event's exporter) registers here, and every LIVENESS_INTERVAL_MS one pass reads
 * /proc once per watched process and tells the objects whose process died. The pass runs from a timer
 * (unreferenced: it never keeps a process alive) and, for programs that poll without turning the event
 * loop, from `livenessTick()`, which progress engines call now and then.
 */
export const LIVENESS_INTERVAL_MS = 200;

const keyOf = (o: ProcessIdentity | ThreadIdentity) => ('tid' in o ? `${o.pid}:${o.start}:${o.tid}:${o.tstart}` : `${o.pid}:${o.start}`);

interface ProcessWatch {
  readonly owner: ProcessIdentity | ThreadIdentity;
  readonly onDeath: () => void;
}

const watched = new Set<ProcessWatch>();
let timer: NodeJS.Timeout | undefined;
let nextPass = 0;

/**
 * Calls `onDeath` once, from a later pass, if `owner` (a process, or a thread of one) dies; the returned
 * function cancels the watch.
 */
export function watchProcess(owner: ProcessIdentity | ThreadIdentity, onDeath: () => void): () => void {
  const w: ProcessWatch = { owner, onDeath };
  watched.add(w);
  startCadence();
  return () => {
    watched.delete(w);
    stopCadenceIfIdle();
  };
}

let passHook: (() => void) | undefined;

/**
 * Runs `hook` at the end of every pass, and keeps the cadence going while it is set: the fault plan
 * (faults/sources.ts) is re-read on this same cadence rather than on a timer of its own.
 */
export function onLivenessPass(hook: () => void): void {
  passHook = hook;
  startCadence();
}

function startCadence(): void {
  if (!timer) {
    timer = setInterval(pass, LIVENESS_INTERVAL_MS);
    timer.unref();
  }
}

function stopCadenceIfIdle(): void {
  if (watched.size === 0 && !passHook && timer) {
    clearInterval(timer);
    timer = undefined;
  }
}

/** Runs a pass if one is due (cheap otherwise): for loops that never let timers run. */
export function livenessTick(): void {
  if ((watched.size > 0 || passHook) && performance.now() >= nextPass) pass();
}

/** Passes made so far: an answer taken in the same pass is as fresh as the cadence's (no clock read). */
let passes = 0;
/** Deaths the passes found: a LivenessAnswer asked after one looks at /proc again (see recent()). */
let deaths = 0;

/** How many liveness passes this thread has made (a hot path keeps an "alive" answer until it moves). */
export function livenessPasses(): number {
  return passes;
}

function pass(): void {
  passes++;
  nextPass = performance.now() + LIVENESS_INTERVAL_MS;
  const verdict = new Map<string, boolean>();
  for (const w of [...watched]) {
    const key = keyOf(w.owner);
    let alive = verdict.get(key);
    if (alive === undefined) {
      verdict.set(key, (alive = isAlive(w.owner)));
      answers.set(key, { alive, at: performance.now() });
    }
    if (alive || !watched.delete(w)) continue;
    deaths++;
    w.onDeath();
  }
  passHook?.();
  stopCadenceIfIdle();
}
