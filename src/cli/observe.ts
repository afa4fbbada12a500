/**
 * What `softdpu top` and `softdpu view` show, made from the observer's snapshots (fabric/stats-reader.ts):
 * one row per process thread and per live object under it (in parent order), per-second rates from the
 * difference of two snapshots, and the links between processes (their comch connections, with the
 * traffic that crosses them). Processes that exited are shown from their epitaphs (fabric/epitaphs.ts),
 * marked, with their final counters and the objects they had destroyed. Any object kind is shown the
 * same way (kind, name, state, counters); an object with a peer (a connection, an imported sync event)
 * also names the process at the other end.
 */
import type { EventSnapshot, FabricSnapshot, ObjectSnapshot, ThreadSnapshot } from '../fabric/stats-reader.js';
import { STATE_NAMES as STATES_BY_KIND, StatKind } from '../fabric/stats.js';

/** Counters that say how many there are now, not how many happened: no rate. */
const GAUGES = new Set(['connections', 'threads', 'value', 'waiters', 'consumers', 'producers']);
/** The names of each kind's states, by value (fabric/stats.ts); a kind not here shows its state as a number. */
const STATE_NAMES: Record<string, readonly string[]> = Object.fromEntries(
  Object.entries(StatKind).flatMap(([name, kind]) => (STATES_BY_KIND[kind] ? [[name.toLowerCase(), STATES_BY_KIND[kind]!]] : [])),
);
/** How many of the most recent events a view keeps. */
export const MAX_EVENTS = 200;

export interface ProcessRow {
  type: 'process';
  key: string;
  pid: number;
  tid: number;
  title: string;
  /** What to call it in a word or two ({@link processName}). */
  name: string;
  alive: boolean;
  /** When it exited (ms since the epoch), for a thread shown from its epitaph. */
  exited?: number;
  /** The devices its objects live on (PCI address and side), from its device objects. */
  devices: { pci: string; side: string }[];
}

export interface ObjectRow {
  type: 'object';
  /** `pid/tid/slot`: stable while the object lives. */
  key: string;
  pid: number;
  tid: number;
  slot: number;
  alive: boolean;
  /** When its thread exited (ms since the epoch), for a thread shown from its epitaph. */
  exited?: number;
  /** It ended before its thread did (epitaphs only). */
  ended: boolean;
  kind: string;
  name: string;
  /** The state in words ('RUNNING'), '' when the kind has none. */
  state: string;
  /** Nesting under its parent object (0: top level of its thread). */
  depth: number;
  id: number;
  /** The process at the other end (connections, imported sync events), else 0. */
  peer: number;
  counters: Record<string, number>;
  /**
   * Per second, for counters that count what happened, over the time between this snapshot and the one
   * before ({@link RateTracker}); empty when that is not known.
   */
  rates: Record<string, number>;
}

export type Row = ProcessRow | ObjectRow;

/** The comch traffic between two processes, over every connection they share. */
export interface Link {
  key: string;
  /** The lower and the higher pid. */
  a: number;
  b: number;
  connections: number;
  /** Messages and bytes that crossed (each counted once, by its sender). */
  messages: number;
  bytes: number;
  msgRate: number;
  byteRate: number;
  /** False once either end is dead. */
  alive: boolean;
}

export interface FabricView {
  time: number;
  dir: string;
  rows: Row[];
  links: Link[];
  /** Every thread's recent events, oldest first. */
  events: EventSnapshot[];
  /** Seconds between the snapshot the rates count from and this one (0: the first, no rates). */
  span: number;
  totals: { processes: number; dead: number; exited: number; objects: number; connections: number; msgRate: number; byteRate: number };
}

/** The state of an object in words. */
export function stateName(o: Pick<ObjectSnapshot, 'kind' | 'state'>): string {
  const names = STATE_NAMES[o.kind];
  if (names) return names[o.state] ?? `state ${o.state}`;
  return o.state === 0 ? '' : `state ${o.state}`;
}

/**
 * A process's name in a word or two, from its title: a sample run as `softdpu sample NAME ...` is NAME,
 * another `softdpu` command `softdpu <command>`, anything else its script.
 */
export function processName(title: string): string {
  const m = /^softdpu (\S+)(?: (\S+))?/.exec(title);
  if (m) return m[1] === 'sample' && m[2] && !m[2].startsWith('-') ? m[2] : `softdpu ${m[1]}`;
  return title.split(' ')[0] ?? '';
}

/** Whether a counter counts events (and so has a rate). */
export function hasRate(counter: string): boolean {
  return !GAUGES.has(counter);
}

/** Messages and bytes an object sent (so that each crossing counts once, by its sender). */
function sent(o: Pick<ObjectRow, 'kind' | 'counters'>, rates?: Record<string, number>): { msgs: number; bytes: number } {
  const c = rates ?? o.counters;
  if (o.kind === 'connection') return { msgs: c.sent_messages ?? 0, bytes: c.sent_bytes ?? 0 };
  if (o.kind === 'producer') return { msgs: c.sent ?? 0, bytes: c.sent_bytes ?? 0 };
  return { msgs: 0, bytes: 0 };
}

/** Objects of a thread, each after its parent (depth-first, in slot order). */
function inTreeOrder(objects: readonly ObjectSnapshot[]): { o: ObjectSnapshot; depth: number }[] {
  const bySlot = new Map(objects.map((o) => [o.slot, o]));
  const children = new Map<number, ObjectSnapshot[]>();
  for (const o of objects) {
    const parent = bySlot.has(o.parent) ? o.parent : -1;
    children.set(parent, [...(children.get(parent) ?? []), o]);
  }
  const out: { o: ObjectSnapshot; depth: number }[] = [];
  const visit = (parent: number, depth: number, seen: Set<number>) => {
    for (const o of children.get(parent) ?? []) {
      if (seen.has(o.slot)) continue; // a parent cycle (slots reused between copies): shown once
      seen.add(o.slot);
      out.push({ o, depth });
      visit(o.slot, depth + 1, seen);
    }
  };
  visit(-1, 0, new Set());
  return out;
}

function deviceOf(o: ObjectSnapshot): { pci: string; side: string } | undefined {
  const m = /^(\S+) \((dpu|host)\)$/.exec(o.name);
  return o.kind === 'device' && m ? { pci: m[1]!, side: m[2]! } : undefined;
}

/** A thread across snapshots: its process identity (pids are reused) and tid. */
const threadId = (t: ThreadSnapshot) => `${t.pid}-${t.start}/${t.tid}`;
const NOTHING: Record<string, number> = {};

/**
 * Turns snapshots into rows, with rates from the snapshot before: an object's counters then and now,
 * over the time between. An object this snapshot sees for the first time counts from 0 when it cannot
 * have counted before the last one: its thread began publishing after it, or the last one read its
 * thread without it (ended objects are read too, so one that ended long ago is no news). So a burst that began and ended between two snapshots (a process that lived less
 * than an interval, shown from its epitaph) shows in the rates of the first that sees it, and 0 after.
 * A thread shown from its epitaph has rates (its final counters are exact); one that died without one
 * (its last copy) has none: what it did after that copy is not known.
 */
export class RateTracker {
  private last: { time: number; threads: Set<string>; values: Map<string, { identity: string; counters: Record<string, number> }> } | undefined;

  update(snap: FabricSnapshot): FabricView {
    const prev = this.last;
    const dt = prev ? (snap.time - prev.time) / 1000 : 0;
    const values = new Map<string, { identity: string; counters: Record<string, number> }>();
    const rows: Row[] = [];
    const threads = [...snap.threads].sort((x, y) => x.pid - y.pid || x.tid - y.tid);
    for (const t of threads) {
      rows.push(processRow(t));
      const known = t.alive || t.exited !== undefined;
      // Counting from 0 is right for what is new since the last look: it read this thread (ended
      // objects included), or the thread began after it.
      const fresh = prev !== undefined && (t.since > prev.time || prev.threads.has(threadId(t)));
      // A live (or killed) thread's ended objects are gone; an exited one's are what it did.
      const shown = t.exited !== undefined ? t.objects : t.objects.filter((o) => !o.ended);
      for (const o of t.objects) {
        const key = `${t.pid}/${t.tid}/${o.slot}`;
        const identity = `${o.kind}/${o.id}/${o.name}`;
        if (t.exited !== undefined || !o.ended) {
          values.set(key, { identity, counters: o.counters });
          continue;
        }
        // Hidden (ended in a live thread): what it did since it was last shown has shown in no rate yet.
        // Keep the counters it was last shown with, so the thread's epitaph shows the rest; one never
        // shown is not recorded when its thread is new (all it did is news: a pair that connected,
        // sent and ended within one interval), and is when it is not (it ended before this observer).
        const before = prev?.values.get(key);
        if (before && before.identity === identity) values.set(key, before);
        else if (!fresh) values.set(key, { identity, counters: o.counters });
      }
      for (const { o, depth } of inTreeOrder(shown)) {
        const key = `${t.pid}/${t.tid}/${o.slot}`;
        const identity = `${o.kind}/${o.id}/${o.name}`;
        const before = prev?.values.get(key);
        const from = before && before.identity === identity ? before.counters : fresh ? NOTHING : undefined;
        const rates: Record<string, number> = {};
        if (from && dt > 0 && known) {
          for (const [name, value] of Object.entries(o.counters)) {
            const was = from === NOTHING ? 0 : from[name];
            if (hasRate(name) && was !== undefined) rates[name] = Math.max(0, (value - was) / dt);
          }
        }
        rows.push({
          type: 'object',
          key,
          pid: t.pid,
          tid: t.tid,
          slot: o.slot,
          alive: t.alive,
          ...(t.exited !== undefined ? { exited: t.exited } : {}),
          ended: o.ended,
          kind: o.kind,
          name: o.name,
          state: stateName(o),
          depth,
          id: o.id,
          peer: o.peer,
          counters: o.counters,
          rates,
        });
      }
    }
    // Threads read whole (not a dead one this observer never saw: it has no objects to compare).
    this.last = { time: snap.time, threads: new Set(threads.filter((t) => t.since > 0).map(threadId)), values };
    const objects = rows.filter((r): r is ObjectRow => r.type === 'object');
    const links = linksOf(objects, threads);
    const events = threads
      .flatMap((t) => t.events)
      .sort((x, y) => x.time - y.time)
      .slice(-MAX_EVENTS);
    const pids = (which: (t: ThreadSnapshot) => boolean) => new Set(threads.filter(which).map((t) => t.pid)).size;
    return {
      time: snap.time,
      dir: snap.dir,
      rows,
      links,
      events,
      span: dt,
      totals: {
        processes: pids(() => true),
        dead: pids((t) => !t.alive && t.exited === undefined),
        exited: pids((t) => t.exited !== undefined),
        objects: objects.length,
        connections: links.reduce((n, l) => n + l.connections, 0),
        msgRate: links.reduce((n, l) => n + l.msgRate, 0),
        byteRate: links.reduce((n, l) => n + l.byteRate, 0),
      },
    };
  }
}

function processRow(t: ThreadSnapshot): ProcessRow {
  const devices = t.objects.flatMap((o) => deviceOf(o) ?? []);
  return {
    type: 'process',
    key: `${t.pid}/${t.tid}`,
    pid: t.pid,
    tid: t.tid,
    title: t.title,
    name: processName(t.title),
    alive: t.alive,
    ...(t.exited !== undefined ? { exited: t.exited } : {}),
    devices,
  };
}

/** Connections grouped by the pair of processes they join; fast-path producers count with their connection. */
function linksOf(objects: readonly ObjectRow[], threads: readonly ThreadSnapshot[]): Link[] {
  const alive = new Map<number, boolean>();
  for (const t of threads) alive.set(t.pid, (alive.get(t.pid) ?? false) || t.alive);
  const byKey = new Map(objects.map((o) => [o.key, o]));
  const parentOf = new Map<string, string>();
  for (const t of threads) for (const o of t.objects) if (o.parent >= 0) parentOf.set(`${t.pid}/${t.tid}/${o.slot}`, `${t.pid}/${t.tid}/${o.parent}`);
  const links = new Map<string, Link>();
  const linkOf = (conn: ObjectRow): Link => {
    const [a, b] = conn.pid < conn.peer ? [conn.pid, conn.peer] : [conn.peer, conn.pid];
    const key = `${a}-${b}`;
    let l = links.get(key);
    if (!l) {
      l = { key, a, b, connections: 0, messages: 0, bytes: 0, msgRate: 0, byteRate: 0, alive: (alive.get(a) ?? false) && (alive.get(b) ?? false) };
      links.set(key, l);
    }
    return l;
  };
  for (const o of objects) {
    let conn: ObjectRow | undefined = o;
    while (conn && conn.kind !== 'connection') conn = byKey.get(parentOf.get(conn.key) ?? '');
    if (!conn || conn.peer <= 0) continue;
    const l = linkOf(conn);
    if (o === conn) l.connections++;
    const total = sent(o);
    const rate = sent(o, o.rates);
    l.messages += total.msgs;
    l.bytes += total.bytes;
    l.msgRate += rate.msgs;
    l.byteRate += rate.bytes;
  }
  // Each connection has a record at both ends: count pairs, not records.
  for (const l of links.values()) l.connections = Math.ceil(l.connections / 2);
  return [...links.values()].sort((x, y) => x.a - y.a || x.b - y.b);
}


