/**
 * A remote-net handle (`struct doca_sync_event_remote_net`): another node's view of a sync event,
 * made from the blob `exportToRemoteNet` gave, in a process that needs nothing else of the fabric. It
 * sets, adds and gets over TCP (DOCA does this with RDMA tasks), so its operations are promises.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { connect, isIP, type Socket } from 'node:net';
import { BlobKind, BlobReader } from '../core/blob.js';
import { CtxState } from '../core/ctx.js';
import type { Dev } from '../core/dev.js';
import { DocaError, DocaErrorCode, docaErrorGetName, type DocaErrorName } from '../core/error.js';
import { Counter, detachedRecord, StatKind, type StatRecord, statRecord } from '../fabric/stats.js';
import { syncEventCapRemoteNetIsCreateFromExportSupported } from './caps.js';
import { toU64 } from './condition.js';
import { type DpaEventTarget, isDpaTarget } from './dpa-handle.js';
import { NET_PAYLOAD } from './remote-net-server.js';
import { frame, NET_WIRE_VERSION, NetFrame, NetOp, NetReader, NONCE_SIZE, proof } from './remote-net-wire.js';

/** Its counters' indices, by name (plain constants: a busy path indexes with them as with literals). */
const { UPDATES, VALUE } = Counter.SYNC_EVENT;

interface Pending {
  resolve: (value: bigint) => void;
  reject: (err: DocaError) => void;
  timer: NodeJS.Timeout;
  what: string;
  /** The operation and its operand, for the handle's record once answered. */
  op: number;
  value: bigint;
}

/** By default each operation (connecting included) fails with TIME_OUT if unanswered this long. */
const OP_TIMEOUT_MS = 10_000;

/** Options of `SyncEventRemoteNet.createFromExport` (softdpu's: DOCA's RDMA tasks have none). */
export interface RemoteNetHandleOptions {
  /** How long an operation, connecting included, may go unanswered (default 10 s). */
  timeoutMs?: number;
}
const OP_NAMES: Record<number, string> = { [NetOp.SET]: 'update_set', [NetOp.ADD]: 'update_add', [NetOp.GET]: 'get' };

/**
 * A remote-net handle, `struct doca_sync_event_remote_net`
 * (`doca_sync_event_remote_net_create_from_export`): another node's view of a sync event, made from the
 * blob `exportToRemoteNet` gave, in a process that needs nothing else of the fabric. It sets, adds and gets
 * over TCP (DOCA does this with RDMA tasks), so its operations are promises.
 *
 * @example
 * ```ts
 * // doca_sync_event_remote_net_create_from_export(dev, blob, len, &remote); then RDMA set/add/get tasks
 * const remote = SyncEventRemoteNet.createFromExport(blob, undefined, { timeoutMs: 5_000 });
 * await remote.updateAdd(1n);
 * console.log(await remote.get());
 * remote.destroy();
 * ```
 */
export class SyncEventRemoteNet {
  private socket: Socket | undefined;
  private ready: Promise<Socket> | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private destroyed = false;
  /**
   * What observers of the fabric see of it (fabric/stats.ts SYNC_EVENT), when made with a device: value
   * as last answered, updates answered. A remote node without a device publishes nothing.
   */
  private stat: StatRecord = detachedRecord();

  private constructor(
    private readonly host: string,
    private readonly port: number,
    private readonly secret: Uint8Array,
    private readonly timeoutMs: number,
  ) {}

  /**
   * `doca_sync_event_remote_net_create_from_export`. `dev` is optional (a remote node may have no
   * softdpu device); when given it must allow remote-net import.
   */
  static createFromExport(blob: Uint8Array, dev?: Dev, options: RemoteNetHandleOptions = {}): SyncEventRemoteNet {
    const call = 'doca_sync_event_remote_net_create_from_export';
    const timeoutMs = options.timeoutMs ?? OP_TIMEOUT_MS;
    if (!(timeoutMs > 0) || timeoutMs > 2 ** 31 - 1) throw new DocaError('INVALID_VALUE', call, `timeoutMs ${String(timeoutMs)} is not in (0, 2^31 - 1] ms`);
    if (dev && !syncEventCapRemoteNetIsCreateFromExportSupported(dev.asDevinfo())) {
      throw new DocaError('NOT_SUPPORTED', call, `${dev.asDevinfo().spec.pci} cannot create remote-net handles`);
    }
    const r = new BlobReader(blob, BlobKind.SYNC_EVENT_NET, undefined, call, NET_PAYLOAD);
    const wire = r.view.getUint16(98, true);
    if (wire !== NET_WIRE_VERSION) throw new DocaError('UNSUPPORTED_VERSION', call, `the blob's exporter speaks remote-net wire version ${wire}, this side ${NET_WIRE_VERSION}`);
    const port = r.view.getUint16(64, true);
    if (port === 0) throw new DocaError('INVALID_VALUE', call, 'the blob names port 0');
    const host = r.text(0, 64);
    if (!isIP(host)) throw new DocaError('INVALID_VALUE', call, `the blob names ${JSON.stringify(host)}, which is not an IP address`);
    const handle = new SyncEventRemoteNet(host, port, r.raw(66, 32), timeoutMs);
    if (dev) {
      handle.stat = statRecord(dev.fabric.dir, StatKind.SYNC_EVENT, `event ${host}:${port} imported (remote_net)`, dev._stat, port);
      handle.stat.setState(CtxState.RUNNING);
    }
    return handle;
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

  /**
   * `doca_sync_event_remote_net_get_dpa_handle`: the handle by which DPA code of `dpa` names this remote
   * event. DPA code updates remote events through DOCA RDMA (`doca_dpa_dev_rdma_signal_*`), which softdpu
   * does not emulate: the handle is checked and can be passed around, nothing more (docs/dpa.md).
   */
  getDpaHandle(dpa: DpaEventTarget): bigint {
    const call = 'doca_sync_event_remote_net_get_dpa_handle';
    if (this.destroyed) throw new DocaError('BAD_STATE', call, 'the handle was destroyed');
    if (!isDpaTarget(dpa)) throw new DocaError('INVALID_VALUE', call, 'expected a Dpa');
    return dpa._remoteNetHandle(this, call);
  }

  /** `doca_sync_event_remote_net_destroy`: pending operations fail with NOT_CONNECTED. */
  destroy(): void {
    this.destroyed = true;
    this.stat.release();
    this.close(new DocaError('NOT_CONNECTED', 'doca_sync_event_remote_net_destroy', 'the handle was destroyed'));
  }

  /** `await using remote = SyncEventRemoteNet.createFromExport(...)`: destroys the handle. */
  async [Symbol.asyncDispose](): Promise<void> {
    this.destroy();
  }

  private request(op: number, value: bigint): Promise<bigint> {
    const call = 'doca_sync_event_remote_net';
    if (this.destroyed) return Promise.reject(new DocaError('BAD_STATE', call, 'the handle was destroyed'));
    // Ids wrap at 2^32 (the wire's u32); one still pending is skipped.
    do this.nextId = (this.nextId + 1) >>> 0 || 1;
    while (this.pending.has(this.nextId));
    const id = this.nextId;
    const what = op === NetOp.GET ? 'get' : `${OP_NAMES[op]} ${value}`;
    // The timer covers connecting too: an exporter whose event loop is held never answers the handshake.
    const answered = new Promise<bigint>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new DocaError('TIME_OUT', call, `${what}: no answer from ${this.host}:${this.port} within ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      this.pending.set(id, { resolve, reject, timer, what, op, value });
    });
    this.connection().then(
      (socket) => this.pending.has(id) && this.send(socket, id, op, value),
      () => {}, // the failure already rejected every pending operation
    );
    return answered;
  }

  private send(socket: Socket, id: number, op: number, value: bigint): void {
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
  }

  /** Connects and authenticates once; later calls share the connection. */
  private connection(): Promise<Socket> {
    this.ready ??= new Promise<Socket>((resolve, reject) => {
      const call = 'doca_sync_event_remote_net';
      const socket = connect({ host: this.host, port: this.port });
      this.socket = socket; // destroy() ends a connection still being made
      const reader = new NetReader();
      const clientNonce = randomBytes(NONCE_SIZE);
      let serverNonce: Buffer | undefined;
      let admitted = false;
      let answered = false;
      const fail = (err: DocaError) => {
        reject(err);
        if (this.socket !== socket) return; // already failed (or destroyed): 'error' and 'close' both come
        this.ready = undefined;
        this.close(err);
      };
      const timer = setTimeout(() => fail(new DocaError('TIME_OUT', call, `${this.host}:${this.port} did not admit us within ${this.timeoutMs} ms`)), this.timeoutMs);
      socket.once('close', () => clearTimeout(timer));
      socket.on('error', (err) => fail(new DocaError('NOT_CONNECTED', call, `cannot reach ${this.host}:${this.port}: ${err.message}`)));
      socket.on('close', () => fail(new DocaError('NOT_CONNECTED', call, `the exporter at ${this.host}:${this.port} closed the connection`)));
      socket.on('data', (chunk: Buffer) => {
        const bodies = reader.push(chunk);
        if (!bodies) return fail(new DocaError('UNEXPECTED', call, 'the exporter sent a malformed frame'));
        // The exporter is not trusted either: every frame must be the one this state allows.
        for (const body of bodies) {
          if (body[0] === NetFrame.CHALLENGE && !answered && body.length === 1 + NONCE_SIZE) {
            answered = true;
            serverNonce = Buffer.from(body.subarray(1));
            const answer = proof('client', this.secret, serverNonce, clientNonce);
            socket.write(frame(NetFrame.AUTH, (v) => (new Uint8Array(v.buffer, v.byteOffset, NONCE_SIZE).set(clientNonce), new Uint8Array(v.buffer, v.byteOffset + NONCE_SIZE, answer.length).set(answer)), NONCE_SIZE + answer.length));
          } else if (body[0] === NetFrame.ADMITTED && answered && !admitted && body.length === 33) {
            // The server proves the secret too: whoever else answers on the blob's address is refused.
            if (!timingSafeEqual(proof('server', this.secret, serverNonce!, clientNonce), body.subarray(1))) {
              return fail(new DocaError('AUTHENTICATION', call, `the server at ${this.host}:${this.port} could not prove it holds the event's secret (not the exporter)`));
            }
            admitted = true;
            clearTimeout(timer);
            resolve(socket);
          } else if (body[0] === NetFrame.REPLY && body.length === 15 && answered) {
            const status = body.readUInt16LE(5);
            if (!admitted) return fail(new DocaError('AUTHENTICATION', call, 'the exporter refused the secret (the event may be destroyed)'));
            this.settle(body.readUInt32LE(1), status, body.readBigUInt64LE(7));
          } else {
            return fail(new DocaError('UNEXPECTED', call, `the exporter sent frame type ${body[0]} (${body.length} bytes) where it may not`));
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
    if (status === 0) {
      this.stat.u[VALUE] = p.op === NetOp.GET ? value : p.op === NetOp.ADD ? value + p.value : p.value;
      if (p.op !== NetOp.GET) this.stat.c[UPDATES]!++;
      return p.resolve(value);
    }
    // The peer is not trusted to send a known status.
    const name = docaErrorGetName(status);
    const code: DocaErrorName = name in DocaErrorCode ? (name as DocaErrorName) : 'DOCA_ERROR_UNEXPECTED';
    p.reject(new DocaError(code, 'doca_sync_event_remote_net', `${p.what}: the exporter at ${this.host}:${this.port} refused it with status ${status} (${name})`));
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
