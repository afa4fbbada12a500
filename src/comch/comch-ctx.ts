/**
 * What a comch server and a comch client share: message size and queue depth configuration, the send
 * task pool, the receive and consumer event registrations, and their connections (each one a source
 * of the context, looked at when its peer rings).
 */
import { Context, CtxState } from '../core/ctx.js';
import type { Devinfo } from '../core/devinfo.js';
import { DocaError } from '../core/error.js';
import { Fifo } from '../core/fifo.js';
import { PullIterator } from '../core/pull.js';
import type { TaskCompletionCb, TaskConf } from '../core/task.js';
import type { WaitOptions } from '../core/wait.js';
import { active as faultsActive, faultEvent } from '../fabric/faults/index.js';
import type { SegmentDescriptor } from '../fabric/segment.js';
import {
  comchCapGetMaxMsgSize,
  comchCapGetMaxRecvQueueSize,
  comchCapGetMaxSendTasks,
  comchConsumerCapGetMaxBufSize,
  comchConsumerCapGetMaxConsumers,
  comchConsumerCapGetMaxImmDataLen,
  comchConsumerCapGetMaxNumTasks,
  comchProducerCapGetMaxProducers,
} from './caps.js';
import type { ComchConnectionRef } from './endpoint-table.js';
import type { ComchClient } from './client.js';
import type { ComchConnection } from './connection.js';
import { ComchSendTask } from './send-task.js';
import type { ComchServer } from './server.js';

/** The receive event (`struct doca_comch_event_msg_recv`): names the context it came from. */
export interface ComchEvent {
  /** The server or client whose callback runs. */
  readonly ctx: ComchServer | ComchClient;
}

/**
 * `doca_comch_event_msg_recv_cb_t`: `recvBuffer` is a copy the callback may keep (DOCA's pointer is
 * valid only during the callback). As with Node's small Buffers, a copy of 65 B to 4 KiB is a view into
 * a 64 KiB chunk that other copies share: read it through the view, not its `buffer`.
 */
export type ComchMsgRecvCb = (event: ComchEvent, recvBuffer: Uint8Array, msgLen: number, connection: ComchConnection) => void;

/** `doca_comch_event_consumer_cb_t`: a remote consumer was created or expired. */
export type ComchConsumerEventCb = (event: ComchEvent, connection: ComchConnection, consumerId: number) => void;

/** A message with the connection it came on, as the context-wide iterator yields it. */
export interface ComchMessage {
  connection: ComchConnection;
  data: Uint8Array;
}

/** Default receive queue depth when `set_recv_queue_size` is never called (DOCA does not publish one). */
export const DEFAULT_RECV_QUEUE_SIZE = 64;

export abstract class ComchCtx extends Context {
  protected maxMsgSize: number;
  protected recvQueueSize: number;
  private recvCb: ComchMsgRecvCb | undefined;
  protected consumerNewCb: ComchConsumerEventCb | undefined;
  protected consumerExpiredCb: ComchConsumerEventCb | undefined;
  /** Replaced, never mutated, when connections come and go: a poll walks it without copying. */
  protected conns: readonly ComchConnection[] = [];
  private iterator: PullIterator<ComchMessage> | undefined;
  /** Connections holding messages nobody asked for yet: looked at again when someone does. */
  private readonly parked = new Set<ComchConnection>();
  // Every comch context is a ComchServer or a ComchClient (the only two subclasses).
  protected readonly event: ComchEvent = { ctx: this as unknown as ComchServer | ComchClient };
  /** The hot calls' names, made once (a template string per call would be garbage per message). */
  private readonly sendAllocInitCall: string;
  /** What the send task pool calls for a new object: one function, not a closure per allocation. */
  private readonly makeSendTask = (conf: TaskConf): ComchSendTask => new ComchSendTask(this, conf);
  /** Messages for the receive callback, queued by `_received` in step with its `deliverMessage` events. */
  private readonly recvConns = new Fifo<ComchConnection>();
  private readonly recvData = new Fifo<Uint8Array>();
  /** One queued receive event: the oldest message to the callback (registered before start, so set). */
  private readonly deliverMessage = (): void => {
    const connection = this.recvConns.shift()!;
    const data = this.recvData.shift()!;
    this.recvCb!(this.event, data, data.length, connection);
  };

  protected constructor(
    /** DOCA's prefix for this context's calls, e.g. 'doca_comch_server'. */
    protected readonly prefix: string,
    readonly devinfo: Devinfo,
  ) {
    super(prefix);
    this.sendAllocInitCall = `${prefix}_task_send_alloc_init`;
    this.maxMsgSize = comchCapGetMaxMsgSize(devinfo);
    this.recvQueueSize = Math.min(DEFAULT_RECV_QUEUE_SIZE, comchCapGetMaxRecvQueueSize(devinfo));
  }

  /** `doca_comch_{server,client}_set_max_msg_size`: at most `comchCapGetMaxMsgSize`. */
  setMaxMsgSize(size: number): void {
    const call = `${this.prefix}_set_max_msg_size`;
    this.requireIdle(call);
    const cap = comchCapGetMaxMsgSize(this.devinfo);
    if (!Number.isInteger(size) || size < 1 || size > cap) throw new DocaError('INVALID_VALUE', call, `max_msg_size ${size} is not an integer in [1, ${cap}]`);
    this.maxMsgSize = size;
  }

  /** `doca_comch_{server,client}_get_max_msg_size`: this side's setting (default: the capability). */
  getMaxMsgSize(): number {
    return this.maxMsgSize;
  }

  /** `doca_comch_{server,client}_set_recv_queue_size`: at most `comchCapGetMaxRecvQueueSize`. */
  setRecvQueueSize(size: number): void {
    const call = `${this.prefix}_set_recv_queue_size`;
    this.requireIdle(call);
    const cap = comchCapGetMaxRecvQueueSize(this.devinfo);
    if (!Number.isInteger(size) || size < 1 || size > cap) throw new DocaError('INVALID_VALUE', call, `recv_queue_size ${size} is not an integer in [1, ${cap}]`);
    this.recvQueueSize = size;
  }

  /** `doca_comch_{server,client}_get_recv_queue_size` (default 64, or the capability if smaller). */
  getRecvQueueSize(): number {
    return this.recvQueueSize;
  }

  /** `doca_comch_{server,client}_task_send_set_conf`. */
  taskSendSetConf(onSuccess: TaskCompletionCb<ComchSendTask>, onError: TaskCompletionCb<ComchSendTask>, numSendTasks: number): void {
    this.setTaskConf(`${this.prefix}_task_send_set_conf`, 'send', onSuccess, onError, numSendTasks, comchCapGetMaxSendTasks(this.devinfo));
  }

  /**
   * `doca_comch_{server,client}_task_send_alloc_init`: a send of `message` on `connection`. NO_MEMORY when
   * the pool is exhausted, INVALID_VALUE above the connection's message size, NOT_CONNECTED once it
   * ended. A zero-length message is allowed and arrives as a zero-length receive event.
   */
  taskSendAllocInit(connection: ComchConnection, message: Uint8Array): ComchSendTask {
    const call = this.sendAllocInitCall;
    this.requireRunning(call);
    this._checkMessage(call, connection, message);
    if (!connection.isConnected) throw new DocaError('NOT_CONNECTED', call, `connection ${connection.id} is disconnected`);
    const task = this.allocTask(call, 'send', this.makeSendTask);
    task._init(connection, message);
    return task;
  }

  /** `doca_comch_{server,client}_event_msg_recv_register`. */
  eventMsgRecvRegister(cb: ComchMsgRecvCb): void {
    const call = `${this.prefix}_event_msg_recv_register`;
    this.requireIdle(call);
    if (typeof cb !== 'function') throw new DocaError('INVALID_VALUE', call, 'the callback must be a function');
    this.recvCb = cb;
  }

  /** `doca_comch_{server,client}_event_consumer_register`: the peer created or destroyed a consumer. */
  eventConsumerRegister(newConsumer: ComchConsumerEventCb, expiredConsumer: ComchConsumerEventCb): void {
    const call = `${this.prefix}_event_consumer_register`;
    this.requireIdle(call);
    if (typeof newConsumer !== 'function' || typeof expiredConsumer !== 'function') throw new DocaError('INVALID_VALUE', call, 'both callbacks must be functions');
    this.consumerNewCb = newConsumer;
    this.consumerExpiredCb = expiredConsumer;
  }

  /** The established connections (a client has at most one). */
  get connections(): readonly ComchConnection[] {
    return this.conns;
  }

  /**
   * Every connection's messages as one async iterator of `{ connection, data }` (only without a receive
   * callback; a connection's own iterator takes precedence). Messages leave their queues only while the
   * iterator waits, so `break` loses nothing. Needs the engine progressed (e.g. `pe.run()`).
   */
  messages(options: WaitOptions = {}): AsyncIterableIterator<ComchMessage> {
    this._checkIterable(`${this.prefix} messages`);
    if (this.iterator) throw new DocaError('BAD_STATE', `${this.prefix} messages`, 'the context already has a message iterator');
    const it = new PullIterator<ComchMessage>(
      () => {
        if (this.iterator === it) this.iterator = undefined;
      },
      () => this.unpark(),
      options,
    );
    this.iterator = it;
    return it;
  }

  /**
   * `doca_ctx_stop`: refused with IN_USE while a connection still has producers or consumers on this
   * side (stop and destroy them first, or use `stopTree()`).
   */
  override stop(): ReturnType<Context['stop']> {
    this.checkNoChildren('doca_ctx_stop');
    return super.stop();
  }

  /**
   * Stops a whole tree, children first, as DOCA requires: every producer and consumer made in this thread
   * from these connections is stopped and destroyed; children made in other threads (from a shared
   * reference) are waited for until they are destroyed there; then the context stops. Resolves once it
   * is IDLE; rejects with TIME_OUT after `timeoutMs` (default 10 s). It progresses every engine involved
   * itself (a consumer's stop needs this context's engine too), so no driver needs to run.
   */
  async stopTree(options: WaitOptions = {}): Promise<void> {
    const limit = options.timeoutMs ?? 10_000;
    const deadline = performance.now() + limit;
    const children = this.conns.flatMap((c) => [...c._children]).filter((c) => !c.isDestroyed);
    for (const child of children) if (child.getState() !== CtxState.IDLE && child.getState() !== CtxState.STOPPING) child.stop();
    const engines = new Set([this.pe, ...children.map((c) => c.pe)].filter((e) => e !== undefined));
    const settle = async (done: () => boolean, what: string) => {
      while (!done()) {
        if (options.signal?.aborted) throw options.signal.reason;
        if (performance.now() > deadline) throw new DocaError('TIME_OUT', 'stopTree', `${what} after ${limit} ms`);
        let progressed = false;
        for (const engine of engines) if (engine.progress()) progressed = true;
        if (!progressed) await new Promise<void>((resolve) => setTimeout(resolve, 1));
      }
    };
    await settle(() => children.every((c) => c.getState() === CtxState.IDLE), 'producers or consumers of this thread did not stop');
    for (const child of children) child.destroy();
    await settle(() => !this.conns.some((c) => c.isConnected && c.childCount > 0), 'producers or consumers in other threads still exist');
    if (this.getState() !== CtxState.IDLE) {
      if (this.getState() !== CtxState.STOPPING) this.stop();
      await settle(() => this.getState() === CtxState.IDLE, `${this.name} did not reach IDLE`);
    }
  }

  /**
   * DOCA's mandatory configuration before start: the send task callback. (The receive callback and the
   * server's connection callbacks are mandatory in DOCA too; softdpu lets a program take messages and
   * connections from iterators instead, so it does not ask for them: docs/comch.md.)
   */
  protected checkMandatory(call: string): void {
    if (!this.taskConf('send')) throw new DocaError('BAD_STATE', call, `set the send task configuration (${this.prefix}_task_send_set_conf) before starting`);
  }

  /** Throws IN_USE if `connection` (or any connection) has producers or consumers on this side. */
  protected checkNoChildren(call: string, connection?: ComchConnection): void {
    for (const conn of connection ? [connection] : this.conns) {
      const n = conn.childCount;
      if (conn.isConnected && n > 0) throw new DocaError('IN_USE', call, `connection ${conn.id} still has ${n} producer(s) or consumer(s) on this side; stop and destroy them first`);
    }
  }

  // ---- for connections ----------------------------------------------------------------------------

  /** @internal */
  _shareConnection(connection: ComchConnection, segment: SegmentDescriptor): ComchConnectionRef {
    const d = this.devinfo;
    return {
      segment,
      side: connection.side,
      id: connection.id,
      fabric: d.fabric.dir,
      caps: {
        maxNumTasks: comchConsumerCapGetMaxNumTasks(d),
        maxBufSize: comchConsumerCapGetMaxBufSize(d),
        maxImmDataLen: comchConsumerCapGetMaxImmDataLen(d),
        maxConsumers: comchConsumerCapGetMaxConsumers(d),
        maxProducers: comchProducerCapGetMaxProducers(d),
      },
    };
  }

  /** @internal the peer created or destroyed a consumer on `connection`. */
  _consumerEvent(connection: ComchConnection, id: number, expired: boolean): void {
    const cb = expired ? this.consumerExpiredCb : this.consumerNewCb;
    if (!cb) return;
    const deliver = () => this.queueEvent(() => cb(this.event, connection, id));
    if (faultsActive) faultEvent(this.name, expired ? 'consumer_expired' : 'consumer_new', this, deliver); // lost or delayed
    else deliver();
  }

  /** @internal */
  _checkIterable(call: string): void {
    if (this.recvCb) throw new DocaError('BAD_STATE', call, 'a receive callback is registered: use it or iterators, not both');
  }

  /** @internal */
  _checkMessage(call: string, connection: ComchConnection, message: Uint8Array): void {
    if (connection?._ownerCtx !== this) throw new DocaError('INVALID_VALUE', call, `connection ${connection?.id} does not belong to this ${this.prefix}`);
    if (!(message instanceof Uint8Array)) throw new DocaError('INVALID_VALUE', call, 'the message must be a Uint8Array');
    if (message.length > connection.maxMsgSize) {
      const why = connection.maxMsgSize < this.maxMsgSize ? ` (the smaller of this side's ${this.maxMsgSize} and the peer's setting)` : '';
      throw new DocaError('INVALID_VALUE', call, `a ${message.length}-byte message exceeds the connection's max_msg_size ${connection.maxMsgSize}${why}`);
    }
  }

  /** @internal the context has local work for the engine (an accepted connection, a transition). */
  _wake(): void {
    this.pe?._signal(this);
  }

  /** @internal `connection` holds a message nobody takes now. */
  _park(connection: ComchConnection): void {
    this.parked.add(connection);
  }

  /** @internal a send reached the peer's queue (or failed). */
  _sendDone(task: ComchSendTask, err?: DocaError): void {
    this.completeTask(task, err);
  }

  /** @internal whether someone takes messages from `connection` right now. */
  _listening(connection: ComchConnection): boolean {
    return this.getState() === CtxState.RUNNING && (this.recvCb !== undefined || connection._iterator?.wants === true || this.iterator?.wants === true);
  }

  /** @internal a message arrived: queue the callback, or hand it to the waiting iterator. */
  _received(connection: ComchConnection, data: Uint8Array): void {
    if (this.recvCb) {
      // No closure per message: the pair waits in two queues and one function delivers the oldest.
      this.recvConns.push(connection);
      this.recvData.push(data);
      this.queueEvent(this.deliverMessage);
      return;
    }
    const own = connection._iterator?.claim();
    if (own) {
      this.queueEvent(() => own(data));
      return;
    }
    const shared = this.iterator?.claim();
    if (shared) this.queueEvent(() => shared({ connection, data }));
  }

  /** @internal a connection ended, with the sends it still held back (not yet in the peer's queue). */
  abstract _closed(connection: ComchConnection, reason: DocaError, heldBack: ComchSendTask[]): void;

  // ---- context hooks ------------------------------------------------------------------------------

  protected override _onIdle(): void {
    this.iterator?.end();
    this.iterator = undefined;
  }

  /** Adds an established connection: a source of this context, whose bell its peer rings. */
  protected addConnection(connection: ComchConnection): void {
    this.conns = [...this.conns, connection];
    connection._publish(this.addSource(connection, `${this.prefix} connection`));
  }

  /** Forgets a finished connection. */
  protected removeConnection(connection: ComchConnection): void {
    this.conns = this.conns.filter((c) => c !== connection);
    this.parked.delete(connection);
    this.removeSource(connection);
  }

  /** A message iterator asks for a message: look again at the connections that held one back. */
  private unpark(): void {
    for (const connection of this.parked) this._sourceReady(connection);
    this.parked.clear();
  }
}
