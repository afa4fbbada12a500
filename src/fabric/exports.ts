/**
 * The export table: one small segment per process holding a validity word for everything it exported
 * (memory maps, sync events). An exporter revokes an export by bumping its slot's generation; an importer
 * checks the slot (one atomic load) and its exporter's liveness before trusting an imported object.
 *
 * Layout (docs/protocol.md#export-table): the segment payload is SLOTS pairs of i32 [generation, state]; state 1 = live, 0 = free.
 */
import { DocaError } from '../core/error.js';
import { LivenessAnswer } from './liveness.js';
import { descriptorKey, SEGMENT_HEADER_SIZE, Segment, type SegmentDescriptor } from './segment.js';

const SLOTS = 4096;
const TABLE_SIZE = SEGMENT_HEADER_SIZE + SLOTS * 8;
const LIVE = 1;

/** A claimed slot: what an export blob carries so the importer can check the export is still valid. */
export interface ExportSlot {
  readonly table: SegmentDescriptor;
  readonly index: number;
  readonly generation: number;
}

let local: Segment | undefined;
let nextFree = 0;

function genIndex(slot: number): number {
  return SEGMENT_HEADER_SIZE / 4 + slot * 2;
}

/** Claims a slot in this process's table (created on first use). NO_MEMORY when all are in use. */
export function claimExportSlot(call: string): ExportSlot {
  local ??= Segment.create('exports', SLOTS * 8);
  for (let i = 0; i < SLOTS; i++) {
    const slot = (nextFree + i) % SLOTS;
    const g = genIndex(slot);
    if (Atomics.load(local.i32, g + 1) !== LIVE) {
      const generation = (Atomics.add(local.i32, g, 1) + 1) | 0; // as the i32 reads back after 2^31 exports
      Atomics.store(local.i32, g + 1, LIVE);
      nextFree = (slot + 1) % SLOTS;
      return { table: local.descriptor, index: slot, generation };
    }
  }
  throw new DocaError('NO_MEMORY', call, `all ${SLOTS} export slots of this process are in use`);
}

/** Revokes an export: every importer sees it as invalid from now on. */
export function revokeExportSlot(slot: ExportSlot): void {
  if (!local) return;
  const g = genIndex(slot.index);
  if (Atomics.load(local.i32, g) === slot.generation) {
    Atomics.add(local.i32, g, 1);
    Atomics.store(local.i32, g + 1, 0);
  }
}

interface RemoteTable {
  segment: Segment;
  /** Its process's liveness, asked on every check (an imported event's every use). */
  alive: LivenessAnswer;
}

const remotes = new Map<string, RemoteTable>();
/** Each imported slot's table, found once: the key is a hex string, too dear to build on every check. */
const tableOf = new WeakMap<ExportSlot, RemoteTable>();

function remoteTable(d: SegmentDescriptor, call: string): RemoteTable {
  const key = descriptorKey(d);
  let t = remotes.get(key);
  if (!t) {
    const segment = Segment.open(d, call, ['exports']);
    if (segment.size !== TABLE_SIZE) {
      segment.close();
      throw new DocaError('INVALID_VALUE', call, `the export table named is ${segment.size} bytes, not ${TABLE_SIZE}`);
    }
    t = { segment, alive: new LivenessAnswer(d) };
    remotes.set(key, t);
  }
  return t;
}

/** Whether an export is still valid: its exporter lives, can be reached, and has not revoked it. */
export function exportIsValid(slot: ExportSlot, call: string): boolean {
  if (!Number.isInteger(slot.index) || slot.index < 0 || slot.index >= SLOTS) {
    throw new DocaError('INVALID_VALUE', call, `export slot ${slot.index} is outside the table [0, ${SLOTS})`);
  }
  if (local && slot.table.pid === local.descriptor.pid && slot.table.fd === local.descriptor.fd && slot.table.start === local.descriptor.start) {
    const g = genIndex(slot.index);
    return Atomics.load(local.i32, g) === slot.generation && Atomics.load(local.i32, g + 1) === LIVE;
  }
  let t = tableOf.get(slot);
  if (!t) {
    try {
      t = remoteTable(slot.table, call);
    } catch (err) {
      if (DocaError.is(err, 'NOT_FOUND')) return false;
      throw err;
    }
    tableOf.set(slot, t);
  }
  if (!t.alive.recent()) {
    if (remotes.get(descriptorKey(slot.table)) === t) {
      remotes.delete(descriptorKey(slot.table));
      t.segment.close();
    }
    return false;
  }
  const g = genIndex(slot.index);
  return Atomics.load(t.segment.i32, g) === slot.generation && Atomics.load(t.segment.i32, g + 1) === LIVE;
}
