/**
 * Memory maps usable from the DPA (`doca_mmap_dev_get_dpa_handle`): one table per process, in a segment
 * the DPAs' execution units map, so that DPA code can resolve a map handle to the bytes it covers. The
 * map's memory must be shared (`allocSharedMemory`, or a map created from an export), since EUs reach it
 * through its segment. Destroying the map frees its entry: its handles are refused from then on.
 * docs/protocol.md#dpa-map-table gives the layout.
 *
 *   64   u32 magic 'DMAP'   68 u32 version   72 u32 entries   76 u32 handle tag
 *   128  entries x 128:  +0 i32 state (0 free, 1 live)  +4 i32 generation  +8 u32 access flags
 *                        +16 memory segment descriptor [40]  +56 f64 byte offset  +64 f64 length
 *                        +72 text[16] PCI address of the device the handle was made for
 *
 * DPA addresses in a map are byte offsets from the start of its memory range (DOCA uses host virtual
 * addresses there; docs/dpa.md).
 */
import { decodeDescriptor, encodeDescriptor, Segment, SEGMENT_HEADER_SIZE, type SegmentDescriptor } from '../fabric/segment.js';
import { makeHandle, newHandleTag, splitHandle } from './dpa-handle.js';
import { DocaError } from './error.js';

const MAGIC = 0x50414d44; // 'DMAP'
const VERSION = 1;
const TABLE = 128;
const ENTRY = 128;
const E = { STATE: 0, GEN: 4, FLAGS: 8, MEMORY: 16, OFFSET: 56, LENGTH: 64, DEV: 72 } as const;
/** The object kind of a map handle (dpa/layout.ts ObjKind.MMAP). */
export const MAP_KIND = 13;
/** Maps one process can make usable from its DPAs at once. */
export const MAP_CAPACITY = 1024;

/** What the owner registers for a map. */
export interface DpaMapRange {
  memory: SegmentDescriptor;
  offset: number;
  length: number;
  flags: number;
  dev: string;
}

/** The process's table (owner side). */
class MapTable {
  readonly segment: Segment;
  readonly tag: number;
  private readonly view: DataView;
  private readonly free: number[] = [];
  private next = 0;

  constructor() {
    this.segment = Segment.create('dpamaps', TABLE - SEGMENT_HEADER_SIZE + MAP_CAPACITY * ENTRY);
    this.view = new DataView(this.segment.u8.buffer);
    this.tag = newHandleTag();
    this.view.setUint32(68, VERSION, true);
    this.view.setUint32(72, MAP_CAPACITY, true);
    this.view.setUint32(76, this.tag, true);
    Atomics.store(this.segment.i32, 64 / 4, MAGIC);
  }

  register(range: DpaMapRange, call: string): { index: number; handle: bigint } {
    const index = this.free.pop() ?? (this.next < MAP_CAPACITY ? this.next++ : -1);
    if (index < 0) throw new DocaError('NO_MEMORY', call, `this process already has ${MAP_CAPACITY} maps usable from the DPA`);
    const base = TABLE + index * ENTRY;
    encodeDescriptor(range.memory, this.view, base + E.MEMORY);
    this.view.setFloat64(base + E.OFFSET, range.offset, true);
    this.view.setFloat64(base + E.LENGTH, range.length, true);
    this.view.setUint32(base + E.FLAGS, range.flags, true);
    this.segment.u8.fill(0, base + E.DEV, base + E.DEV + 16);
    new TextEncoder().encodeInto(range.dev.slice(0, 16), this.segment.u8.subarray(base + E.DEV, base + E.DEV + 16));
    const generation = (Atomics.add(this.segment.i32, (base + E.GEN) / 4, 1) + 1) | 0; // as the i32 reads back
    Atomics.store(this.segment.i32, (base + E.STATE) / 4, 1);
    return { index, handle: makeHandle(this.tag, MAP_KIND, index, generation) };
  }

  unregister(index: number): void {
    const base = TABLE + index * ENTRY;
    Atomics.add(this.segment.i32, (base + E.GEN) / 4, 1);
    Atomics.store(this.segment.i32, (base + E.STATE) / 4, 0);
    this.free.push(index);
  }
}

let table: MapTable | undefined;

/** The process's table of DPA-usable maps (made on first use). */
export function dpaMapTable(): MapTable {
  return (table ??= new MapTable());
}

/** What an execution unit learns from a map handle: the bytes it covers and its access flags. */
export interface ResolvedMap {
  bytes: Uint8Array;
  flags: number;
}

/** An execution unit's view of a process's map table (maps each map's segment once per generation). */
export class DpaMapReader {
  private readonly view: DataView;
  private readonly tag: number;
  private readonly capacity: number;
  private readonly opened = new Map<number, { generation: number; segment: Segment; map: ResolvedMap }>();

  constructor(
    readonly segment: Segment,
    private readonly dev: string,
  ) {
    this.view = new DataView(segment.u8.buffer);
    if (Atomics.load(segment.i32, 64 / 4) !== MAGIC || this.view.getUint32(68, true) !== VERSION) {
      throw new DocaError('INVALID_VALUE', 'doca_dpa', 'the DPA map table is not a table of this version');
    }
    this.tag = this.view.getUint32(76, true) & 0xffff;
    this.capacity = Math.min(this.view.getUint32(72, true), Math.floor((segment.size - TABLE) / ENTRY));
  }

  /** The map `handle` names: INVALID_VALUE unless it is a live map handle made for this DPA's device. */
  resolve(handle: unknown, call: string): ResolvedMap {
    const parts = splitHandle(handle);
    if (!parts || parts.kind !== MAP_KIND || parts.tag !== this.tag || parts.index >= this.capacity) {
      throw new DocaError('INVALID_VALUE', call, `${String(handle)} is not a memory map handle of this process (doca_mmap_dev_get_dpa_handle)`);
    }
    const base = TABLE + parts.index * ENTRY;
    const generation = Atomics.load(this.segment.i32, (base + E.GEN) / 4);
    if ((generation & 0xffffff) !== parts.generation || Atomics.load(this.segment.i32, (base + E.STATE) / 4) !== 1) {
      throw new DocaError('BAD_STATE', call, `memory map handle 0x${(handle as bigint).toString(16)} names a map that was destroyed`);
    }
    const dev = new TextDecoder().decode(this.segment.u8.subarray(base + E.DEV, base + E.DEV + 16)).replace(/\0+$/, '');
    if (dev !== this.dev) throw new DocaError('INVALID_VALUE', call, `memory map handle 0x${(handle as bigint).toString(16)} was made for device ${dev}, not ${this.dev}`);
    const known = this.opened.get(parts.index);
    if (known?.generation === generation) return known.map;
    if (known) known.segment.close();
    const segment = Segment.open(decodeDescriptor(this.view, base + E.MEMORY, call), call, ['mem']);
    const offset = this.view.getFloat64(base + E.OFFSET, true);
    const length = this.view.getFloat64(base + E.LENGTH, true);
    if (!Number.isInteger(offset) || !Number.isInteger(length) || offset < SEGMENT_HEADER_SIZE || length < 1 || offset + length > segment.size) {
      segment.close();
      throw new DocaError('INVALID_VALUE', call, `the map table names bytes [${offset}, ${offset + length}) outside a ${segment.size}-byte segment`);
    }
    const map = { bytes: segment.u8.subarray(offset, offset + length), flags: this.view.getUint32(base + E.FLAGS, true) };
    this.opened.set(parts.index, { generation, segment, map });
    return map;
  }

  close(): void {
    for (const o of this.opened.values()) o.segment.close();
    this.opened.clear();
  }
}
