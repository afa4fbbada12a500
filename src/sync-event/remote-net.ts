/**
 * A remote-net handle (`struct doca_sync_event_remote_net`): another node's view of a sync event,
 * made from the blob `exportToRemoteNet` gave, in a process that needs nothing else of the fabric. It
 * sets, adds and gets over TCP (DOCA does this with RDMA tasks), so its operations are promises.
 */
import { connect, type Socket } from 'node:net';
import { BlobKind, BlobReader } from '../core/blob.js';
import type { Dev } from '../core/dev.js';
import { DocaError, docaErrorGetName, type DocaErrorName } from '../core/error.js';
import { syncEventCapRemoteNetIsCreateFromExportSupported } from './caps.js';
import { toU64 } from './condition.js';
import { NET_PAYLOAD } from './remote-net-server.js';
import { frame, NetFrame, NetOp, NetReader, proof } from './remote-net-wire.js';

interface Pending {
  resolve: (value: bigint) => void;
  reject: (err: DocaError) => void;
  timer: NodeJS.Timeout;
}

/** Each operation fails with TIME_OUT if unanswered this long. */
const OP_TIMEOUT_MS = 10_000;

export class SyncEventRemoteNet {
  private socket: Socket | undefined;
  private ready: Promise<Socket> | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private destroyed = false;

  private constructor(
    private readonly host: string,
    private readonly port: number,
    private readonly secret: Uint8Array,
  ) {}

  /**
   * `doca_sync_event_remote_net_create_from_export`. `dev` is optional (a remote node may have no
   * softdpu device); when given it must allow remote-net import.
   */
  static createFromExport(blob: Uint8Array, dev?: Dev): SyncEventRemoteNet {
    const call = 'doca_sync_event_remote_net_create_from_export';
    if (dev && !syncEventCapRemoteNetIsCreateFromExportSupported(dev.asDevinfo())) {
      throw new DocaError('NOT_SUPPORTED', call, `${dev.asDevinfo().spec.pci} cannot create remote-net handles`);
    }
    const r = new BlobReader(blob, BlobKind.SYNC_EVENT_NET, undefined, call, NET_PAYLOAD);
    const port = r.view.getUint16(64, true);
    if (port === 0) throw new DocaError('INVALID_VALUE', call, 'the blob names port 0');
    return new SyncEventRemoteNet(r.text(0, 64), port, r.raw(66, 32));
  }

  /** Sets the value. */
  async updateSet(value: bigint | number): Promise<void> {
    await this.request(NetOp.SET, toU64('doca_sync_event_remote_net update_set', 'value', value));
  }

  /** Adds atomically; resolves with the value before the add. */
  updateAdd(value: bigint | number): Promise<bigint> {
    return this.request(NetOp.ADD, toU64('doca_sync_event_remote_net update_add', 'value', value));
  }

  /** Reads the value. */
  get(): Promise<bigint> {
    return this.request(NetOp.GET, 0n);
  }

  /** `doca_sync_event_remote_net_destroy`: pending operations fail with NOT_CONNECTED. */
  destroy(): void {
    this.destroyed = true;
    this.close(new DocaError('NOT_CONNECTED', 'doca_sync_event_remote_net_destroy', 'the handle was destroyed'));
  }

  async [Symbol.asyncDispose](): Promise<void> {
    this.destroy();
  }

  private async request(op: number, value: bigint): Promise<bigint> {
    if (this.destroyed) throw new DocaError('BAD_STATE', 'doca_sync_event_remote_net', 'the handle was destroyed');
    const socket = await this.connection();
    const id = this.nextId++;
    return new Promise<bigint>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new DocaError('TIME_OUT', 'doca_sync_event_remote_net', `no answer from ${this.host}:${this.port} within ${OP_TIMEOUT_MS} ms`));
      }, OP_TIMEOUT_MS);
      this.pending.set(id, { resolve, reject, timer });
      socket.write(
        frame(
          NetFrame.REQUEST,
          (v) => {
            v.setUint32(0, id, true);
            v.setUint8(4, op);
            v.setBigUint64(5, value, true);
          },
          13,
        ),
      );
    });
  }

  /** Connects and authenticates once; later calls share the connection. */
  private connection(): Promise<Socket> {
    this.ready ??= new Promise<Socket>((resolve, reject) => {
      const call = 'doca_sync_event_remote_net';
      const socket = connect({ host: this.host, port: this.port });
      const reader = new NetReader();
      let admitted = false;
      const fail = (err: DocaError) => {
        this.ready = undefined;
        reject(err);
        this.close(err);
      };
      socket.on('error', (err) => fail(new DocaError('NOT_CONNECTED', call, `cannot reach ${this.host}:${this.port}: ${err.message}`)));
      socket.on('close', () => fail(new DocaError('NOT_CONNECTED', call, `the exporter at ${this.host}:${this.port} closed the connection`)));
      socket.on('data', (chunk: Buffer) => {
        const bodies = reader.push(chunk);
        if (!bodies) return fail(new DocaError('UNEXPECTED', call, 'the exporter sent a malformed frame'));
        for (const body of bodies) {
          if (body[0] === NetFrame.CHALLENGE && !admitted) {
            const answer = proof(this.secret, body.subarray(1, 33));
            socket.write(frame(NetFrame.AUTH, (v) => new Uint8Array(v.buffer, v.byteOffset, 32).set(answer), 32));
          } else if (body[0] === NetFrame.ADMITTED) {
            admitted = true;
            this.socket = socket;
            resolve(socket);
          } else if (body[0] === NetFrame.REPLY && body.length === 15) {
            const status = body.readUInt16LE(5);
            if (!admitted) return fail(new DocaError('AUTHENTICATION', call, 'the exporter refused the secret (the event may be destroyed)'));
            this.settle(body.readUInt32LE(1), status, body.readBigUInt64LE(7));
          }
        }
      });
    });
    return this.ready;
  }

  private settle(id: number, status: number, value: bigint): void {
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    clearTimeout(p.timer);
    if (status === 0) p.resolve(value);
    else p.reject(new DocaError(docaErrorGetName(status) as DocaErrorName, 'doca_sync_event_remote_net', `the exporter refused the operation`));
  }

  private close(err: DocaError): void {
    this.socket?.destroy();
    this.socket = undefined;
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(err);
      this.pending.delete(id);
    }
  }
}
