/**
 * One thread's access to the tables of a started DPA's control segment (`DpaTables`): what EUs (and the
 * owner, for the parts they share) use to resolve handles and read object entries. Every handle is
 * checked against the entry it names (tag, kind, index in range, generation, live, not ended) before
 * anything of it is used, and every range an entry names in the arena is checked to lie in it
 * (`arenaRange`).
 */
import { handleHex as hex, type HandleParts } from '../core/dpa-handle.js';
import { DOCA_ERRORS, DocaError, type DocaErrorName, type DocaErrorShortName } from '../core/error.js';
import { sdkLogSource } from '../core/log.js';
import type { Segment } from '../fabric/segment.js';
import { type DpaLayout, KIND_NAMES, makeHandle, OBJ, splitHandle } from './layout.js';
import { ObjectFields, ObjState } from './objects.js';
import { Scheduler } from './scheduler.js';
import type { CqRing } from './cq.js';

const sdkLog = sdkLogSource('dpa');

/** One thread's access to a started DPA's tables: handles resolved and entries checked (the file's header). */
/**
 * How element handles of a context of `size` elements count positions: modulo this power of two, at
 * least 4 rings (an element acked up to 3 rings ago is still told from a returned one) and 256, at most
 * the 16 bits a handle carries.
 */
export const elementPeriod = (size: number): number => Math.min(MAX_PERIOD, Math.max(256, size * 4));
const MAX_PERIOD = 1 << 16;

export class DpaTables extends ObjectFields {
  readonly u8: Uint8Array;
  readonly sched: Scheduler;
  /**
   * Where what this thread finds wrong in the tables is said: the owner's DOCA log; an execution unit
   * sends it to its owner's (eu-worker.ts), so that every such line reaches the program.
   */
  report: (text: string) => void = (text) => sdkLog.err(text);
  /** Handles already split (BigInt arithmetic costs more than the lookup); entries are still checked on every use. */
  private readonly split = new Map<bigint, HandleParts>();
  /** By kind: the handle last split or issued and its parts (a `===` before the map: hot loops pass the same handles). */
  private readonly lastHandle: (bigint | undefined)[] = [];
  private readonly lastParts: (HandleParts | undefined)[] = [];
  /** By kind: the handle `resolve` last found started, its index and generation (its fast path). */
  private readonly resolved: ({ handle: bigint; index: number; generation: number } | undefined)[] = [];
  /** By context object: the element handles issued for it, reused (elementHandle). */
  private readonly elements: ({ key: number; handles: bigint[]; parts: HandleParts[] } | undefined)[] = [];
  /** @internal cq.ts: completion queues' rings as checked, by object index. */
  readonly rings: (CqRing | undefined)[] = [];
  /** The position field (low 16 bits) of the element handle `element` last took. */
  private elementField = 0;

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
    // The handle last resolved for this kind: its value's checks hold for good, the entry's are read again (plain reads).
    const memo = this.resolved[kind];
    if (memo !== undefined && handle === memo.handle && started) {
      const base = this.layout.object(memo.index);
      const i32 = this.i32;
      if ((i32[(base + OBJ.GEN) >> 2]! & 0xffffff) === memo.generation && i32[(base + OBJ.STATE) >> 2] === ObjState.STARTED && i32[(base + OBJ.FAULT) >> 2] === 0) return memo.index;
    }
    const parts = this.parts(handle, kind);
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
    this.checkFault(parts.index, call);
    if (started) {
      const m = (this.resolved[kind] ??= { handle: 0n, index: 0, generation: 0 }); // reused: two handles taking turns make no garbage
      m.handle = handle as bigint;
      m.index = parts.index;
      m.generation = parts.generation;
    }
    return parts.index;
  }

  /** The fields of `handle` (expected of `kind`), split once per value; undefined for what is no handle. */
  private parts(handle: unknown, kind: number): HandleParts | undefined {
    if (handle === this.lastHandle[kind] && handle !== undefined) return this.lastParts[kind];
    let parts = typeof handle === 'bigint' ? this.split.get(handle) : undefined;
    if (!parts) {
      parts = splitHandle(handle);
      if (!parts) return undefined;
      this.remember(handle as bigint, parts);
    }
    this.lastHandle[kind] = handle as bigint;
    this.lastParts[kind] = parts;
    return parts;
  }

  private remember(handle: bigint, parts: HandleParts): void {
    if (this.split.size >= 4096) this.split.clear();
    this.split.set(handle, parts);
  }

  /**
   * Ends object `index` with `code` (its FAULT word), saying `why` (once): every later use of it fails
   * with that error, and the execution units pass it over. False if it had ended already.
   */
  fault(index: number, code: DocaErrorShortName, why: string): boolean {
    const value = DOCA_ERRORS.findIndex(([name]) => name === `DOCA_ERROR_${code}`);
    if (Atomics.compareExchange(this.i32, (this.layout.object(index) + OBJ.FAULT) / 4, 0, value) !== 0) return false;
    this.report(`${KIND_NAMES[this.u32(index, OBJ.KIND)] ?? 'object'} ${index}: ${why}; it is ended (DOCA_ERROR_${code} for every later use)`);
    return true;
  }

  /** Whether object `index` was ended (`fault`). */
  faulted(index: number): boolean {
    return this.peek(index, OBJ.FAULT) !== 0;
  }

  /** Throws the error object `index` was ended with, if it was. */
  checkFault(index: number, call: string): void {
    if (this.peek(index, OBJ.FAULT) === 0) return;
    const value = this.load(index, OBJ.FAULT);
    const name: DocaErrorName = value > 0 && value < DOCA_ERRORS.length ? DOCA_ERRORS[value]![0] : 'DOCA_ERROR_UNEXPECTED';
    throw new DocaError(name, call, `the ${KIND_NAMES[this.u32(index, OBJ.KIND)] ?? 'object'} ${index} was ended for what it found in shared memory (the DOCA log says what)`);
  }

  /**
   * `bytes` at byte `offset` of the arena, as an entry names them (a ring, a list): UNEXPECTED unless the
   * range lies in the arena, 16-byte aligned (the owner allocates 64-byte aligned ranges there).
   */
  arenaRange(offset: number, bytes: number, what: string, call: string): number {
    const arena = this.layout.arena;
    if (!(Number.isInteger(offset) && Number.isInteger(bytes) && offset >= arena && bytes >= 0 && offset + bytes <= arena + this.layout.dims.arena && offset % 16 === 0)) {
      throw new DocaError('UNEXPECTED', call, `${what} is ${bytes} bytes at byte ${offset}, outside the DPA's arena [${arena}, +${this.layout.dims.arena})`);
    }
    return offset;
  }

  /**
   * The handle of the element at `position` of context object `index` (a completion's or a consumer
   * completion's), whose ring holds `size` elements: its position field is the position modulo
   * `elementPeriod(size)`, so that a context's handles repeat and each is made once (no BigInt per
   * element) and kept with its parts, which `element` then finds without splitting it.
   */
  elementHandle(kind: number, index: number, position: number, size: number): bigint {
    const period = elementPeriod(size);
    const incarnation = (this.peek(index, OBJ.GEN) >>> 1) & 0xff;
    const key = (incarnation << 24) | (kind << 17) | period;
    let made = this.elements[index];
    if (made?.key !== key) this.elements[index] = made = { key, handles: [], parts: [] };
    const field = position & (period - 1);
    let handle = made.handles[field];
    let parts = made.parts[field];
    if (handle === undefined || parts === undefined) {
      const generation = (incarnation << 16) | field;
      made.handles[field] = handle = makeHandle(this.tag, kind, index, generation);
      made.parts[field] = parts = { tag: this.tag, kind, index, generation };
      this.remember(handle, parts);
    }
    this.lastHandle[kind] = handle;
    this.lastParts[kind] = parts;
    return handle;
  }

  /**
   * The context object an element handle names, if it is one of `kind` (an element kind) of a live,
   * started `of` object at the incarnation it was made in: INVALID_VALUE for what is not such a handle,
   * BAD_STATE for an element of a destroyed or stopped context. Its position: `elementPosition`.
   */
  element(handle: unknown, kind: number, of: number, call: string): number {
    const parts = this.parts(handle, kind);
    if (!parts || parts.tag !== this.tag || parts.kind !== kind || parts.index >= this.layout.dims.objects) {
      throw new DocaError('INVALID_VALUE', call, `${hex(handle)} is not a ${KIND_NAMES[kind]} of this DPA`);
    }
    const index = parts.index;
    const base = this.layout.object(index);
    // Plain reads (ObjectFields.peek), read again atomically before they fail the call.
    const incarnation = parts.generation >>> 16;
    if (!this.startedAt(base, of, this.i32[(base + OBJ.STATE) >> 2]!, this.i32[(base + OBJ.GEN) >> 2]!, incarnation) && !this.startedAt(base, of, Atomics.load(this.i32, (base + OBJ.STATE) / 4), Atomics.load(this.i32, (base + OBJ.GEN) / 4), incarnation)) {
      throw new DocaError('BAD_STATE', call, `${hex(handle)} is an element of a ${KIND_NAMES[of]} that was stopped or destroyed`);
    }
    this.checkFault(index, call);
    this.elementField = parts.generation & 0xffff;
    return index;
  }

  /** Whether the entry at `base`, of `kind`, read as `state` and `generation`, is started at `incarnation`. */
  private startedAt(base: number, kind: number, state: number, generation: number, incarnation: number): boolean {
    return state === ObjState.STARTED && this.view.getUint32(base + OBJ.KIND, true) === kind && ((generation >>> 1) & 0xff) === incarnation;
  }

  /**
   * The position of the element `element` just took, in a context of `size` elements whose returned,
   * not yet acked ones are `[oldest, newest)`: BAD_STATE for one already acked (or never returned).
   */
  elementPosition(oldest: number, newest: number, size: number, call: string): number {
    const back = ((newest - this.elementField - 1) & (elementPeriod(size) - 1)) + 1;
    if (back > ((newest - oldest) | 0)) throw new DocaError('BAD_STATE', call, `the element (position field ${this.elementField}) was acked (or never returned)`);
    return (newest - back) | 0;
  }

  u32(index: number, field: number): number {
    return this.view.getUint32(this.layout.object(index) + field, true);
  }

  /**
   * Whether object `index` still has generation `generation` and is not free (a reference is still good).
   * `plain` reads the words plainly (ObjectFields.peek): for a poll that, told no, looks again at its next call.
   */
  live(index: number, generation: number, plain = false): boolean {
    return index >= 0 && index < this.layout.dims.objects && this.read(index, OBJ.GEN, plain) === generation && this.read(index, OBJ.STATE, plain) !== ObjState.FREE;
  }
}
