/**
 * The comch producer (`struct doca_comch_producer`): sends buffers (and immediate data) to consumers on
 * the other side of the connection. A send copies the payload straight into the consumer's next posted
 * buffer (one copy, like DMA) and completes; with no buffer posted it is refused with AGAIN and nothing
 * changes (resubmit later). No syscall is made per message unless the consumer sleeps.
 */
import type { DocaBuf } from '../core/buf.js';
import { CtxState } from '../core/ctx.js';
import { DocaError } from '../core/error.js';
import type { TaskCompletionCb, TaskConf } from '../core/task.js';
import { copyInto } from '../fabric/copy.js';
import { PeerBell } from '../fabric/doorbell.js';
import { descriptorKey, Segment, type SegmentDescriptor } from '../fabric/segment.js';
import { Counter } from '../fabric/stats.js';
import { sdkLogSource } from '../core/log.js';
import { ComchConnection } from './connection.js';
import { MAX_IMM, QueueView } from './consumer-queue.js';
import { ComchEndpoint } from './endpoint.js';
import { type ProducerSendOptions, producerSend } from './fastpath-adapters.js';
import { CONSUMER } from './layout.js';
import { ComchProducerSendTask } from './producer-task.js';
import type { ComchConnectionRef } from './endpoint-table.js';

/** Its counters' indices, by name (plain constants: a busy path indexes with them as with literals). */
const { AGAIN, SENT, SENT_BYTES } = Counter.PRODUCER;

const log = sdkLogSource('comch_producer');
const NO_DATA = new Uint8Array(0);

interface Target {
  index: number;
  generation: number;
  /** Thrown as is on every AGAIN: flow control on the hot path must not build an Error each time. */
  again: DocaError;
  queue: QueueView;
  memory: Segment;
  /** The consumer's engine, rung once a completion is published. */
  bell: PeerBell;
}

/**
 * Sends to one consumer between two reads of its entry (state, id, generation). A consumer that stops
 * withdraws its posted buffers (docs/protocol.md, Withdraw), so the next send finds none and reads the
 * entry at once (a refusal is only said after it did); only one whose process died with buffers posted
 * takes up to this many sends more, which complete into its queue as they would had they come just
 * before the death. Reading the entry on every send cost a sixth of the 64 B fast-path rate.
 */
export const RECHECK_SENDS = 64;

/**
 * The comch producer, `struct doca_comch_producer` (`doca_comch_producer_create`, a `doca_ctx` through
 * `doca_comch_producer_as_ctx`): the fast path's sender. A send copies the buffer's data straight into the
 * remote consumer's next posted buffer (one copy, like DMA) and completes; with no buffer posted it is
 * refused with AGAIN and nothing changes. It is made on an established connection, in its thread or in a
 * worker (`connection.share()`).
 *
 * @example
 * ```ts
 * // doca_comch_producer_create(conn, &producer); doca_comch_producer_task_send_alloc_init(producer, buf, NULL, 0, consumer_id, &task)
 * let consumerId = 0;
 * server.eventConsumerRegister((event, conn, id) => (consumerId = id), () => {}); // before server.start()
 * // ... once connected, and the peer's consumer was announced:
 * const producer = ComchProducer.create(connection);
 * pe.connectCtx(producer);
 * producer.taskSendSetConf(() => {}, () => {}, 32);
 * producer.start();
 * await producer.send(inv.bufGetByData(mmap, payload), { consumerId, timeoutMs: 1_000 });
 * ```
 */
export class ComchProducer extends ComchEndpoint {
  private readonly targets = new Map<number, Target>();
  /** The target of the last send, its consumer id, and the sends it may make before its entry is read again. */
  private last: Target | undefined;
  private lastId = -1;
  private lastLeft = 0;
  /** What the send task pool calls for a new object (one function, not a closure per allocation). */
  private readonly makeSendTask = (conf: TaskConf): ComchProducerSendTask => new ComchProducerSendTask(this, conf);
  private readonly memories = new Map<string, Segment>();

  private constructor(target: ComchConnection | ComchConnectionRef) {
    super('doca_comch_producer', target, 'producer', 'doca_comch_producer_create');
  }

  /** `doca_comch_producer_create`: on an established connection (BAD_STATE otherwise), here or in a worker. */
  static create(connection: ComchConnection | ComchConnectionRef): ComchProducer {
    return new ComchProducer(connection);
  }

  /** @internal `ComchMsgq.producerCreate`: a producer of immediate data only, on a MsgQ. */
  static _createOnMsgq(ref: ComchConnectionRef): ComchProducer {
    return new ComchProducer(ref);
  }

  /** `doca_comch_producer_destroy`: only while IDLE. */
  destroy(): void {
    this.destroyContext('doca_comch_producer_destroy');
    this.release();
  }

  /** `doca_comch_producer_get_id`: unique within the connection; consumers see it on each receive. */
  getId(): number {
    return this.endpointId;
  }

  /** `doca_comch_producer_task_send_set_conf`. */
  taskSendSetConf(onSuccess: TaskCompletionCb<ComchProducerSendTask>, onError: TaskCompletionCb<ComchProducerSendTask>, numTasks: number): void {
    this.setTaskConf('doca_comch_producer_task_send_set_conf', 'send', onSuccess, onError, numTasks, this.ref.caps.maxNumTasks);
  }

  /**
   * `doca_comch_producer_task_send_alloc_init`: sends `buf`'s data (and `immData`, copied into the task)
   * to the remote consumer `consumerId`. On a MsgQ there is no buffer (pass undefined): immediate data only.
   */
  taskSendAllocInit(buf: DocaBuf | undefined, immData: Uint8Array | undefined, consumerId: number): ComchProducerSendTask {
    const call = 'doca_comch_producer_task_send_alloc_init';
    this.requireRunning(call);
    this._checkSend(call, buf, immData);
    const task = this.allocTask(call, 'send', this.makeSendTask);
    task._init(buf, immData, consumerId);
    return task;
  }

  /**
   * Promise adapter: sends `buf` to `consumerId`, retrying while the consumer has no posted buffer
   * (default: 16 immediate attempts, then 16 one millisecond apart, then AGAIN). Needs this producer's
   * engine progressed (e.g. `pe.run()`).
   */
  send(buf: DocaBuf, options: ProducerSendOptions): Promise<void> {
    return producerSend(this, buf, options);
  }

  /** @internal */
  _checkSend(call: string, buf: DocaBuf | undefined, immData: Uint8Array | undefined): void {
    if (this.ref.msgq) {
      if (buf != null) throw new DocaError('INVALID_VALUE', call, 'a MsgQ producer sends immediate data only: send without a buffer');
    } else if (!buf || typeof buf.getDataLen !== 'function') throw new DocaError('INVALID_VALUE', call, 'expected a DocaBuf');
    else if (buf.getDataLen() > this.ref.caps.maxBufSize) throw new DocaError('INVALID_VALUE', call, `a ${buf.getDataLen()}-byte payload exceeds max_buf_size ${this.ref.caps.maxBufSize}`);
    const max = Math.min(MAX_IMM, this.ref.caps.maxImmDataLen);
    if (immData !== undefined && (!(immData instanceof Uint8Array) || immData.length > max)) {
      throw new DocaError('INVALID_VALUE', call, `immediate data of ${immData?.length} bytes exceeds ${max}`);
    }
  }

  /** @internal the send: claim the consumer's next posted buffer, copy, publish the completion. */
  _send(task: ComchProducerSendTask): void {
    const call = 'doca_task_submit';
    if (!this.table.connected) throw new DocaError('NOT_CONNECTED', call, `connection ${this.ref.id} ended`);
    const consumerId = task.getConsumerId();
    const last = this.last;
    // A refusal through a remembered target is said only once the consumer's entry was read again: the
    // consumer may have stopped (it withdraws its buffers), which is NOT_CONNECTED, not AGAIN.
    if (last !== undefined && this.lastId === consumerId && --this.lastLeft >= 0 && this.deliver(task, last, consumerId, call, false)) return;
    this.deliver(task, this.lookUp(consumerId, call), consumerId, call, true);
  }

  /**
   * Claims the consumer's next posted buffer, copies, publishes the completion: true when sent. A refusal
   * (immediate data too long, nothing posted) changes nothing: thrown when `final`, else false.
   */
  private deliver(task: ComchProducerSendTask, target: Target, consumerId: number, call: string, final: boolean): boolean {
    const imm = task._imm;
    const immMax = this.table.immLen(target.index);
    if (imm.length > immMax) {
      if (!final) return false;
      throw new DocaError('INVALID_VALUE', call, `immediate data of ${imm.length} bytes exceeds consumer ${consumerId}'s imm_data_len ${immMax}`);
    }
    const data = task._buf?.getData() ?? NO_DATA;
    const claim = target.queue.claim(data.length, this.entry + 1);
    if (claim === 'empty') {
      if (!final) return false;
      this.stat.c[AGAIN]!++;
      throw target.again;
    }
    if ('tooSmall' in claim) throw new DocaError('INVALID_VALUE', call, `a ${data.length}-byte payload exceeds consumer ${consumerId}'s next posted buffer (${claim.tooSmall} bytes)`);
    if ('bad' in claim) throw this.hostile(target, consumerId, claim.bad, call);
    copyInto(target.memory.u8, data, claim.offset);
    target.queue.fill(claim.slot, data.length, this.endpointId, imm.get());
    target.bell.ring();
    this.stat.c[SENT]!++;
    this.stat.c[SENT_BYTES]! += data.length;
    this.completeTask(task);
    return true;
  }

  protected _doStart(): boolean {
    if (!this.taskConf('send')) throw new DocaError('BAD_STATE', 'doca_ctx_start', 'set the send task configuration (taskSendSetConf) before starting the producer');
    if (!this.connectionAlive()) throw new DocaError('NOT_CONNECTED', 'doca_ctx_start', `connection ${this.ref.id} ended`);
    this.publish('doca_ctx_start');
    return true;
  }

  /** @internal rung when the connection ends: fail. */
  _pollSource(): boolean {
    if (this.getState() !== CtxState.IDLE) this.pollAlive();
    return false;
  }

  protected override _onIdle(): void {
    for (const t of this.targets.values()) this.forget(t);
    for (const m of this.memories.values()) m.close();
    this.targets.clear();
    this.memories.clear();
  }

  /** target(), remembered for the next RECHECK_SENDS sends to the same consumer. */
  private lookUp(id: number, call: string): Target {
    const target = this.target(id, call);
    this.last = target;
    this.lastId = id;
    this.lastLeft = RECHECK_SENDS;
    return target;
  }

  /** The live remote consumer `id`, mapped (NOT_CONNECTED if it does not exist or expired). */
  private target(id: number, call: string): Target {
    const r = this.table;
    const cached = this.targets.get(id);
    if (cached) {
      const state = r.state(cached.index);
      if (r.id(cached.index) === id && r.generation(cached.index) === cached.generation && (state === CONSUMER.ANNOUNCED || state === CONSUMER.REGISTERED)) return cached;
      this.targets.delete(id);
      this.forget(cached);
    }
    const index = r.find(id);
    const state = index < 0 ? CONSUMER.FREE : r.state(index);
    if (index < 0 || r.side(index) === this.side || (state !== CONSUMER.ANNOUNCED && state !== CONSUMER.REGISTERED)) {
      throw new DocaError('NOT_CONNECTED', call, `there is no live consumer ${id} on the other side of connection ${this.ref.id}`);
    }
    // Both descriptors are the peer's word: the queue must be a consumer queue, and the memory the
    // consumer's own (same owner): a genuine segment of another kind or owner is never written.
    const queueDescriptor = r.queue(index);
    const memoryDescriptor = r.memory(index);
    if (memoryDescriptor.pid !== queueDescriptor.pid) throw new DocaError('CONNECTION_ABORTED', call, `consumer ${id} names memory of pid ${memoryDescriptor.pid} for a queue of pid ${queueDescriptor.pid}`);
    const queueSegment = Segment.open(queueDescriptor, call, ['consumer']);
    const memory = this.memory(memoryDescriptor, call, descriptorKey(memoryDescriptor) === descriptorKey(queueDescriptor) ? ['consumer'] : ['mem']);
    let queue: QueueView;
    try {
      queue = new QueueView(queueSegment, memory.size);
    } catch (err) {
      queueSegment.close();
      log.err(`producer ${this.endpointId}: consumer ${id}: ${(err as Error).message}`);
      throw new DocaError('CONNECTION_ABORTED', call, `consumer ${id} on connection ${this.ref.id}: ${(err as Error).message}`);
    }
    const target: Target = {
      index,
      generation: r.generation(index),
      queue,
      memory,
      again: new DocaError('AGAIN', call, `consumer ${id} has no posted receive buffer; progress and submit again`),
      bell: PeerBell.of(r.endpointBell(index), call),
    };
    this.targets.set(id, target);
    return target;
  }

  /** The consumer wrote what no queue holds: nothing was claimed or written; this send fails. */
  private hostile(target: Target, id: number, what: string, call: string): DocaError {
    log.err(`producer ${this.endpointId}: consumer ${id} on connection ${this.ref.id}: ${what}`);
    this.targets.delete(id);
    this.forget(target);
    return new DocaError('CONNECTION_ABORTED', call, `consumer ${id} on connection ${this.ref.id}: ${what}`);
  }

  /** Closes a target's mappings; a send never goes through it again (nor through `last`). */
  private forget(target: Target): void {
    if (this.last === target) this.last = undefined;
    target.queue.segment.close();
    target.bell.release();
  }

  private memory(d: SegmentDescriptor, call: string, kinds: readonly string[]): Segment {
    const key = descriptorKey(d);
    let seg = this.memories.get(key);
    if (!seg || seg.closed) {
      seg = Segment.open(d, call, kinds);
      this.memories.set(key, seg);
    }
    return seg;
  }
}
