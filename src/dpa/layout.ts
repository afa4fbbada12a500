/**
 * The shared memory of one started DPA: a control segment its owner (the CPU thread that started it)
 * creates and every execution unit (EU, a worker thread) maps. Everything the DPA's code and its
 * activators share lives here, so that any EU can run any DPA thread, kernel instance or RPC call, and
 * any thread of the process (or an EU) can activate one. docs/dpa.md describes the protocol;
 * docs/protocol.md#dpa-shared-memory gives the layouts.
 *
 *   0     segment header (fabric/segment.ts)
 *   64    u32 magic 'DPA1'   68 u32 version     72 u32 EUs           76 u32 objects
 *   80    u32 handle tag     84 u32 launch slots 88 u32 rpc slots     92 u32 arena bytes
 *   96    u32 device log level
 *   128   i32 state: STARTING 0 | RUNNING 1 | STOPPING 2 | FATAL 3
 *   132   i32 ready: set bits in the ready bitmaps (a hint for sleepers; the bitmaps are the truth)
 *   136   i32 idle: bit e set while EU e sleeps or is about to
 *   140   i32 EUs up             144 i32 wake cursor (which idle EU the next activation rings)
 *   148   i32 gated: kernel launches waiting for their wait event
 *   192   owner bell reference [64]: rung when an RPC finishes, an EU comes up or leaves, a thread stops
 *   256   EU table, EUs x 128:   +0 bell reference [64]   +64 f64 run start (epoch ms, 0 idle)
 *                                +72 i32 running work id (kind << 24 | index), 0 idle
 *                                +76 i32 left: 1 once the EU let go of everything (it exits by itself)
 *   then, each 64-byte aligned:
 *         ready bitmaps: rpc slots, launch slots, objects (threads): one bit each
 *         wait bitmap: objects (async ops with posted waits)
 *         rpc slots (RPC_SIZE each), launch slots (LAUNCH_SIZE each), objects (OBJECT_SIZE each)
 *         arena: completion rings, async-op lists, consumer lists (allocated by the owner)
 *
 * Handles (`doca_dpa_dev_*_t`, u64): bits 63..48 the DPA's tag, 47..40 the object kind, 39..24 the
 * object (or slot) index, 23..0 its generation. An EU resolves a handle only if all four match the
 * object's entry, so a handle from another DPA or of a destroyed object is refused, never followed.
 * Element handles (a completion's, a consumer completion's) name their context object: bits 23..16 hold
 * its incarnation (generation >> 1, low 8 bits), 15..0 the element's position (tables.ts).
 */
import { SEGMENT_HEADER_SIZE, Segment } from '../fabric/segment.js';

export { makeHandle, splitHandle } from '../core/dpa-handle.js';

const MAGIC = 0x31415044; // 'DPA1'
/**
 * 2: an entry's FAULT word, a consumer's MsgQ descriptor, element handles carry their object's incarnation.
 * 3: a launch's ready bit is a token its taker passes on. 4: the header's LOOKING word (eu-worker.ts lookAfterWork).
 */
const VERSION = 4;

export const H = {
  MAGIC: 64,
  VERSION: 68,
  EUS: 72,
  OBJECTS: 76,
  TAG: 80,
  LAUNCHES: 84,
  RPCS: 88,
  ARENA: 92,
  LOG_LEVEL: 96,
  STATE: 128,
  READY: 132,
  IDLE: 136,
  EUS_UP: 140,
  WAKE_CURSOR: 144,
  GATED: 148,
  /** Bit e set while EU e, just done with a run, keeps looking for work instead of sleeping (wakeOne rings nobody then). */
  LOOKING: 152,
  OWNER_BELL: 192,
  EU_TABLE: 256,
} as const;

export const DpaState = { STARTING: 0, RUNNING: 1, STOPPING: 2, FATAL: 3 } as const;

export const EU_ENTRY = 128;
export const EU = { BELL: 0, RUN_START: 64, RUNNING: 72, LEFT: 76 } as const;
/** An EU's bell bits: 0 work is ready, 1 a sync event the DPA waits on changed, 2 + i consumer i was filled. */
export const BIT_READY = 0;
export const BIT_EVENT = 1;
export const BIT_CONSUMER = 2;

/** Work ids (EU table, `running`). */
export const WorkKind = { THREAD: 1, LAUNCH: 2, RPC: 3 } as const;

export const RPC_SIZE = 256;
export const RPC = { STATE: 0, GEN: 4, FUNC: 8, NARGS: 12, RESULT: 16, ARGS: 32 } as const;
/** FAILED: the function returned what is not a u64. */
export const RpcState = { FREE: 0, FILLING: 1, READY: 2, RUNNING: 3, DONE: 4, FAILED: 5 } as const;

export const LAUNCH_SIZE = 256;
export const LAUNCH = {
  STATE: 0,
  GEN: 4,
  FUNC: 8,
  NARGS: 12,
  THREADS: 16,
  NEXT_RANK: 20,
  FINISHED: 24,
  COMP_OP: 28,
  WAIT_EVENT: 32,
  WAIT_THRESHOLD: 36,
  COMP_EVENT: 40,
  COMP_COUNT: 48,
  WAIT_GEN: 56,
  COMP_GEN: 60,
  ARGS: 64,
} as const;
export const LaunchState = { FREE: 0, FILLING: 1, GATED: 2, READY: 3 } as const;
export const CompOp = { NONE: 0, SET: 1, ADD: 2 } as const;
/** Arguments a kernel, an RPC or a thread function takes at most (u64 each). */
export const MAX_ARGS = 16;

export const OBJECT_SIZE = 128;
/**
 * Every object entry starts with these; the rest is the kind's (dpa/objects.ts). FAULT: 0, or the DOCA
 * error value (CONNECTION_ABORTED, UNEXPECTED) every later use of an object gets once an execution unit
 * ended it for what it found in shared memory (a receive a producer filled wrongly, a list outside the
 * arena); the object still has to be stopped and destroyed by its owner.
 */
export const OBJ = { STATE: 0, GEN: 4, KIND: 8, FAULT: 12 } as const;
export const ObjKind = {
  THREAD: 1,
  COMPLETION: 2,
  NOTIFICATION: 3,
  ASYNC_OPS: 4,
  SYNC_EVENT: 5,
  REMOTE_NET_EVENT: 6,
  CONSUMER_COMPLETION: 7,
  CONSUMER: 8,
  PRODUCER: 9,
  DPA: 10,
  COMPLETION_ELEMENT: 11,
  CONSUMER_ELEMENT: 12,
  MMAP: 13,
} as const;
export type ObjKind = (typeof ObjKind)[keyof typeof ObjKind];
export const KIND_NAMES: Record<number, string> = {
  1: 'DPA thread',
  2: 'DPA completion',
  3: 'DPA notification completion',
  4: 'DPA async ops',
  5: 'sync event',
  6: 'remote-net sync event',
  7: 'comch consumer completion',
  8: 'comch consumer',
  9: 'comch producer',
  10: 'DPA',
  11: 'DPA completion element',
  12: 'comch consumer completion element',
  13: 'memory map',
};

export interface DpaDims {
  eus: number;
  objects: number;
  launches: number;
  rpcs: number;
  arena: number;
}

/** Where everything is, from the header's counts. */
export class DpaLayout {
  readonly rpcBits: number;
  readonly launchBits: number;
  readonly objectBits: number;
  readonly waitBits: number;
  readonly rpcs: number;
  readonly launches: number;
  readonly objects: number;
  readonly arena: number;
  readonly size: number;

  constructor(readonly dims: DpaDims) {
    const align = (n: number) => Math.ceil(n / 64) * 64;
    const words = (n: number) => Math.ceil(n / 32) * 4;
    this.rpcBits = align(H.EU_TABLE + dims.eus * EU_ENTRY);
    this.launchBits = this.rpcBits + words(dims.rpcs);
    this.objectBits = this.launchBits + words(dims.launches);
    this.waitBits = this.objectBits + words(dims.objects);
    this.rpcs = align(this.waitBits + words(dims.objects));
    this.launches = this.rpcs + dims.rpcs * RPC_SIZE;
    this.objects = this.launches + dims.launches * LAUNCH_SIZE;
    this.arena = this.objects + dims.objects * OBJECT_SIZE;
    this.size = this.arena + dims.arena;
  }

  eu(index: number): number {
    return H.EU_TABLE + index * EU_ENTRY;
  }

  rpc(index: number): number {
    return this.rpcs + index * RPC_SIZE;
  }

  launch(index: number): number {
    return this.launches + index * LAUNCH_SIZE;
  }

  object(index: number): number {
    return this.objects + index * OBJECT_SIZE;
  }
}

/** The owner: a fresh control segment, STARTING. */
export function createDpaSegment(dims: DpaDims, tag: number, logLevel: number): { segment: Segment; layout: DpaLayout } {
  const layout = new DpaLayout(dims);
  const segment = Segment.create('dpa', layout.size - SEGMENT_HEADER_SIZE);
  const v = new DataView(segment.u8.buffer);
  v.setUint32(H.VERSION, VERSION, true);
  v.setUint32(H.EUS, dims.eus, true);
  v.setUint32(H.OBJECTS, dims.objects, true);
  v.setUint32(H.TAG, tag, true);
  v.setUint32(H.LAUNCHES, dims.launches, true);
  v.setUint32(H.RPCS, dims.rpcs, true);
  v.setUint32(H.ARENA, dims.arena, true);
  v.setUint32(H.LOG_LEVEL, logLevel, true);
  Atomics.store(segment.i32, H.STATE / 4, DpaState.STARTING);
  Atomics.store(segment.i32, H.MAGIC / 4, MAGIC);
  return { segment, layout };
}

/** An EU: the layout the segment declares, or a string naming why it cannot be a DPA segment. */
export function readDpaLayout(segment: Segment): { layout: DpaLayout; tag: number } | string {
  if (Atomics.load(segment.i32, H.MAGIC / 4) !== MAGIC) return 'it is not a DPA segment';
  const v = new DataView(segment.u8.buffer);
  if (v.getUint32(H.VERSION, true) !== VERSION) return `its version is ${v.getUint32(H.VERSION, true)}, not ${VERSION}`;
  const dims = { eus: v.getUint32(H.EUS, true), objects: v.getUint32(H.OBJECTS, true), launches: v.getUint32(H.LAUNCHES, true), rpcs: v.getUint32(H.RPCS, true), arena: v.getUint32(H.ARENA, true) };
  if (dims.eus < 1 || dims.eus > 32 || dims.objects > 1 << 16 || dims.launches > 1 << 16 || dims.rpcs > 1 << 16) return 'its counts are impossible';
  const layout = new DpaLayout(dims);
  if (layout.size > segment.size) return `it declares ${layout.size} bytes in a ${segment.size}-byte segment`;
  return { layout, tag: v.getUint32(H.TAG, true) & 0xffff };
}
