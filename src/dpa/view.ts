/**
 * One thread's view of a started DPA's control segment: what EUs (and the owner, for the parts they
 * share) use to resolve handles and read object entries. Every handle is checked against the entry it
 * names (tag, kind, index in range, generation, live) before anything of it is used.
 */
import { handleHex as hex, type HandleParts } from '../core/dpa-handle.js';
import { DocaError } from '../core/error.js';
import type { Segment } from '../fabric/segment.js';
import { type DpaLayout, KIND_NAMES, OBJ, splitHandle } from './layout.js';
import { ObjectFields, ObjState } from './objects.js';
import { Scheduler } from './scheduler.js';

export class DpaView extends ObjectFields {
  readonly u8: Uint8Array;
  readonly sched: Scheduler;
  /** Handles already split (BigInt arithmetic costs more than the lookup); entries are still checked on every use. */
  private readonly split = new Map<bigint, HandleParts>();

  constructor(
    segment: Segment,
    layout: DpaLayout,
    readonly tag: number,
  ) {
    super(segment, layout);
    this.u8 = segment.u8;
    this.sched = new Scheduler(segment, layout);
  }

  /**
   * The object index `handle` names, if it is a live object of `kind` of this DPA: INVALID_VALUE for a
   * value that is not a handle of this DPA or of that kind, BAD_STATE for a destroyed (or stopped,
   * unless `started` is false) object.
   */
  resolve(handle: unknown, kind: number, call: string, started = true): number {
    let parts = typeof handle === 'bigint' ? this.split.get(handle) : undefined;
    if (!parts) {
      parts = splitHandle(handle);
      if (parts) {
        if (this.split.size >= 4096) this.split.clear();
        this.split.set(handle as bigint, parts);
      }
    }
    if (!parts) throw new DocaError('INVALID_VALUE', call, `${hex(handle)} is not a handle (a u64 bigint)`);
    if (parts.tag !== this.tag) throw new DocaError('INVALID_VALUE', call, `handle ${hex(handle)} belongs to another DPA`);
    if (parts.kind !== kind) throw new DocaError('INVALID_VALUE', call, `handle ${hex(handle)} is a ${KIND_NAMES[parts.kind] ?? `kind ${parts.kind}`} handle, not a ${KIND_NAMES[kind]} handle`);
    if (parts.index >= this.layout.dims.objects) throw new DocaError('INVALID_VALUE', call, `handle ${hex(handle)} names object ${parts.index} of ${this.layout.dims.objects}`);
    const base = this.layout.object(parts.index);
    const generation = Atomics.load(this.i32, (base + OBJ.GEN) / 4) & 0xffffff;
    const state = Atomics.load(this.i32, (base + OBJ.STATE) / 4);
    if (generation !== parts.generation || state === ObjState.FREE || this.view.getUint32(base + OBJ.KIND, true) !== kind) {
      throw new DocaError('BAD_STATE', call, `handle ${hex(handle)} names a ${KIND_NAMES[kind]} that was destroyed`);
    }
    if (started && state !== ObjState.STARTED) throw new DocaError('BAD_STATE', call, `the ${KIND_NAMES[kind]} of handle ${hex(handle)} is not started`);
    return parts.index;
  }

  u32(index: number, field: number): number {
    return this.view.getUint32(this.layout.object(index) + field, true);
  }

  /** Whether object `index` still has generation `generation` and is started (a reference is still good). */
  live(index: number, generation: number): boolean {
    const base = this.layout.object(index);
    return index >= 0 && index < this.layout.dims.objects && Atomics.load(this.i32, (base + OBJ.GEN) / 4) === generation && Atomics.load(this.i32, (base + OBJ.STATE) / 4) !== ObjState.FREE;
  }
}
