/**
 * The observer's side of introspection (fabric/stats.ts): finds every thread's stats segment in a
 * fabric directory, maps it, and copies what it says, without locks and without disturbing the owner.
 * A thread that ended normally left its epitaph (fabric/epitaphs.ts), read with the same code and shown
 * as exited while it is kept; a process that died without one (kill -9) is kept as its last copy,
 * marked dead, until its entry is swept.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Epitaph, epitaphsIn } from './epitaphs.js';
import { isAlive } from './liveness.js';
import { entryOwner } from './names.js';
import { Segment } from './segment.js';
import {
  COUNTER_NAMES,
  COUNTERS,
  EVENT_SIZE,
  KIND_ENDED,
  NAME_BYTES,
  OFF_CREATED,
  OFF_EVENTS,
  OFF_EXITED,
  OFF_SLOTS,
  OFF_TITLE,
  SLOT_SIZE,
  StatKind,
  STATS_MAGIC,
  STATS_SLOTS,
  STATS_VERSION,
  U64_COUNTERS,
} from './stats.js';

export interface ObjectSnapshot {
  slot: number;
  kind: string;
  /** Slot of the parent object in the same thread, or -1. */
  parent: number;
  state: number;
  id: number;
  peer: number;
  name: string;
  counters: Record<string, number>;
  /**
   * The object ended (destroyed; before its thread, in an epitaph): its slot keeps its final values
   * until it is reused. `softdpu top` and `view` show ended objects of exited threads only.
   */
  ended: boolean;
}

export interface EventSnapshot {
  time: number;
  pid: number;
  tid: number;
  kind: string;
  slot: number;
  text: string;
}

export interface ThreadSnapshot {
  pid: number;
  tid: number;
  start: number;
  title: string;
  alive: boolean;
  /** When the thread began publishing, ms since the epoch (0: not known). */
  since: number;
  /** When it exited, ms since the epoch: present for a thread shown from its epitaph. */
  exited?: number;
  objects: ObjectSnapshot[];
  events: EventSnapshot[];
}

export interface FabricSnapshot {
  time: number;
  dir: string;
  threads: ThreadSnapshot[];
}

const KIND_NAMES = Object.fromEntries(Object.entries(StatKind).map(([k, v]) => [v, k.toLowerCase()])) as Record<number, string>;
const EVENT_NAMES = ['', 'connect', 'disconnect', 'consumer_new', 'consumer_expired', 'error', 'fault', 'state'];
const decoder = new TextDecoder();

function text(u8: Uint8Array, at: number, size: number): string {
  const bytes = u8.subarray(at, at + size);
  const end = bytes.indexOf(0);
  return decoder.decode(end < 0 ? bytes : bytes.subarray(0, end));
}

/** An epitaph is the used part of a segment: never larger than one. */
const MAX_EPITAPH = OFF_SLOTS + STATS_SLOTS * SLOT_SIZE;

/**
 * What a stats segment's bytes say, ended objects included (marked): a live segment, or (`epitaph`) a
 * thread's epitaph, the same layout. Undefined when the bytes are not one.
 */
function parse(u8: Uint8Array, i32: Int32Array, size: number, epitaph: boolean): ThreadSnapshot | undefined {
  const v = new DataView(u8.buffer, u8.byteOffset, u8.byteLength);
  if (size < OFF_SLOTS) return undefined;
  const slots = v.getUint32(72, true);
  const events = v.getUint32(76, true);
  if (Atomics.load(i32, 16) !== STATS_MAGIC || v.getUint32(68, true) !== STATS_VERSION || OFF_SLOTS + slots * SLOT_SIZE > size || OFF_EVENTS + events * EVENT_SIZE > OFF_SLOTS) return undefined;
  const pid = v.getUint32(80, true);
  const tid = v.getUint32(84, true);
  const objects: ObjectSnapshot[] = [];
  for (let slot = 0; slot < slots; slot++) {
    const base = OFF_SLOTS + slot * SLOT_SIZE;
    for (let attempt = 0; attempt < 4; attempt++) {
      const gen = Atomics.load(i32, base / 4);
      if (gen % 2 !== 0) continue;
      const raw = v.getUint32(base + 4, true);
      const ended = (raw & KIND_ENDED) !== 0;
      const kind = raw & ~KIND_ENDED;
      if (kind === 0) break;
      const names = COUNTER_NAMES[kind] ?? [];
      const u64 = U64_COUNTERS[kind];
      const counters: Record<string, number> = {};
      // A u64 counter becomes a double here: exact up to 2^53, rounded beyond (JSON has no u64).
      for (let i = 0; i < Math.min(names.length, COUNTERS); i++) counters[names[i]!] = u64?.includes(i) ? Number(v.getBigUint64(base + 96 + i * 8, true)) : v.getFloat64(base + 96 + i * 8, true);
      const o: ObjectSnapshot = {
        slot,
        kind: KIND_NAMES[kind] ?? `kind ${kind}`,
        parent: v.getUint32(base + 8, true) - 1,
        state: v.getInt32(base + 12, true),
        id: v.getFloat64(base + 16, true),
        peer: v.getFloat64(base + 24, true),
        name: text(u8, base + 32, NAME_BYTES),
        counters,
        ended,
      };
      if (Atomics.load(i32, base / 4) !== gen) continue;
      objects.push(o);
      break;
    }
  }
  // The event count is a u32 (modulo 2^32, a multiple of the ring's size): the ring's slots oldest
  // first, skipping those never written (time 0), so a count that wrapped still shows them all.
  const total = Atomics.load(i32, 96 / 4) >>> 0;
  const list: EventSnapshot[] = [];
  for (let k = events; k > 0; k--) {
    const at = OFF_EVENTS + (((total - k) >>> 0) % events) * EVENT_SIZE;
    const time = v.getFloat64(at, true);
    if (time === 0) continue;
    list.push({ time, pid, tid, kind: EVENT_NAMES[v.getUint32(at + 8, true)] ?? 'event', slot: v.getInt32(at + 12, true), text: text(u8, at + 16, EVENT_SIZE - 16) });
  }
  const exited = v.getFloat64(OFF_EXITED, true);
  return {
    pid,
    tid,
    start: v.getFloat64(88, true),
    title: text(u8, OFF_TITLE, NAME_BYTES),
    alive: !epitaph,
    since: v.getFloat64(OFF_CREATED, true),
    ...(epitaph ? { exited } : {}),
    objects,
    events: list,
  };
}

interface Watched {
  segment: Segment | undefined;
  last: ThreadSnapshot | undefined;
}

/** Reads a fabric's introspection, again and again (`softdpu top`, `softdpu view`). */
export class StatsObserver {
  private readonly watched = new Map<string, Watched>();
  /** Epitaphs read, by name (they never change once written), with what they said (undefined: not one). */
  private readonly epitaphs = new Map<string, { mtimeMs: number; size: number; thread: ThreadSnapshot | undefined }>();

  constructor(readonly dir: string) {}

  snapshot(): FabricSnapshot {
    // The time of the look is when the listing began: a thread that published after it (see `since`) is
    // new to the next look.
    const time = Date.now();
    const seen = new Set<string>();
    let names: string[] = [];
    try {
      names = readdirSync(this.dir);
    } catch {
      // no fabric (yet): nothing to show
    }
    const threads: ThreadSnapshot[] = [];
    // A thread's epitaph, once there, is its final word: it replaces the entry (which goes right after).
    const final = new Map<string, ThreadSnapshot>();
    for (const e of epitaphsIn(this.dir, names).kept) {
      const th = this.readEpitaph(e);
      if (th) final.set(`${e.owner.kind}.${e.owner.pid}-${e.owner.start}.${e.owner.tag}`, th);
    }
    for (const name of names) {
      const owner = entryOwner(name);
      if (!owner || owner.kind !== 'stats' || final.has(name)) continue;
      seen.add(name);
      const w = this.watched.get(name) ?? { segment: undefined, last: undefined };
      this.watched.set(name, w);
      let alive = isAlive(owner);
      if (alive && (!w.segment || w.segment.closed || w.segment.revoked)) w.segment = this.open(name);
      // A thread that ended (a worker) closed its segment with it: its process lives, it does not.
      if (alive && !w.segment) alive = false;
      if (alive && w.segment) w.last = parse(w.segment.u8, w.segment.i32, w.segment.size, false) ?? w.last;
      if (!alive && w.segment) {
        w.segment.close();
        w.segment = undefined;
      }
      if (w.last) threads.push({ ...w.last, alive });
      // Dead before this observer first looked: its memory went with it, but its entry waits for a sweep.
      else if (!alive) threads.push({ pid: owner.pid, tid: Number(owner.tag), start: owner.start, title: '', alive, since: 0, objects: [], events: [] });
    }
    threads.push(...final.values());
    for (const [name, w] of this.watched) {
      if (seen.has(name)) continue;
      w.segment?.close(); // swept, or replaced by its epitaph
      this.watched.delete(name);
    }
    const listed = new Set(names);
    for (const name of this.epitaphs.keys()) if (!listed.has(name)) this.epitaphs.delete(name);
    return { time, dir: this.dir, threads };
  }

  close(): void {
    for (const w of this.watched.values()) w.segment?.close();
    this.watched.clear();
    this.epitaphs.clear();
  }

  private open(name: string): Segment | undefined {
    try {
      const d = JSON.parse(readFileSync(join(this.dir, name), 'utf8')) as { pid: number; start: number; fd: number; size: number; token: string };
      return Segment.open({ pid: d.pid, start: d.start, fd: d.fd, size: d.size, token: new Uint8Array(Buffer.from(d.token, 'hex')) }, 'softdpu observer', ['stats']);
    } catch {
      return undefined; // gone meanwhile, or not a stats segment: nothing to show
    }
  }

  /**
   * What an epitaph says, read once: it must be a stats segment's used part, no larger than a segment,
   * of the thread its name names, with its exit time; anything else is not shown.
   */
  private readEpitaph(e: Epitaph): ThreadSnapshot | undefined {
    const known = this.epitaphs.get(e.name);
    if (known && known.mtimeMs === e.mtimeMs && known.size === e.size) return known.thread;
    let thread: ThreadSnapshot | undefined;
    if (e.owner.kind === 'stats' && e.size <= MAX_EPITAPH) {
      try {
        const bytes = new Uint8Array(e.size); // its own buffer: aligned for the Int32Array
        const read = readFileSync(join(this.dir, e.name));
        if (read.length === e.size) {
          bytes.set(read);
          const th = parse(bytes, new Int32Array(bytes.buffer, 0, e.size >> 2), e.size, true);
          const own = th && th.pid === e.owner.pid && th.start === e.owner.start && String(th.tid) === e.owner.tag;
          if (own && th.exited! > 0) thread = th;
        }
      } catch {
        // removed meanwhile
      }
    }
    this.epitaphs.set(e.name, { mtimeMs: e.mtimeMs, size: e.size, thread });
    return thread;
  }
}
