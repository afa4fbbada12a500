/**
 * The shared segment of one comch connection, made by the server when it accepts a client. Every
 * thread that works on the connection (the server or client context, and the producers and consumers,
 * which may live in worker threads) maps it; all coordination between them is in here. docs/protocol.md
 * is the specification; this comment and the constants below follow it.
 *
 *   0     segment header (fabric/segment.ts)
 *   64    u32 magic 'CONN', u32 msg size, u32 c2s slots, u32 s2c slots, u32 endpoint entries, u32 version
 *   128   server side: i32 wants room (held-back sends), +64 bell reference of the server context
 *   256   client side: the same, written by the client
 *   384   fast-path header:
 *           +0   i32 connection state (1 connected, 2 closed)
 *           +4   i32 last consumer id        +8  i32 last producer id
 *           +64  i32 server request bell (its endpoints changed the table)
 *           +128 i32 client request bell
 *   576   endpoint table: entries x 192 bytes (see ENTRY_* below)
 *   ...   client -> server ring (server.recv_queue_size records of msg size)
 *   ...   server -> client ring (client.recv_queue_size records)
 *   ...   client -> server control ring (consumer announcements), then server -> client
 *
 * Each side writes only its own side block and its own endpoints' entries (producers and consumers
 * claim entries with a compare-and-swap); everything read from the other side is checked first.
 */
import { BELL_REF_SIZE } from '../fabric/doorbell.js';
import { startPosition } from '../fabric/positions.js';
import { initRing, ringSize } from '../fabric/ring.js';
import { Segment, SEGMENT_HEADER_SIZE } from '../fabric/segment.js';

const MAGIC = 0x4e4e4f43;
/**
 * 3: endpoint entries carry the 24-byte owner and the RESERVING state. 4: packed ring records, WRAP
 * headers (fabric/ring.ts). docs/protocol.md#versions.
 */
const VERSION = 4;
const OFF_MAGIC = SEGMENT_HEADER_SIZE;
const OFF_SIDE = { server: 128, client: 256 } as const;
/** A side block: what the other side reads to wake this one. */
export const SIDE = {
  /** i32: 1 while this side holds sends back for lack of room (the other side rings when it frees some). */
  WANTS_ROOM: (side: Side) => OFF_SIDE[side],
  /** This side's context's bell reference for the connection (fabric/doorbell.ts). */
  BELL: (side: Side) => OFF_SIDE[side] + 64,
} as const;
const OFF_FASTPATH = 384;
export const FP = {
  STATE: OFF_FASTPATH,
  LAST_CONSUMER_ID: OFF_FASTPATH + 4,
  LAST_PRODUCER_ID: OFF_FASTPATH + 8,
  REQUEST_BELL: { server: OFF_FASTPATH + 64, client: OFF_FASTPATH + 128 },
} as const;
export const CONN_CONNECTED = 1;
export const CONN_CLOSED = 2;
const OFF_TABLE = 576;

/** An endpoint table entry (192 bytes): a consumer or a producer of either side. */
export const ENTRY_SIZE = 192;
export const ENTRY = {
  STATE: 0,
  ID: 4,
  /** 0 server, 1 client: the side the endpoint lives on. */
  SIDE: 8,
  IMM_LEN: 12,
  /** Bumped on every start, so producers notice a restarted consumer's new queue. */
  GENERATION: 16,
  /** KIND_CONSUMER or KIND_PRODUCER. */
  KIND: 20,
  /** Descriptor of the consumer's queue segment. */
  QUEUE: 24,
  /** Descriptor of the segment its buffers live in. */
  MEMORY: 64,
  /** The endpoint's bell reference: producers ring a consumer when they fill it, everyone at close. */
  BELL: 104,
  /** The endpoint's owner thread: u32 pid, u32 kernel tid, f64 process start, f64 thread start (24 bytes). */
  OWNER: 104 + BELL_REF_SIZE,
} as const;
export const KIND_CONSUMER = 0;
export const KIND_PRODUCER = 1;

/** Endpoint entry states (a producer's entry is CREATED for its whole life). */
export const CONSUMER = {
  FREE: 0,
  /** Being filled in by the thread that claimed it (ignored by everyone else until CREATED). */
  RESERVING: 7,
  /** Created, id reserved, not started. */
  CREATED: 1,
  /** Started: its side's context should announce it to the peer. */
  REQUESTED: 2,
  /** Announced to the peer, which marks it REGISTERED. */
  ANNOUNCED: 3,
  REGISTERED: 4,
  /** Stopping: its side's context should tell the peer. */
  EXPIRING: 5,
  EXPIRED: 6,
} as const;

/** Control records between the two contexts (payload: the entry index, u32). */
export const CONTROL = { CONSUMER_NEW: 1, CONSUMER_EXPIRED: 2 } as const;
export const CONTROL_PAYLOAD = 4;

export type Side = 'server' | 'client';
export const sideIndex = (side: Side): number => (side === 'server' ? 0 : 1);
export const otherSide = (side: Side): Side => (side === 'server' ? 'client' : 'server');

export interface ConnLayout {
  readonly msgSize: number;
  readonly c2sSlots: number;
  readonly s2cSlots: number;
  readonly entries: number;
  readonly c2sBase: number;
  readonly s2cBase: number;
  readonly c2sControlBase: number;
  readonly s2cControlBase: number;
  readonly size: number;
}

export function connLayout(msgSize: number, c2sSlots: number, s2cSlots: number, entries: number): ConnLayout {
  const c2sBase = OFF_TABLE + entries * ENTRY_SIZE;
  const s2cBase = c2sBase + ringSize(c2sSlots, msgSize);
  const c2sControlBase = s2cBase + ringSize(s2cSlots, msgSize);
  const s2cControlBase = c2sControlBase + ringSize(entries * 2, CONTROL_PAYLOAD);
  const size = s2cControlBase + ringSize(entries * 2, CONTROL_PAYLOAD);
  return { msgSize, c2sSlots, s2cSlots, entries, c2sBase, s2cBase, c2sControlBase, s2cControlBase, size };
}

/** Byte offset of endpoint table entry `index`. */
export function entryOffset(index: number): number {
  return OFF_TABLE + index * ENTRY_SIZE;
}

/** Server side: a fresh connection segment. */
export function createConnSegment(layout: ConnLayout): Segment {
  const seg = Segment.create('conn', layout.size - SEGMENT_HEADER_SIZE);
  const v = new DataView(seg.u8.buffer);
  v.setUint32(OFF_MAGIC + 4, layout.msgSize, true);
  v.setUint32(OFF_MAGIC + 8, layout.c2sSlots, true);
  v.setUint32(OFF_MAGIC + 12, layout.s2cSlots, true);
  v.setUint32(OFF_MAGIC + 16, layout.entries, true);
  v.setUint32(OFF_MAGIC + 20, VERSION, true);
  const start = startPosition();
  for (const base of [layout.c2sBase, layout.s2cBase, layout.c2sControlBase, layout.s2cControlBase]) initRing(seg, base, start);
  Atomics.store(seg.i32, FP.STATE / 4, CONN_CONNECTED);
  Atomics.store(seg.i32, OFF_MAGIC / 4, MAGIC);
  return seg;
}

/** The layout a connection segment declares, or undefined if it is not one (or lies about its size). */
export function readLayout(seg: Segment): ConnLayout | undefined {
  if (seg.size < OFF_TABLE || Atomics.load(seg.i32, OFF_MAGIC / 4) !== MAGIC) return undefined;
  const v = new DataView(seg.u8.buffer);
  if (v.getUint32(OFF_MAGIC + 20, true) !== VERSION) return undefined;
  const layout = connLayout(v.getUint32(OFF_MAGIC + 4, true), v.getUint32(OFF_MAGIC + 8, true), v.getUint32(OFF_MAGIC + 12, true), v.getUint32(OFF_MAGIC + 16, true));
  return layout.size <= seg.size && layout.entries <= 1 << 16 && layout.msgSize > 0 && layout.c2sSlots > 0 && layout.s2cSlots > 0 ? layout : undefined;
}
