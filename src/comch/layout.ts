/**
 * The shared segment of one comch connection, made by the server when it accepts a client:
 *
 *   0    segment header (fabric/segment.ts)
 *   64   u32 magic 'CONN', u32 msg size, u32 c2s slots, u32 s2c slots
 *   128  i32 server sleeping   (the server's engine waits for a doorbell byte; ring it)
 *   192  i32 client sleeping
 *   256  client -> server ring (server.recv_queue_size records)
 *   ...  server -> client ring (client.recv_queue_size records)
 */
import { ringSize } from '../fabric/ring.js';
import { Segment, SEGMENT_HEADER_SIZE } from '../fabric/segment.js';

const MAGIC = 0x4e4e4f43;
const OFF_MAGIC = SEGMENT_HEADER_SIZE;
export const OFF_SLEEPING = { server: 128, client: 192 } as const;
const OFF_RINGS = 256;

export type Side = 'server' | 'client';

export interface ConnLayout {
  readonly msgSize: number;
  readonly c2sSlots: number;
  readonly s2cSlots: number;
  readonly c2sBase: number;
  readonly s2cBase: number;
  readonly size: number;
}

export function connLayout(msgSize: number, c2sSlots: number, s2cSlots: number): ConnLayout {
  const c2sBase = OFF_RINGS;
  const s2cBase = c2sBase + ringSize(c2sSlots, msgSize);
  return { msgSize, c2sSlots, s2cSlots, c2sBase, s2cBase, size: s2cBase + ringSize(s2cSlots, msgSize) };
}

/** Server side: a fresh connection segment. */
export function createConnSegment(layout: ConnLayout): Segment {
  const seg = Segment.create('conn', layout.size - SEGMENT_HEADER_SIZE);
  const v = new DataView(seg.u8.buffer);
  v.setUint32(OFF_MAGIC + 4, layout.msgSize, true);
  v.setUint32(OFF_MAGIC + 8, layout.c2sSlots, true);
  v.setUint32(OFF_MAGIC + 12, layout.s2cSlots, true);
  Atomics.store(seg.i32, OFF_MAGIC / 4, MAGIC);
  return seg;
}

/** Client side: whether an opened segment has the layout the WELCOME announced. */
export function matchesLayout(seg: Segment, layout: ConnLayout): boolean {
  const v = new DataView(seg.u8.buffer);
  return (
    seg.size >= layout.size &&
    Atomics.load(seg.i32, OFF_MAGIC / 4) === MAGIC &&
    v.getUint32(OFF_MAGIC + 4, true) === layout.msgSize &&
    v.getUint32(OFF_MAGIC + 8, true) === layout.c2sSlots &&
    v.getUint32(OFF_MAGIC + 12, true) === layout.s2cSlots
  );
}
