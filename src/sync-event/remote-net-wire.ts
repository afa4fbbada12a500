/**
 * The remote-net protocol: a remote node reaches a sync event over TCP (docs/protocol.md#remote-net).
 * Frames are `u32 length` + body (at most 64 bytes); the first byte of a body is its type.
 *
 *   CHALLENGE server -> client  nonce [32]
 *   AUTH      client -> server  HMAC-SHA256(secret, nonce) [32]      (the secret never crosses the wire)
 *   ADMITTED  server -> client
 *   REQUEST   client -> server  u32 id, u8 op (1 set, 2 add, 3 get), u64 value
 *   REPLY     server -> client  u32 id, u16 DOCA status (0 success), u64 value
 *
 * A peer that fails authentication, or sends anything malformed, is disconnected.
 */
import { createHmac } from 'node:crypto';

export const NetFrame = { CHALLENGE: 1, AUTH: 2, ADMITTED: 3, REQUEST: 4, REPLY: 5 } as const;
export const NetOp = { SET: 1, ADD: 2, GET: 3 } as const;
const MAX_BODY = 64;

export function frame(type: number, fill: (v: DataView) => void, bodySize: number): Buffer {
  const buf = Buffer.alloc(4 + 1 + bodySize);
  buf.writeUInt32LE(1 + bodySize, 0);
  buf[4] = type;
  fill(new DataView(buf.buffer, buf.byteOffset + 5, bodySize));
  return buf;
}

export function proof(secret: Uint8Array, nonce: Uint8Array): Buffer {
  return createHmac('sha256', secret).update(nonce).digest();
}

/** Splits a TCP stream into frame bodies; returns undefined once the stream is malformed. */
export class NetReader {
  private pending: Buffer<ArrayBufferLike> = Buffer.alloc(0);

  push(chunk: Buffer): Buffer[] | undefined {
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    const bodies: Buffer[] = [];
    while (this.pending.length >= 4) {
      const length = this.pending.readUInt32LE(0);
      if (length < 1 || length > MAX_BODY) return undefined;
      if (this.pending.length < 4 + length) break;
      bodies.push(this.pending.subarray(4, 4 + length));
      this.pending = this.pending.subarray(4 + length);
    }
    return bodies;
  }
}
