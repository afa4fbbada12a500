/**
 * The comch server (`struct doca_comch_server`): runs on the DPU's Arm side, bound to the representor of
 * one host function, and accepts clients of that function that ask for its exact name.
 */
import type { Server, Socket } from 'node:net';
import { type Dev, type DevRep } from '../core/dev.js';
import { CtxState } from '../core/ctx.js';
import { DocaError, docaErrorGetName, DocaErrorCode, type DocaErrorName } from '../core/error.js';
import { sdkLogSource } from '../core/log.js';
import { active as faultsActive, faultEvent } from '../fabric/faults/index.js';
import { impostor } from '../fabric/peer-cred.js';
import { isAlive } from '../fabric/liveness.js';
import { digest } from '../fabric/names.js';
import { claimName, listenService } from '../fabric/rendezvous.js';
import type { Segment } from '../fabric/segment.js';
import { self } from '../fabric/liveness.js';
import { Counter, StatEvent, StatKind, statRecord } from '../fabric/stats.js';
import { comchConsumerCapGetMaxConsumers, comchProducerCapGetMaxProducers, comchCapGetMaxClients, comchCapGetMaxMsgSize, comchCapGetMaxNameLen, comchCapGetMaxRecvQueueSize, comchCapServerIsSupported } from './caps.js';
import { ComchCtx, type ComchEvent } from './comch-ctx.js';
import { ComchConnection, LINGER_MS } from './connection.js';
import type { ComchSendTask } from './send-task.js';
import { connLayout, createConnSegment } from './layout.js';
import { encodeReject, encodeWelcome, FrameReader, FrameType, type Hello, WireError } from './wire.js';

const log = sdkLogSource('comch_server');

/** `doca_comch_event_connection_status_changed_cb_t`. */
export type ComchConnectionStatusCb = (event: ComchEvent, connection: ComchConnection, changeSuccessful: boolean) => void;

/** A client gets this long to finish its handshake. */
const HANDSHAKE_TIMEOUT_MS = 5000;
/** After a disconnect or a stop, a client gets this long to close its end before it is cut off. */
export const SERVER_KIND = 'comch-srv';

/** The name a client of function `clientPci` reaching through Arm device `armPci` looks for. */
export function serverKey(armPci: string, clientPci: string, name: Uint8Array): string {
  return digest(`${armPci}|${clientPci}|${Buffer.from(name).toString('hex')}`, 22);
}

/** Checks a server name against `max_name_len` (which counts the NUL). */
export function checkServerName(call: string, name: string, maxNameLen: number): Uint8Array {
  if (typeof name !== 'string' || name.length === 0) throw new DocaError('INVALID_VALUE', call, 'the server name must be a non-empty string');
  const bytes = new TextEncoder().encode(name);
  if (bytes.includes(0)) throw new DocaError('INVALID_VALUE', call, 'the server name must not contain a NUL byte');
  if (bytes.length + 1 > maxNameLen) {
    throw new DocaError('INVALID_VALUE', call, `the name is ${bytes.length} bytes (${bytes.length + 1} with its NUL), more than max_name_len ${maxNameLen}`);
  }
  return bytes;
}

/** What the server made for a client it answered: the connection's segment and layout, and the client's HELLO. */
interface Welcomed {
  segment: Segment;
  hello: Hello;
  layout: ReturnType<typeof connLayout>;
}

/** One client's handshake in progress. */
interface Handshake {
  readonly socket: Socket;
  readonly reader: FrameReader;
  welcomed: Welcomed | undefined;
  /** Finished (a connection) or dropped: later events of its socket are no news. */
  done: boolean;
  readonly timer: NodeJS.Timeout;
}

/**
 * The comch server, `struct doca_comch_server` (`doca_comch_server_create`, a `doca_ctx`): runs on the
 * DPU's Arm side, bound to the representor of one host function, and accepts the clients of that function
 * that ask for its exact name. Messages arrive through `eventMsgRecvRegister` or `messages()`; replies go
 * back as send tasks on the connection they came on (or `connection.send()`).
 *
 * @example
 * ```ts
 * // doca_comch_server_create(dev, rep, "echo", &server); doca_pe_connect_ctx(pe, doca_comch_server_as_ctx(server));
 * const arm = openDeviceByPci('03:00.0');
 * const server = ComchServer.create(arm, openRepresentorByPci(arm, DevinfoRepFilter.NET, 'b1:00.0'), 'echo');
 * pe.connectCtx(server);
 * server.taskSendSetConf((task) => task.free(), (task) => task.free(), 16);
 * server.eventMsgRecvRegister((event, data, len, connection) => {
 *   server.taskSendAllocInit(connection, data).submit(); // echo
 * });
 * server.start();
 * ```
 */
export class ComchServer extends ComchCtx {
  private lock: Server | undefined;
  private listener: Server | undefined;
  private readonly handshakes = new Set<Socket>();
  private connectCb: ComchConnectionStatusCb | undefined;
  private disconnectCb: ComchConnectionStatusCb | undefined;
  private readonly nameBytes: Uint8Array;

  private constructor(
    private readonly dev: Dev,
    private readonly rep: DevRep,
    /** The name clients ask for. */
    readonly serverName: string,
  ) {
    super('doca_comch_server', dev.asDevinfo());
    this.nameBytes = new TextEncoder().encode(serverName);
    dev._acquire(this, 'doca_comch_server_create');
    rep._acquire(this, 'doca_comch_server_create');
    this.stat = statRecord(dev.fabric.dir, StatKind.SERVER, `${serverName} for ${rep.asDevinfo().spec.pci}`);
  }

  /**
   * `doca_comch_server_create`: a server for the host function that `rep` represents, on the Arm device
   * `dev`. NOT_SUPPORTED on a host device; INVALID_VALUE for a name longer than `max_name_len` allows.
   */
  static create(dev: Dev, rep: DevRep, name: string): ComchServer {
    const call = 'doca_comch_server_create';
    if (!dev?.isOpen) throw new DocaError('INVALID_VALUE', call, 'the device must be open');
    if (!rep?.isOpen) throw new DocaError('INVALID_VALUE', call, 'the representor must be open');
    const info = dev.asDevinfo();
    if (!comchCapServerIsSupported(info)) {
      throw new DocaError('NOT_SUPPORTED', call, `${info.spec.pci} is a host function; a comch server runs only on the DPU's Arm side`);
    }
    if (rep.dev !== dev) throw new DocaError('INVALID_VALUE', call, `representor ${rep.asDevinfo().spec.pci} belongs to ${rep.dev.asDevinfo().spec.pci}, not ${info.spec.pci}`);
    checkServerName(call, name, comchCapGetMaxNameLen(info));
    return new ComchServer(dev, rep, name);
  }

  /** `doca_comch_server_destroy`: only while IDLE (IN_USE otherwise). */
  destroy(): void {
    this.destroyContext('doca_comch_server_destroy');
    this.dev._release(this);
    this.rep._release(this);
  }

  /** `doca_comch_server_get_device`. */
  getDevice(): Dev {
    return this.dev;
  }

  /** `doca_comch_server_get_device_rep`. */
  getDeviceRep(): DevRep {
    return this.rep;
  }

  /**
   * `doca_comch_server_event_connection_status_changed_register`. softdpu calls `connect` once per
   * established connection and `disconnect` exactly once when it ends (however it ends), both with
   * `changeSuccessful` true; handshakes that fail never surface (they are logged at SDK level).
   */
  eventConnectionStatusChangedRegister(connect: ComchConnectionStatusCb, disconnect: ComchConnectionStatusCb): void {
    const call = 'doca_comch_server_event_connection_status_changed_register';
    this.requireIdle(call);
    if (typeof connect !== 'function' || typeof disconnect !== 'function') throw new DocaError('INVALID_VALUE', call, 'both callbacks must be functions');
    this.connectCb = connect;
    this.disconnectCb = disconnect;
  }

  /**
   * `doca_comch_server_disconnect`: the client is told after every message sent before; its disconnect
   * event follows once it closed its end. IN_USE while the connection has producers or consumers, AGAIN
   * when the client's queue is full (progress and call again), NOT_CONNECTED the second time.
   */
  disconnect(connection: ComchConnection): void {
    const call = 'doca_comch_server_disconnect';
    this.requireRunning(call);
    if (!this.conns.includes(connection)) throw new DocaError('NOT_CONNECTED', call, `connection ${connection?.id} is not a live connection of server ${JSON.stringify(this.serverName)}`);
    this.checkNoChildren(call, connection);
    connection._disconnect(call);
    setTimeout(() => connection._abort(), LINGER_MS).unref();
  }

  _closed(connection: ComchConnection, reason: DocaError, heldBack: ComchSendTask[]): void {
    this.removeConnection(connection);
    this.stat.c[Counter.SERVER.CONNECTIONS] = this.conns.length;
    this.stat.event(StatEvent.DISCONNECT, `connection ${connection.id} (pid ${connection.peer.pid}) ${reason.code.replace('DOCA_ERROR_', '')}`);
    for (const task of heldBack) this._sendDone(task, reason);
    log.dbg(`server ${JSON.stringify(this.serverName)}: connection ${connection.id} ended (${reason.code})`);
    const cb = this.disconnectCb;
    if (cb) this.statusEvent('connection_disconnected', () => cb(this.event, connection, true));
  }

  protected _doStart(): boolean {
    const call = 'doca_ctx_start';
    this.checkMandatory(call);
    const fabric = this.dev.fabric;
    const key = serverKey(this.devinfo.spec.pci.toString(), this.rep.asDevinfo().spec.pci.toString(), this.nameBytes);
    try {
      this.lock = claimName(fabric, SERVER_KIND, key, call);
    } catch (err) {
      if (!DocaError.is(err, 'ALREADY_EXIST')) throw err;
      throw new DocaError('ALREADY_EXIST', call, `a comch server named ${JSON.stringify(this.serverName)} already runs on ${this.devinfo.spec.pci} for ${this.rep.asDevinfo().spec.pci}`);
    }
    try {
      this.listener = listenService(fabric, SERVER_KIND, key, call, (socket) => this.accept(socket));
    } catch (err) {
      this.lock.close();
      this.lock = undefined;
      throw err;
    }
    log.info(`server ${JSON.stringify(this.serverName)} listening for ${this.rep.asDevinfo().spec.pci}`);
    return true;
  }

  protected override _doStop(): void {
    this.listener?.close();
    this.lock?.close();
    this.listener = this.lock = undefined;
    for (const socket of this.handshakes) socket.destroy();
    this.handshakes.clear();
    const reason = new DocaError('SHUTDOWN', 'doca_ctx_stop', `server ${JSON.stringify(this.serverName)} stopped`);
    for (const conn of this.conns) conn._leave(reason); // each lingers LINGER_MS at most
  }

  protected override _stopComplete(): boolean {
    return this.conns.length === 0;
  }

  /** Queues a connection status event, unless a fault plan loses or delays it (docs/faults.md). */
  private statusEvent(event: string, fn: () => void): void {
    if (faultsActive) faultEvent(this.name, event, this, () => this.queueEvent(fn));
    else this.queueEvent(fn);
  }

  /** Runs a client's handshake: HELLO -> (checks) -> WELCOME -> READY -> connection. */
  private accept(socket: Socket): void {
    if (this.getState() !== CtxState.RUNNING) {
      socket.destroy();
      return;
    }
    this.handshakes.add(socket);
    const h: Handshake = { socket, reader: new FrameReader(), welcomed: undefined, done: false, timer: setTimeout(() => this.drop(h, `handshake not finished within ${HANDSHAKE_TIMEOUT_MS} ms`), HANDSHAKE_TIMEOUT_MS) };
    h.timer.unref();
    socket.on('error', () => {});
    socket.on('close', () => this.drop(h, h.reader.partial ? 'the handshake ended in the middle of a frame (truncated)' : 'the peer left during the handshake'));
    socket.on('data', (chunk: Buffer) => this.handshakeData(h, chunk));
  }

  /** The handshake is over (a connection, or dropped): its socket's events are no longer its business. */
  private finish(h: Handshake): void {
    h.done = true;
    clearTimeout(h.timer);
    this.handshakes.delete(h.socket);
    h.socket.removeAllListeners('data');
    h.socket.removeAllListeners('close');
  }

  /** Ends a handshake that failed: with a REJECT frame when there is a code to give, else by closing. */
  private drop(h: Handshake, why: string, reject?: { code: DocaErrorName; reason: string }): void {
    if (h.done) return;
    this.stat.c[Counter.SERVER.REFUSED]++;
    log.warn(`server ${JSON.stringify(this.serverName)}: ${why}; dropping that peer`);
    this.finish(h);
    h.welcomed?.segment.close();
    if (reject) h.socket.end(encodeReject({ code: DocaErrorCode[reject.code], reason: reject.reason }));
    else h.socket.destroy();
  }

  private handshakeData(h: Handshake, chunk: Buffer): void {
    let frames;
    try {
      frames = h.reader.push(chunk);
    } catch (err) {
      const e = err as WireError;
      return this.drop(h, `bad handshake: ${e.message}`, e.version ? { code: 'DOCA_ERROR_UNSUPPORTED_VERSION', reason: e.message } : undefined);
    }
    for (const frame of frames) {
      if (h.done) return;
      if (!h.welcomed && frame.type === FrameType.HELLO) this.welcome(h, frame.hello);
      else if (h.welcomed && frame.type === FrameType.READY) this.connected(h, h.welcomed);
      else return this.drop(h, `unexpected handshake frame type ${frame.type}`);
    }
  }

  /** A HELLO: refused, or answered with a WELCOME naming the connection's new segment. */
  private welcome(h: Handshake, hello: Hello): void {
    const refusal = this.check(hello, h.socket);
    if (refusal) return this.drop(h, refusal.reason, refusal);
    const layout = connLayout(Math.min(this.maxMsgSize, hello.maxMsgSize), this.recvQueueSize, hello.recvQueueSize, 2 * (comchConsumerCapGetMaxConsumers(this.devinfo) + comchProducerCapGetMaxProducers(this.devinfo)));
    const segment = createConnSegment(layout);
    h.welcomed = { segment, hello, layout };
    h.socket.write(encodeWelcome({ pid: self.pid, start: self.start, segment: segment.descriptor, msgSize: layout.msgSize, c2sSlots: layout.c2sSlots, s2cSlots: layout.s2cSlots, connectionId: 0 }));
  }

  /** READY: the connection is established (its event, or a wake-up for whoever waits for it). */
  private connected(h: Handshake, w: Welcomed): void {
    this.finish(h);
    const conn = new ComchConnection(this, 'server', h.socket, w.segment, w.layout, { pid: w.hello.pid, start: w.hello.start });
    this.addConnection(conn);
    this.stat.c[Counter.SERVER.CONNECTIONS] = this.conns.length;
    this.stat.c[Counter.SERVER.ACCEPTED]++;
    this.stat.event(StatEvent.CONNECT, `connection ${conn.id} from pid ${conn.peer.pid}`);
    log.info(`server ${JSON.stringify(this.serverName)}: client pid ${w.hello.pid} connected (connection ${conn.id})`);
    const cb = this.connectCb;
    if (cb) this.statusEvent('connection_established', () => cb(this.event, conn, true));
    else this._wake();
  }

  /** Why a HELLO is refused, or undefined to accept it. */
  private check(h: Hello, socket: Socket): { code: DocaErrorName; reason: string } | undefined {
    const repPci = this.rep.asDevinfo().spec.pci;
    const ownName = Buffer.from(this.nameBytes);
    if (!ownName.equals(Buffer.from(h.name))) return { code: 'DOCA_ERROR_NOT_FOUND', reason: `a client asked for another server name (${h.name.length} bytes)` };
    if (!repPci.equals(h.clientPci)) {
      return { code: 'DOCA_ERROR_NOT_PERMITTED', reason: `a client claiming function ${JSON.stringify(h.clientPci)} knocked; this server serves ${repPci} only` };
    }
    if (!this.devinfo.spec.pci.equals(h.armPci)) return { code: 'DOCA_ERROR_NOT_PERMITTED', reason: `a client looked for Arm device ${JSON.stringify(h.armPci)}, not ${this.devinfo.spec.pci}` };
    if (!Number.isSafeInteger(h.pid) || !Number.isSafeInteger(h.start) || !isAlive({ pid: h.pid, start: h.start })) {
      return { code: 'DOCA_ERROR_INVALID_VALUE', reason: `a client named a process (pid ${h.pid}) that does not run` };
    }
    // The pid (whose start time isAlive just checked) must be the process at the other end of the socket.
    const lie = impostor(socket, h.pid, 'comch server');
    if (lie) return { code: 'DOCA_ERROR_NOT_PERMITTED', reason: `a client's HELLO does not say who it is: ${lie}` };
    const maxMsg = comchCapGetMaxMsgSize(this.devinfo);
    const maxQueue = comchCapGetMaxRecvQueueSize(this.devinfo);
    if (!(h.maxMsgSize >= 1 && h.maxMsgSize <= maxMsg) || !(h.recvQueueSize >= 1 && h.recvQueueSize <= maxQueue)) {
      return { code: 'DOCA_ERROR_INVALID_VALUE', reason: `a client asked for max_msg_size ${h.maxMsgSize} and recv_queue_size ${h.recvQueueSize} (limits ${maxMsg} and ${maxQueue})` };
    }
    const max = comchCapGetMaxClients(this.devinfo);
    if (this.conns.length + this.handshakes.size > max) return { code: 'DOCA_ERROR_CONNECTION_ABORTED', reason: `the server already has its maximum of ${max} clients` };
    return undefined;
  }
}

/** The DOCA error a client gets for a REJECT frame. */
export function rejectError(code: number, reason: string): DocaError {
  const name = docaErrorGetName(code);
  return new DocaError(name.startsWith('DOCA_ERROR_') ? (name as DocaErrorName) : 'CONNECTION_ABORTED', 'comch client', `the server refused the connection: ${reason}`);
}
