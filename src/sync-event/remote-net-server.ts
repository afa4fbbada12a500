/**
 * The exporter's side of remote-net: a TCP listener (loopback unless told otherwise) that admits only
 * peers proving they hold the event's secret (every blob of the event carries the same one, made at the
 * first export), and applies their set/add/get to the event. It is served by the event loop, so the
 * exporting process must not sit in a blocking wait.
 *
 * Bounded: at most MAX_PEERS connections (more are refused and logged), one HMAC per authentication, and
 * a peer that does not read its replies stops being read once MAX_UNREAD bytes of them are queued.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, isIP, type Server, type Socket } from 'node:net';
import { BlobKind, BlobWriter } from '../core/blob.js';
import { DocaError, DocaErrorCode } from '../core/error.js';
import { sdkLogSource } from '../core/log.js';
import { frame, NET_WIRE_VERSION, NetFrame, NetOp, NetReader, NONCE_SIZE, proof } from './remote-net-wire.js';
import type { SyncEvent } from './sync-event.js';

const log = sdkLogSource('sync_event_net');

/**
 * Where `SyncEvent.exportToRemoteNet` (`doca_sync_event_export_to_remote_net`) serves the event's remote
 * handles: a TCP listener, the emulation of DOCA's RDMA path.
 */
export interface RemoteNetOptions {
  /** IP address to listen on (default 127.0.0.1). */
  host?: string;
  /** Port (default: any free one). */
  port?: number;
}

/** Connections one exported event serves at a time. */
const MAX_PEERS = 64;
/** Reply bytes queued for a peer before its requests are no longer read (until it reads them). */
const MAX_UNREAD = 64 * 1024;

/** Blob payload: host [64], u16 port, secret [32], u16 wire version (NET_WIRE_VERSION). */
export const NET_PAYLOAD = 64 + 2 + 32 + 2;

/** @internal The net export blob: where the exporter listens, the event's secret, the wire version it speaks. */
export function netBlob(host: string, port: number, secret: Uint8Array, wireVersion: number = NET_WIRE_VERSION): Uint8Array {
  const w = new BlobWriter(BlobKind.SYNC_EVENT_NET, NET_PAYLOAD, undefined);
  w.text(0, 64, host);
  w.view.setUint16(64, port, true);
  w.raw(66, secret);
  w.view.setUint16(98, wireVersion, true);
  return w.finish();
}

export class RemoteNetServer {
  /** The listener, once asked for: concurrent exports share it. */
  private listening: Promise<Server> | undefined;
  /** The event's secret, made at the first export and carried by every blob of it. */
  private secret: Buffer | undefined;
  private readonly sockets = new Set<Socket>();
  private host = '';
  private closed = false;

  constructor(private readonly event: SyncEvent) {}

  async export(call: string, options: RemoteNetOptions): Promise<Uint8Array> {
    const host = options.host ?? '127.0.0.1';
    if (!isIP(host)) throw new DocaError('INVALID_VALUE', call, `the bind address ${JSON.stringify(host)} is not an IP address`);
    if (this.listening && host !== this.host) throw new DocaError('INVALID_VALUE', call, `the event already listens on ${this.host}, not ${host}`);
    this.host = host;
    this.listening ??= this.listen(call, host, options.port ?? 0);
    const server = await this.listening;
    const secret = (this.secret ??= randomBytes(32));
    return netBlob(host, (server.address() as { port: number }).port, secret);
  }

  close(): void {
    this.closed = true;
    void this.listening?.then((server) => server.close()).catch(() => {});
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    this.secret = undefined;
  }

  private listen(call: string, host: string, port: number): Promise<Server> {
    const server = createServer((socket) => this.admit(socket));
    return new Promise<Server>((resolve, reject) => {
      server.once('error', (err) => {
        this.listening = undefined;
        reject(new DocaError('OPERATING_SYSTEM', call, `cannot listen on ${host}:${port}: ${err.message}`));
      });
      server.listen({ host, port, exclusive: true }, () => {
        // Destroyed while binding: do not keep a listener for an event that is gone.
        if (this.closed) {
          server.close();
          reject(new DocaError('BAD_STATE', call, 'the sync event was destroyed while its listener was binding'));
        } else resolve(server);
      });
    });
  }

  private admit(socket: Socket): void {
    if (this.sockets.size >= MAX_PEERS) {
      log.warn(`remote-net peer ${socket.remoteAddress}:${socket.remotePort}: the event already serves ${MAX_PEERS} peers; refusing it`);
      socket.destroy();
      return;
    }
    this.sockets.add(socket);
    const nonce = randomBytes(NONCE_SIZE);
    const reader = new NetReader();
    let admitted = false;
    const drop = (why: string) => {
      log.warn(`remote-net peer ${socket.remoteAddress}:${socket.remotePort}: ${why}; disconnecting it`);
      socket.destroy();
    };
    const timer = setTimeout(() => !admitted && drop('no authentication within 5 s'), 5000);
    timer.unref();
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      this.sockets.delete(socket);
    });
    socket.write(frame(NetFrame.CHALLENGE, (v) => new Uint8Array(v.buffer, v.byteOffset, NONCE_SIZE).set(nonce), NONCE_SIZE));
    socket.on('data', (chunk: Buffer) => {
      const bodies = reader.push(chunk);
      if (!bodies) return drop('malformed frame');
      for (const body of bodies) {
        if (!admitted) {
          const theirs = body.subarray(1, 1 + NONCE_SIZE);
          const answer = body.subarray(1 + NONCE_SIZE);
          if (body[0] !== NetFrame.AUTH || body.length !== 1 + 2 * NONCE_SIZE || !this.secret || !timingSafeEqual(proof('client', this.secret, nonce, theirs), answer)) {
            socket.write(frame(NetFrame.REPLY, (v) => v.setUint16(4, DocaErrorCode.DOCA_ERROR_AUTHENTICATION, true), 14));
            return drop('authentication failed (wrong secret)');
          }
          admitted = true;
          clearTimeout(timer);
          const mine = proof('server', this.secret, nonce, theirs);
          socket.write(frame(NetFrame.ADMITTED, (v) => new Uint8Array(v.buffer, v.byteOffset, mine.length).set(mine), mine.length));
          continue;
        }
        if (body[0] !== NetFrame.REQUEST || body.length !== 14) return drop('malformed request');
        if (!socket.write(this.serve(body)) && socket.writableLength > MAX_UNREAD) {
          // It sends faster than it reads: stop reading it until its replies drained.
          socket.pause();
          socket.once('drain', () => socket.resume());
        }
      }
    });
  }

  private serve(body: Buffer): Buffer {
    const id = body.readUInt32LE(1);
    const op = body[5];
    const value = body.readBigUInt64LE(6);
    let status = 0;
    let result = 0n;
    try {
      if (op === NetOp.SET) this.event._remote('set', value);
      else if (op === NetOp.ADD) result = this.event._remote('add', value);
      else if (op === NetOp.GET) result = this.event._remote('get', 0n);
      else throw new DocaError('INVALID_VALUE', 'remote net', `unknown operation ${op}`);
    } catch (err) {
      status = err instanceof DocaError ? err.value : DocaErrorCode.DOCA_ERROR_UNKNOWN;
    }
    return frame(
      NetFrame.REPLY,
      (v) => {
        v.setUint32(0, id, true);
        v.setUint16(4, status, true);
        v.setBigUint64(6, result, true);
      },
      14,
    );
  }
}
