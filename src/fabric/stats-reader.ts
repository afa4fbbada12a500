/**
 * The observer's side of introspection (fabric/stats.ts): finds every thread's stats segment in a
 * fabric directory, maps it, and copies what it says, without locks and without disturbing the owner.
 * A process that died is kept (its last copy, marked dead) until its entry is swept.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isAlive } from './liveness.js';
import { entryOwner } from './names.js';
import { Segment } from './segment.js';
import {
  COUNTER_NAMES,
  COUNTERS,
  EVENT_SIZE,
  NAME_BYTES,
  OFF_EVENTS,
  OFF_SLOTS,
  OFF_TITLE,
  SLOT_SIZE,
  StatKind,
  STATS_MAGIC,
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

interface Watched {
  segment: Segment | undefined;
  last: ThreadSnapshot | undefined;
}

/** Reads a fabric's introspection, again and again (`softdpu top`, `softdpu view`). */
export class StatsObserver {
  private readonly watched = new Map<string, Watched>();

  constructor(readonly dir: string) {}

  snapshot(): FabricSnapshot {
    const seen = new Set<string>();
    let names: string[] = [];
    try {
      names = readdirSync(this.dir);
    } catch {
      // no fabric (yet): nothing to show
    }
    const threads: ThreadSnapshot[] = [];
    for (const name of names) {
      const owner = entryOwner(name);
      if (!owner || owner.kind !== 'stats') continue;
      seen.add(name);
      const w = this.watched.get(name) ?? { segment: undefined, last: undefined };
      this.watched.set(name, w);
      let alive = isAlive(owner);
      if (alive && (!w.segment || w.segment.closed || w.segment.revoked)) w.segment = this.open(name);
      // A thread that ended (a worker) closed its segment with it: its process lives, it does not.
      if (alive && !w.segment) alive = false;
      if (alive && w.segment) w.last = this.read(w.segment) ?? w.last;
      if (!alive && w.segment) {
        w.segment.close();
        w.segment = undefined;
      }
      if (w.last) threads.push({ ...w.last, alive });
      // Dead before this observer first looked: its memory went with it, but its entry waits for a sweep.
      else if (!alive) threads.push({ pid: owner.pid, tid: Number(owner.tag), start: owner.start, title: '', alive, objects: [], events: [] });
    }
    for (const [name, w] of this.watched) {
      if (seen.has(name)) continue;
      w.segment?.close(); // swept
      this.watched.delete(name);
    }
    return { time: Date.now(), dir: this.dir, threads };
  }

  close(): void {
    for (const w of this.watched.values()) w.segment?.close();
    this.watched.clear();
  }

  private open(name: string): Segment | undefined {
    try {
      const d = JSON.parse(readFileSync(join(this.dir, name), 'utf8')) as { pid: number; start: number; fd: number; size: number; token: string };
      return Segment.open({ pid: d.pid, start: d.start, fd: d.fd, size: d.size, token: new Uint8Array(Buffer.from(d.token, 'hex')) }, 'softdpu observer', ['stats']);
    } catch {
      return undefined; // gone meanwhile, or not a stats segment: nothing to show
    }
  }

  private read(seg: Segment): ThreadSnapshot | undefined {
    const v = new DataView(seg.u8.buffer);
    const slots = v.getUint32(72, true);
    const events = v.getUint32(76, true);
    if (Atomics.load(seg.i32, 16) !== STATS_MAGIC || v.getUint32(68, true) !== STATS_VERSION || OFF_SLOTS + slots * SLOT_SIZE > seg.size || OFF_EVENTS + events * EVENT_SIZE > OFF_SLOTS) return undefined;
    const pid = v.getUint32(80, true);
    const tid = v.getUint32(84, true);
    const objects: ObjectSnapshot[] = [];
    for (let slot = 0; slot < slots; slot++) {
      const base = OFF_SLOTS + slot * SLOT_SIZE;
      for (let attempt = 0; attempt < 4; attempt++) {
        const gen = Atomics.load(seg.i32, base / 4);
        if (gen % 2 !== 0) continue;
        const kind = v.getUint32(base + 4, true);
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
          name: text(seg.u8, base + 32, NAME_BYTES),
          counters,
        };
        if (Atomics.load(seg.i32, base / 4) !== gen) continue;
        objects.push(o);
        break;
      }
    }
    // The event count is a u32 (modulo 2^32, a multiple of the ring's size): the ring's slots oldest
    // first, skipping those never written (time 0), so a count that wrapped still shows them all.
    const total = Atomics.load(seg.i32, 96 / 4) >>> 0;
    const list: EventSnapshot[] = [];
    for (let k = events; k > 0; k--) {
      const at = OFF_EVENTS + (((total - k) >>> 0) % events) * EVENT_SIZE;
      const time = v.getFloat64(at, true);
      if (time === 0) continue;
      list.push({ time, pid, tid, kind: EVENT_NAMES[v.getUint32(at + 8, true)] ?? 'event', slot: v.getInt32(at + 12, true), text: text(seg.u8, at + 16, EVENT_SIZE - 16) });
    }
    return { pid, tid, start: v.getFloat64(88, true), title: text(seg.u8, OFF_TITLE, NAME_BYTES), alive: true, objects, events: list };
  }
}
