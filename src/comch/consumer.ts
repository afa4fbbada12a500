/**
 * The comch consumer (`struct doca_comch_consumer`): posts receive buffers of a memory map with PCI
 * read/write permission; producers on the other side of the connection fill them directly (one copy,
 * like DMA) and complete them with the length, immediate data and their id.
 *
 * Start is asynchronous: STARTING until the consumer's side's comch context (its engine must be
 * progressed) has announced it to the peer and the peer has registered it; the peer's new-consumer event
 * fires then. Stopping announces its expiry the same way; the consumer stays STOPPING until it is sent.
 * Producers ring the consumer's engine when they fill a buffer; a sleeping consumer costs them one write.
 *
 * Nothing delivered is lost when the consumer stops or its connection ends: buffers producers already
 * filled complete successfully, and buffers a producer claimed but is still filling are waited for
 * (they complete when filled, or fail if that producer's thread dies) before the rest are flushed. A
 * producer that died holding a claim does not wedge the queue: its buffer is posted again. What a
 * producer writes is checked against what was posted; a violation fails the consumer with
 * CONNECTION_ABORTED.
 *
 * On a MsgQ (msgq.ts) the consumer has no memory map: its receives carry immediate data only, and it
 * registers itself (start returns RUNNING at once; stop needs no announcement).
 */
import type { DocaBuf } from '../core/buf.js';
import { CtxState } from '../core/ctx.js';
import { DocaError, describeValue } from '../core/error.js';
import { Fifo } from '../core/fifo.js';
import { AccessFlag, type Mmap } from '../core/mmap.js';
import { sdkLogSource } from '../core/log.js';
import { lookDue } from '../core/pe.js';
import type { Task, TaskCompletionCb, TaskConf } from '../core/task.js';
import type { WaitOptions } from '../core/wait.js';
import { ComchConnection } from './connection.js';
import { CLAIM_LOOK_POLLS, ConsumerQueue } from './consumer-queue.js';
import { ComchConsumerPostRecvTask } from './post-recv-task.js';
import { ComchEndpoint } from './endpoint.js';
import { type ComchReceived, consumerMessages } from './fastpath-adapters.js';
import { CONSUMER } from './layout.js';
import { livenessPasses } from '../fabric/liveness.js';
import { Counter } from '../fabric/stats.js';
import { SEGMENT_HEADER_SIZE } from '../fabric/segment.js';
import type { ComchConnectionRef } from './endpoint-table.js';

/** Its counters' indices, by name (plain constants: a busy path indexes with them as with literals). */
const { POSTED, RECEIVED, RECEIVED_BYTES } = Counter.CONSUMER;

const log = sdkLogSource('comch_consumer');
/** A claim whose producer never said who it is (it died between claiming and writing its name). */
const ANONYMOUS_CLAIM_MS = 1000;
/** claimDead's tick, and the ticks after which an anonymous claim is dead (ANONYMOUS_TICKS - 1 whole ticks >= ANONYMOUS_CLAIM_MS). */
const ANONYMOUS_TICK_MS = 250;
const ANONYMOUS_TICKS = ANONYMOUS_CLAIM_MS / ANONYMOUS_TICK_MS + 1;
/** Looks at claims of one producer that claimDead answers from its last "alive" before it asks again. */
const CLAIMER_LOOKS = 4096;

/**
 * The comch consumer, `struct doca_comch_consumer` (`doca_comch_consumer_create`, a `doca_ctx` through
 * `doca_comch_consumer_as_ctx`): the fast path's receiver. It posts receive buffers of a memory map with
 * PCI read/write permission, and producers on the other side of the connection fill them directly.
 * `start()` leaves it STARTING until the peer has registered it (its new-consumer event fires then);
 * nothing already delivered is lost when it stops.
 *
 * @example
 * ```ts
 * // doca_comch_consumer_create(conn, mmap, &consumer); doca_comch_consumer_task_post_recv_alloc_init(consumer, buf, &task)
 * const consumer = ComchConsumer.create(connection, mmap); // mmap over allocSharedMemory(), PCI_READ_WRITE
 * pe.connectCtx(consumer);
 * consumer.taskPostRecvSetConf(() => {}, () => {}, 16);
 * consumer.start();
 * await consumer.waitForState('RUNNING', { timeoutMs: 5_000 }); // the peer registered it
 * const bufs = [0, 1, 2, 3].map((i) => inv.bufGetByAddr(mmap, mmap.getMemrange().subarray(i * 1024, (i + 1) * 1024)));
 * for await (const { data, producerId } of consumer.messages(bufs)) console.log(producerId, data.length);
 * ```
 */
export class ComchConsumer extends ComchEndpoint {
  private immLen = 0;
  private queue: ConsumerQueue | undefined;
  /** Byte offset of the map's memory in its segment, fixed while started. */
  private memoryOffset = 0;
  private readonly posted = new Fifo<ComchConsumerPostRecvTask>();
  /** What the post-recv task pool calls for a new object (one function, not a closure per allocation). */
  private readonly makePostRecvTask = (conf: TaskConf): ComchConsumerPostRecvTask => new ComchConsumerPostRecvTask(this, conf);
  private registered = false;
  /** Posted tasks a producer claimed before the stop: they complete when filled, not with the flush. */
  private readonly held = new Set<ComchConsumerPostRecvTask>();
  /** claimDead's clock for anonymous claims: the position being timed, the tick it was first seen at, ticks so far. */
  private anonymousAt: number | undefined;
  private anonymousSince = 0;
  private anonymousTicks = 0;
  private anonymousTimer: NodeJS.Timeout | undefined;
  /** One tick: time passes for the claim being timed; look at it again; tick on while there is one. */
  private readonly anonymousTick = (): void => {
    this.anonymousTicks++;
    if (this.anonymousAt === undefined) {
      this.anonymousTimer = undefined;
      return;
    }
    this._sourceReady(this);
    this.anonymousTimer!.refresh();
  };
  /** The last claimer found alive, and in which liveness pass (claimDead). */
  private aliveClaimer = 0;
  private aliveClaimerPass = 0;
  private aliveClaimerLooks = 0;
  /** Polls that found the head unfilled (giveUpDeadClaim's cadence while the engine never slept). */
  private unfilledPolls = 0;

  private constructor(
    target: ComchConnection | ComchConnectionRef,
    /** The memory map its receive buffers come from (none on a MsgQ). */
    readonly mmap: Mmap | undefined,
  ) {
    super('doca_comch_consumer', target, 'consumer', 'doca_comch_consumer_create');
  }

  /**
   * `doca_comch_consumer_create`: on an established connection (BAD_STATE otherwise), in this thread
   * (`connection`) or a worker (`connection.share()`). The map must be started with PCI_READ_WRITE
   * permission (INVALID_VALUE otherwise): the peer's producers write into it.
   */
  static create(connection: ComchConnection | ComchConnectionRef, mmap: Mmap): ComchConsumer {
    const call = 'doca_comch_consumer_create';
    if (!mmap?.isStarted) throw new DocaError('INVALID_VALUE', call, 'the memory map must be started');
    if (!(mmap.getPermissions() & AccessFlag.PCI_READ_WRITE)) {
      throw new DocaError('INVALID_VALUE', call, `${mmap.name} lacks PCI_READ_WRITE permission; producers on the other side write into it`);
    }
    return new ComchConsumer(connection, mmap);
  }

  /** @internal `ComchMsgq.consumerCreate`: a consumer of immediate data only, on a MsgQ. */
  static _createOnMsgq(ref: ComchConnectionRef): ComchConsumer {
    return new ComchConsumer(ref, undefined);
  }

  /** `doca_comch_consumer_destroy`: only while IDLE. Its id is never reused on this connection. */
  destroy(): void {
    this.destroyContext('doca_comch_consumer_destroy');
    this.release();
  }

  /** `doca_comch_consumer_get_id`: unique within the connection; producers address the consumer by it. */
  getId(): number {
    return this.endpointId;
  }

  /** `doca_comch_consumer_set_imm_data_len`: immediate bytes this consumer accepts (at most the capability). */
  setImmDataLen(length: number): void {
    const call = 'doca_comch_consumer_set_imm_data_len';
    this.requireIdle(call);
    const max = this.ref.caps.maxImmDataLen;
    if (!Number.isInteger(length) || length < 0 || length > max) throw new DocaError('INVALID_VALUE', call, `imm_data_len ${length} is not an integer in [0, ${max}]`);
    this.immLen = length;
  }

  /** `doca_comch_consumer_get_imm_data_len`. */
  getImmDataLen(): number {
    return this.immLen;
  }

  /** `doca_comch_consumer_task_post_recv_set_conf`. */
  taskPostRecvSetConf(onSuccess: TaskCompletionCb<ComchConsumerPostRecvTask>, onError: TaskCompletionCb<ComchConsumerPostRecvTask>, numTasks: number): void {
    this.setTaskConf('doca_comch_consumer_task_post_recv_set_conf', 'post_recv', onSuccess, onError, numTasks, this.ref.caps.maxNumTasks);
  }

  /**
   * `doca_comch_consumer_task_post_recv_alloc_init`: `buf` must lie in the consumer's map (INVALID_VALUE);
   * on a MsgQ there is no buffer (pass none): the receive takes immediate data only.
   */
  taskPostRecvAllocInit(buf?: DocaBuf): ComchConsumerPostRecvTask {
    const call = 'doca_comch_consumer_task_post_recv_alloc_init';
    this.requireRunning(call);
    this._checkBuf(call, buf);
    const task = this.allocTask(call, 'post_recv', this.makePostRecvTask);
    task._init(buf);
    return task;
  }

  /**
   * Async iterator of completed receives: posts `bufs`, yields each receive in the order posted, reposts
   * a buffer when the next one is asked for. Needs this consumer's engine progressed (e.g. `pe.run()`).
   */
  messages(bufs: DocaBuf[], options: WaitOptions = {}): AsyncIterableIterator<ComchReceived> {
    return consumerMessages(this, bufs, options);
  }

  /** @internal */
  _checkBuf(call: string, buf: DocaBuf | undefined): void {
    if (!this.mmap) {
      if (buf != null) throw new DocaError('INVALID_VALUE', call, `a MsgQ consumer receives immediate data only: post receives without a buffer (got ${describeValue(buf)})`);
      return;
    }
    if (!buf || buf.getMmap() !== this.mmap) throw new DocaError('INVALID_VALUE', call, `the buffer is not in the consumer's memory map (${this.mmap.name})`);
    if (buf.getLen() > this.ref.caps.maxBufSize) throw new DocaError('INVALID_VALUE', call, `a ${buf.getLen()}-byte buffer exceeds max_buf_size ${this.ref.caps.maxBufSize}`);
  }

  /** @internal a post-receive task was submitted: offer its buffer to the producers. */
  _post(task: ComchConsumerPostRecvTask): void {
    const buf = task._buf;
    if (!buf) {
      this.queue!.post(SEGMENT_HEADER_SIZE, 0); // immediate data only: nothing to write into
      this.posted.push(task);
      return;
    }
    buf._check('doca_task_submit');
    this.queue!.post(this.memoryOffset + buf._headOffset, buf.getLen());
    this.posted.push(task);
    this.stat.c[POSTED]!++;
  }

  protected _doStart(): boolean {
    const conf = this.taskConf('post_recv');
    if (!conf) throw new DocaError('BAD_STATE', 'doca_ctx_start', 'set the post-receive task configuration (taskPostRecvSetConf) before starting the consumer');
    const where = this.mmap?._location();
    if (this.mmap && !where) throw new DocaError('INVALID_VALUE', 'doca_ctx_start', `${this.mmap.name} is not in shared memory`);
    if (!this.connectionAlive()) throw new DocaError('NOT_CONNECTED', 'doca_ctx_start', `connection ${this.ref.id} ended`);
    this.publish('doca_ctx_start');
    this.queue = new ConsumerQueue(conf.capacity, this.immLen);
    this.memoryOffset = where?.offset ?? 0;
    this.registered = false;
    // A MsgQ consumer's receives hold no bytes: its queue segment stands in as the (empty) memory.
    this.table.request(this.entry, this.side, this.immLen, this.queue.segment.descriptor, (where?.segment ?? this.queue.segment).descriptor);
    if (!this.ref.msgq) return false;
    this.table.setState(this.entry, CONSUMER.REGISTERED); // no peer context to relay it
    this.registered = true;
    return true;
  }

  protected override _doStop(): void {
    super._doStop();
    const q = this.queue;
    if (q) {
      this.takeFilled(q); // delivered before the stop: they complete successfully
      const claimed = q.withdraw();
      for (let i = 0; i < claimed; i++) this.held.add(this.posted.shift()!);
      this.posted.drain();
    }
    if (this.ref.msgq) {
      if (this.table.connected) this.table.setState(this.entry, CONSUMER.EXPIRED);
    } else if (this.table.connected) {
      for (let state = this.table.state(this.entry); ; state = this.table.state(this.entry)) {
        if (state === CONSUMER.CREATED || state === CONSUMER.EXPIRING || state === CONSUMER.EXPIRED) break;
        if (this.table.casState(this.entry, state, CONSUMER.EXPIRING)) {
          this.table.ringOwner(this.side);
          break;
        }
      }
    }
  }

  protected override _holdsOnStop(task: Task): boolean {
    return this.held.has(task as ComchConsumerPostRecvTask);
  }

  protected override _stopComplete(): boolean {
    if (this.held.size > 0) return false;
    const state = this.table.connected ? this.table.state(this.entry) : CONSUMER.EXPIRED;
    return state === CONSUMER.EXPIRED || state === CONSUMER.CREATED;
  }

  protected override _onIdle(): void {
    clearTimeout(this.anonymousTimer);
    this.anonymousTimer = undefined;
    this.anonymousAt = undefined;
    if (this.table.connected) this.table.setState(this.entry, CONSUMER.CREATED);
    this.queue?.segment.close();
    this.queue = undefined;
  }

  /** @internal its registration, and the buffers producers filled (completed in the order posted). */
  _pollSource(): boolean {
    const state = this.getState();
    if (state === CtxState.IDLE) return false;
    const q = this.queue;
    if (state === CtxState.STOPPING) {
      if (q && this.held.size > 0) this.finishHeld(q);
      return false;
    }
    if (!this.pollAlive()) return false;
    if (state === CtxState.STARTING && !this.registered && this.table.state(this.entry) === CONSUMER.REGISTERED) {
      this.registered = true;
      this.startCompleted();
    }
    if (state !== CtxState.RUNNING || !q) return false;
    this.takeFilled(q);
    if (q.outstanding > 0 && lookDue(this.pe, ++this.unfilledPolls, CLAIM_LOOK_POLLS)) this.giveUpDeadClaim(q);
    return false;
  }

  /** Completes every filled buffer at the head of the queue (a bad one fails the consumer, unread). */
  private takeFilled(q: ConsumerQueue): void {
    for (let filled = q.filled(); filled; filled = q.filled()) {
      if (filled.bad) {
        if (this.getState() === CtxState.RUNNING) this.violation(filled.bad);
        return;
      }
      const task = this.posted.shift()!;
      task._received(filled, q.view);
      q.release();
      this.completeTask(task);
      this.stat.c[RECEIVED]!++;
      this.stat.c[RECEIVED_BYTES]! += filled.length;
    }
  }

  /** Stopping: the claimed buffers complete as their producers fill them, or fail if those died. */
  private finishHeld(q: ConsumerQueue): void {
    for (const task of this.held) {
      const filled = q.filled();
      if (filled && !filled.bad) {
        task._received(filled, q.view);
        this.completeTask(task);
      } else if (filled || this.claimDead(q)) {
        if (filled) log.err(`consumer ${this.endpointId}: ${filled.bad}`);
        this.completeTask(task, this.flushError);
      } else {
        return; // still being filled by a live producer, which rings when it is done
      }
      q.release();
      this.held.delete(task);
    }
  }

  /** Running: a buffer whose claimer died is posted again (its task stays outstanding). */
  private giveUpDeadClaim(q: ConsumerQueue): void {
    if (!this.claimDead(q)) return;
    log.warn(`consumer ${this.endpointId}: the producer that claimed a posted buffer is gone; posting the buffer again`);
    const task = this.posted.shift()!;
    q.release();
    this._post(task);
  }

  /**
   * Whether the buffer at the head was claimed by a producer that is gone: its thread died, or it never
   * wrote its name within ANONYMOUS_CLAIM_MS (it died between the claim and the name).
   */
  private claimDead(q: ConsumerQueue): boolean {
    const claimer = q.claimedBy();
    if (claimer === undefined) {
      this.anonymousAt = undefined;
      return false;
    }
    if (claimer > 0) {
      // A claim mostly lasts microseconds, and a busy consumer looks at the head on every poll: an
      // "alive" answer is kept until the thread's next liveness pass (at most LIVENESS_INTERVAL_MS; a
      // thread that watches nothing makes none, so also for at most CLAIMER_LOOKS looks), so a poll reads
      // no clock and builds no owner object. Only "alive" is kept: an entry that died may be reused by a
      // live producer at once.
      if (claimer === this.aliveClaimer && livenessPasses() === this.aliveClaimerPass && ++this.aliveClaimerLooks < CLAIMER_LOOKS) return false;
      const alive = claimer - 1 < this.table.layout.entries && this.table.ownerAlive(claimer - 1);
      this.aliveClaimer = alive ? claimer : 0;
      this.aliveClaimerPass = livenessPasses();
      this.aliveClaimerLooks = 0;
      return !alive;
    }
    // Anonymous (claimed, not yet named): a producer between its claim and its name, for nanoseconds,
    // unless it died there. A busy consumer on a loaded machine catches producers in that window often,
    // so a poll reads no clock and arms no timer per claim: a tick every ANONYMOUS_TICK_MS, running
    // only while some claim was seen anonymous, counts time and looks again; the claim at one position
    // still anonymous ANONYMOUS_TICKS ticks after it was first seen (>= ANONYMOUS_CLAIM_MS) is dead.
    const at = q.headPosition;
    if (this.anonymousAt !== at) {
      this.anonymousAt = at;
      this.anonymousSince = this.anonymousTicks;
      if (!this.anonymousTimer) this.anonymousTimer = setTimeout(this.anonymousTick, ANONYMOUS_TICK_MS).unref();
      return false;
    }
    if (this.anonymousTicks - this.anonymousSince < ANONYMOUS_TICKS) return false;
    this.anonymousAt = undefined;
    return true;
  }

  /** A producer wrote something no posted buffer allows: the consumer fails, nothing is read. */
  private violation(what: string): void {
    log.err(`consumer ${this.endpointId} on connection ${this.ref.id}: ${what}; failing the consumer`);
    this.fail(new DocaError('CONNECTION_ABORTED', 'doca_comch_consumer', `consumer ${this.endpointId}: ${what}`));
  }
}
