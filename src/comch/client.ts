/**
 * The comch client (`struct doca_comch_client`): runs on a host function and connects to the server of
 * that exact name bound to its own function's representor. Start is asynchronous: the client stays
 * STARTING, retrying every 100 ms until the server is up, and reaches RUNNING inside `progress()`.
 * Connecting needs turns of Node's event loop (a socket handshake), so progress it with `pe.run()` or a
 * loop that awaits between calls; once RUNNING, the data path works in a purely synchronous loop.
 */
import { connect, type Socket } from 'node:net';
import { CtxState } from '../core/ctx.js';
import type { Dev } from '../core/dev.js';
import { DocaError } from '../core/error.js';
import { sdkLogSource } from '../core/log.js';
import type { WaitOptions } from '../core/wait.js';
import { isAlive, self } from '../fabric/liveness.js';
import { impostor } from '../fabric/peer-cred.js';
import { findService } from '../fabric/rendezvous.js';
import { Counter, StatEvent, StatKind, statRecord } from '../fabric/stats.js';
import { Segment } from '../fabric/segment.js';
import { representorOf } from '../fabric/topology.js';
import { comchCapClientIsSupported, comchCapGetMaxNameLen } from './caps.js';
import { ComchCtx } from './comch-ctx.js';
import { ComchConnection } from './connection.js';
import { readLayout } from './layout.js';
import { checkServerName, rejectError, SERVER_KIND, serverKey } from './server.js';
import { encodeHello, encodeReady, FrameReader, FrameType, WireError } from './wire.js';

const log = sdkLogSource('comch_client');
const RETRY_MS = 100;

/** One connection attempt's handshake. */
interface Attempt {
  readonly socket: Socket;
  readonly reader: FrameReader;
  /** It has its answer, or gave up: later events of its socket are no news. */
  settled: boolean;
  readonly timer: NodeJS.Timeout;
}
const HANDSHAKE_TIMEOUT_MS = 5000;

/**
 * The comch client, `struct doca_comch_client` (`doca_comch_client_create`, a `doca_ctx` through
 * `doca_comch_client_as_ctx`): runs on a host function and connects to the server of that name bound to its
 * function's representor. `start()` leaves it STARTING until the server answers (retried every 100 ms); it
 * reaches RUNNING inside `progress()`, which needs turns of Node's event loop for the handshake
 * (`pe.run()`, or a loop that awaits).
 *
 * @example
 * ```ts
 * // doca_comch_client_create(dev, "echo", &client); ... doca_comch_client_get_connection(client, &conn)
 * const client = ComchClient.create(openDeviceByPci('b1:00.0'), 'echo');
 * pe.connectCtx(client);
 * client.taskSendSetConf(() => {}, () => {}, 16);
 * client.start(); // 'DOCA_ERROR_IN_PROGRESS': STARTING
 * const connection = await client.connected({ timeoutMs: 10_000 }); // while pe.run() progresses
 * await connection.send(new TextEncoder().encode('hello'));
 * ```
 */
export class ComchClient extends ComchCtx {
  private retryTimer: NodeJS.Timeout | undefined;
  private socket: Socket | undefined;
  private readonly nameBytes: Uint8Array;

  private constructor(
    private readonly dev: Dev,
    /** The name of the server to connect to. */
    readonly serverName: string,
  ) {
    super('doca_comch_client', dev.asDevinfo());
    this.nameBytes = new TextEncoder().encode(serverName);
    dev._acquire(this, 'doca_comch_client_create');
    this.stat = statRecord(dev.fabric.dir, StatKind.CLIENT, `${serverName} from ${dev.asDevinfo().spec.pci}`);
  }

  /** `doca_comch_client_create`: NOT_SUPPORTED on the DPU's Arm side (clients run on the host). */
  static create(dev: Dev, serverName: string): ComchClient {
    const call = 'doca_comch_client_create';
    if (!dev?.isOpen) throw new DocaError('INVALID_VALUE', call, 'the device must be open');
    const info = dev.asDevinfo();
    if (!comchCapClientIsSupported(info)) {
      throw new DocaError('NOT_SUPPORTED', call, `${info.spec.pci} is on the DPU's Arm side; a comch client runs only on the host`);
    }
    checkServerName(call, serverName, comchCapGetMaxNameLen(info));
    return new ComchClient(dev, serverName);
  }

  /** `doca_comch_client_destroy`: only while IDLE (IN_USE otherwise). */
  destroy(): void {
    this.destroyContext('doca_comch_client_destroy');
    this.dev._release(this);
  }

  /** `doca_comch_client_get_device`. */
  getDevice(): Dev {
    return this.dev;
  }

  /** `doca_comch_client_get_connection`: the client's one connection, once RUNNING (BAD_STATE before). */
  getConnection(): ComchConnection {
    this.requireRunning('doca_comch_client_get_connection');
    return this.conns[0]!;
  }

  /** Promise adapter: resolves with the connection once RUNNING (keep the engine progressing). */
  async connected(options: WaitOptions = {}): Promise<ComchConnection> {
    await this.waitForState('RUNNING', options);
    return this.getConnection();
  }

  /** @internal The connection ended: the client fails (RUNNING -> STOPPING -> IDLE), flushing held-back sends with `reason`. */
  _closed(connection: ComchConnection, reason: DocaError): void {
    this.removeConnection(connection);
    this.stat.c[Counter.CLIENT.CONNECTIONS] = 0;
    this.stat.event(StatEvent.DISCONNECT, `connection ${connection.id} (server pid ${connection.peer.pid}) ${reason.code.replace('DOCA_ERROR_', '')}`);
    this.fail(reason);
  }

  protected _doStart(): boolean {
    this.checkMandatory('doca_ctx_start');
    this.retryTimer = setTimeout(() => this.attempt(), 0);
    return false;
  }

  protected override _doStop(): void {
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.socket?.destroy();
    this.socket = undefined;
    const reason = new DocaError('SHUTDOWN', 'doca_ctx_stop', 'the client stopped');
    for (const conn of this.conns) conn._leave(reason);
  }

  protected override _stopComplete(): boolean {
    return this.conns.length === 0;
  }

  private retry(): void {
    this.socket = undefined;
    if (this.getState() !== CtxState.STARTING) return;
    this.retryTimer = setTimeout(() => this.attempt(), RETRY_MS);
  }

  /** One connection attempt: find the server's socket, then HELLO -> WELCOME -> READY. */
  private attempt(): void {
    this.retryTimer = undefined;
    const path = this.serverPath();
    if (path === undefined) return;
    const socket = connect(path);
    this.socket = socket;
    const a: Attempt = { socket, reader: new FrameReader(), settled: false, timer: setTimeout(() => this.giveUp(a, 'the server did not answer the handshake in time'), HANDSHAKE_TIMEOUT_MS) };
    socket.on('error', () => {});
    socket.on('close', () => this.giveUp(a, 'the connection closed during the handshake'));
    socket.on('connect', () => socket.write(this.hello()));
    socket.on('data', (chunk: Buffer) => this.handshakeData(a, chunk));
  }

  /** The socket of the server this client looks for; undefined when there is none yet (retrying) or can be none (failed). */
  private serverPath(): string | undefined {
    const fabric = this.dev.fabric;
    const pci = this.devinfo.spec.pci;
    const rep = representorOf(fabric.topology, pci);
    if (!rep) {
      this.fail(new DocaError('NOT_FOUND', 'doca_ctx_start', `no DPU in topology ${fabric.topology.source} represents ${pci}`));
      return undefined;
    }
    const [path] = findService(fabric, SERVER_KIND, serverKey(rep.arm.toString(), pci.toString(), this.nameBytes));
    if (!path) {
      log.dbg(`client for ${JSON.stringify(this.serverName)}: no such server on ${rep.arm} for ${pci} yet; retrying in ${RETRY_MS} ms`);
      this.retry();
    }
    return path;
  }

  /** What this client asks for: who it is, where it looks, the sizes it wants. */
  private hello(): Buffer {
    const pci = this.devinfo.spec.pci;
    return encodeHello({
      pid: self.pid,
      start: self.start,
      clientPci: pci.toString(),
      armPci: representorOf(this.dev.fabric.topology, pci)!.arm.toString(),
      maxMsgSize: this.maxMsgSize,
      recvQueueSize: this.recvQueueSize,
      name: this.nameBytes,
    });
  }

  /** The attempt failed in transport (timeout, the socket closed first): try again later. */
  private giveUp(a: Attempt, why: string): void {
    if (a.settled) return;
    this.settle(a);
    log.dbg(`client for ${JSON.stringify(this.serverName)}: ${why}; retrying`);
    a.socket.destroy();
    if (this.socket === a.socket) this.retry();
  }

  /** The attempt has its answer (or failed for good): nothing more is read from its handshake. */
  private settle(a: Attempt): void {
    a.settled = true;
    clearTimeout(a.timer);
    a.socket.removeAllListeners('data');
    a.socket.removeAllListeners('close');
  }

  private handshakeData(a: Attempt, chunk: Buffer): void {
    if (a.settled) return;
    let frames;
    try {
      frames = a.reader.push(chunk);
    } catch (err) {
      if (!(err instanceof WireError)) return this.giveUp(a, `the handshake failed: ${(err as Error).message}`);
      // A bad frame, or one of another version, will be the same on every retry: the start fails.
      this.settle(a);
      a.socket.destroy();
      this.fail(
        err.version
          ? new DocaError('NOT_SUPPORTED', 'comch client', `the server ${JSON.stringify(this.serverName)} speaks another comch handshake version: ${err.message} (softdpu on both sides must be of one protocol version, docs/protocol.md#versions)`)
          : new DocaError('CONNECTION_ABORTED', 'comch client', `bad handshake from the server ${JSON.stringify(this.serverName)}: ${err.message}`),
      );
      return;
    }
    const frame = frames[0];
    if (!frame) return;
    this.settle(a);
    if (frame.type === FrameType.WELCOME) return this.established(a.socket, frame.welcome);
    a.socket.destroy();
    this.fail(frame.type === FrameType.REJECT ? rejectError(frame.reject.code, frame.reject.reason) : new DocaError('CONNECTION_ABORTED', 'comch client', `the server answered with frame type ${frame.type}`));
  }

  private established(socket: Socket, w: { pid: number; start: number; segment: Parameters<typeof Segment.open>[0]; msgSize: number; c2sSlots: number; s2cSlots: number }): void {
    let segment: Segment;
    let layout;
    try {
      if (!isAlive({ pid: w.pid, start: w.start }) || w.msgSize > this.maxMsgSize || w.s2cSlots !== this.recvQueueSize) {
        throw new DocaError('CONNECTION_ABORTED', 'comch client', 'the server answered with a connection this client did not ask for');
      }
      // The pid the WELCOME names (whose start time isAlive just checked) must be the server at the other
      // end, and the owner of the segment it hands over.
      const lie = impostor(socket, w.pid, 'comch client');
      if (lie) throw new DocaError('NOT_PERMITTED', 'comch client', `the server ${JSON.stringify(this.serverName)}'s WELCOME does not say who it is: ${lie}`);
      if (w.segment.pid !== w.pid || w.segment.start !== w.start) {
        throw new DocaError('CONNECTION_ABORTED', 'comch client', `the server (pid ${w.pid}) handed over a segment of another process (pid ${w.segment.pid})`);
      }
      segment = Segment.open(w.segment, 'comch client', ['conn']);
      layout = readLayout(segment);
      if (!layout || layout.msgSize !== w.msgSize || layout.c2sSlots !== w.c2sSlots || layout.s2cSlots !== w.s2cSlots) {
        segment.close();
        throw new DocaError('CONNECTION_ABORTED', 'comch client', 'the connection segment does not have the announced layout');
      }
    } catch (err) {
      socket.destroy();
      this.fail(err instanceof DocaError ? err : new DocaError('CONNECTION_ABORTED', 'comch client', String(err)));
      return;
    }
    this.socket = undefined;
    const conn = new ComchConnection(this, 'client', socket, segment, layout, { pid: w.pid, start: w.start });
    this.addConnection(conn);
    this.stat.c[Counter.CLIENT.CONNECTIONS] = 1;
    this.stat.event(StatEvent.CONNECT, `connection ${conn.id} to server pid ${w.pid}`);
    socket.write(encodeReady());
    log.info(`client for ${JSON.stringify(this.serverName)} connected to server pid ${w.pid}`);
    this.startCompleted();
  }
}
