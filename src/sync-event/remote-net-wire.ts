/**
 * The remote-net protocol, wire version 2 (named by the net export blob): a remote node reaches a sync
 * event over TCP (docs/protocol.md#remote-net). Frames are `u32 length` + body (at most 65 bytes); the
 * first byte of a body is its type. Both ends prove they hold the event's secret (it never crosses the
 * wire), each over both nonces, with a label per direction so one proof never serves as the other:
 *
 *   CHALLENGE server -> client  server nonce [32]
 *   AUTH      client -> server  client nonce [32], HMAC-SHA256(secret, "softdpu remote-net client" 0 sn cn) [32]
 *   ADMITTED  server -> client  HMAC-SHA256(secret, "softdpu remote-net server" 0 sn cn) [32]
 *   REQUEST   client -> server  u32 id, u8 op (1 set, 2 add, 3 get), u64 value
 *   REPLY     server -> client  u32 id, u16 DOCA status (0 success), u64 value
 *
 * A peer that fails authentication, or sends anything malformed, is disconnected; a client whose
 * server cannot prove the secret (an impostor on the blob's address) fails with AUTHENTICATION.
 */
import { createHmac } from 'node:crypto';

export const NetFrame = { CHALLENGE: 1, AUTH: 2, ADMITTED: 3, REQUEST: 4, REPLY: 5 } as const;
export const NetOp = { SET: 1, ADD: 2, GET: 3 } as const;
/** The wire version this side speaks, carried by the net export blob (remote-net-server.ts). */
export const NET_WIRE_VERSION = 2;
export const NONCE_SIZE = 32;
const MAX_BODY = 1 + 2 * NONCE_SIZE;

export function frame(type: number, fill: (v: DataView) => void, bodySize: number): Buffer {
  const buf = Buffer.alloc(4 + 1 + bodySize);
  buf.writeUInt32LE(1 + bodySize, 0);
  buf[4] = type;
  fill(new DataView(buf.buffer, buf.byteOffset + 5, bodySize));
  return buf;
}

/** The proof that `side` holds `secret`, for the nonces of one connection. */
export function proof(side: 'client' | 'server', secret: Uint8Array, serverNonce: Uint8Array, clientNonce: Uint8Array): Buffer {
  return createHmac('sha256', secret).update(`softdpu remote-net ${side}\0`).update(serverNonce).update(clientNonce).digest();
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
