/** A comch consumer on the DPA (`doca_comch_msgq_consumer_create` on a MsgQ whose consumers are on a DPA): its CPU side. */
import { ConsumerQueue, MAX_IMM, QUEUE_LAYOUT } from '../comch/consumer-queue.js';
import { CONSUMER as ENTRY_STATE } from '../comch/layout.js';
import { type ComchMsgq, DPA_SIDE } from '../comch/msgq.js';
import { DocaError, describeValue } from '../core/error.js';
import { encodeDescriptor } from '../fabric/segment.js';
import { withdrawPosted } from './consumer-queue.js';
import { BIT_CONSUMER, ObjKind } from './layout.js';
import { CONSUMER } from './objects.js';
import { count, DpaEndpoint, immDataLen, MAX_RECV, msgqDpa } from './comch-endpoint.js';
import { ComchConsumerCompletion } from './consumer-completion.js';

/**
 * A comch consumer on the DPA (`doca_comch_msgq_consumer_create` on a MsgQ whose consumers are on a DPA):
 * the CPU side configures it, DPA code posts receives (`comchConsumerAck`) and takes what arrived.
 *
 * @example
 * ```ts
 * // doca_comch_msgq_consumer_create(msgq, &consumer); doca_ctx_set_datapath_on_dpa(ctx, dpa); doca_comch_consumer_set_completion(...)
 * const consumer = ComchDpaConsumer.create(toDpa);
 * consumer.setDatapathOnDpa(dpa);
 * consumer.setCompletion(cc, 0);
 * consumer.setDevMaxNumRecv(16);
 * consumer.start();
 * const handle = consumer.getDpaHandle(); // DPA code: comchConsumerAck(handle, 16)
 * ```
 */
export class ComchDpaConsumer extends DpaEndpoint {
  private completion: ComchConsumerCompletion | undefined;
  private userData = 0;
  private maxRecv = 0;
  private immLen = MAX_IMM;
  private queue: ConsumerQueue | undefined;

  private constructor(msgq: ComchMsgq, call: string) {
    super(msgq, msgqDpa(msgq, 'consumer', call), ObjKind.CONSUMER, 'consumer', call);
  }

  /** `doca_comch_msgq_consumer_create`, for a MsgQ whose consumers are on a DPA (NOT_PERMITTED otherwise). */
  static create(msgq: ComchMsgq): ComchDpaConsumer {
    return new ComchDpaConsumer(msgq, 'doca_comch_msgq_consumer_create');
  }

  /** `doca_comch_consumer_set_completion`: a started completion context of the same DPA; `userData` is 32 bits. */
  setCompletion(completion: ComchConsumerCompletion, userData = 0): void {
    const call = 'doca_comch_consumer_set_completion';
    this.configurable(call);
    this.requireDatapath(call);
    this.sameDpa(completion, 'ComchConsumerCompletion', call);
    if (!(completion instanceof ComchConsumerCompletion)) throw new DocaError('INVALID_VALUE', call, 'expected a ComchConsumerCompletion');
    if (!completion.isStarted) throw new DocaError('BAD_STATE', call, `${completion.name} is not started; consumers attach only to a started completion context`);
    if (!Number.isInteger(userData) || userData < 0 || userData > 0xffffffff) throw new DocaError('INVALID_VALUE', call, `user data ${describeValue(userData)} is not a u32`);
    this.completion?._users.delete(this);
    this.completion = completion;
    this.userData = userData;
    completion._users.add(this);
  }

  /** `doca_comch_consumer_set_dev_max_num_recv`: receives it can have posted (rounded up to a power of two). */
  setDevMaxNumRecv(n: number): void {
    const call = 'doca_comch_consumer_set_dev_max_num_recv';
    this.configurable(call);
    this.maxRecv = count(call, 'dev_max_num_recv', n, MAX_RECV);
  }

  /** What `doca_comch_consumer_set_dev_max_num_recv` set, rounded up to a power of two (softdpu's: DOCA has no getter). */
  getDevMaxNumRecv(): number {
    return this.maxRecv;
  }

  /** `doca_comch_consumer_set_imm_data_len`: at most its completion context's. */
  setImmDataLen(length: number): void {
    const call = 'doca_comch_consumer_set_imm_data_len';
    this.configurable(call);
    this.immLen = immDataLen(call, length);
  }

  /** `doca_comch_consumer_get_imm_data_len`. */
  getImmDataLen(): number {
    return this.immLen;
  }

  /** @internal receives it holds while started. */
  get _slots(): number {
    return this.maxRecv;
  }

  /** `doca_ctx_start`: RUNNING at once (a MsgQ has nobody to announce it to); no receive is posted yet (`comchConsumerAck`). */
  start(): 'DOCA_SUCCESS' {
    const call = 'doca_ctx_start';
    this.configurable(call);
    const run = this.dpa._running(call);
    this.requireDatapath(call);
    const cc = this.completion;
    if (!cc || cc.isDestroyed) throw new DocaError('BAD_STATE', call, `${this.name} has no consumer completion context (setCompletion)`);
    if (!cc.isStarted) throw new DocaError('BAD_STATE', call, `${cc.name} is not started`);
    if (this.maxRecv === 0) throw new DocaError('BAD_STATE', call, `${this.name} has no number of receives (setDevMaxNumRecv)`);
    if (this.immLen > cc.getImmDataLen()) throw new DocaError('INVALID_VALUE', call, `${this.name} takes ${this.immLen} bytes of immediate data; ${cc.name} only ${cc.getImmDataLen()}`);
    if (!this.table.connected) throw new DocaError('BAD_STATE', call, `${this.msgq.name} was stopped`);
    cc._add(this, this.maxRecv, call);
    const queue = new ConsumerQueue(this.maxRecv, this.immLen);
    const objects = run.objects;
    const v = run.tables.view;
    const start = Atomics.load(queue.segment.i32, QUEUE_LAYOUT.POST_TAIL / 4);
    objects.store(this.index, CONSUMER.CC, cc.index + 1);
    objects.store(this.index, CONSUMER.CC_GEN, objects.generation(cc.index));
    v.setUint32(objects.at(this.index, CONSUMER.USER_DATA), this.userData, true);
    v.setUint32(objects.at(this.index, CONSUMER.SLOTS), queue.slots, true);
    v.setUint32(objects.at(this.index, CONSUMER.IMM_LEN), this.immLen, true);
    v.setUint32(objects.at(this.index, CONSUMER.ID), this.endpointId, true);
    objects.store(this.index, CONSUMER.HEAD, start);
    objects.store(this.index, CONSUMER.RELEASED, start);
    encodeDescriptor(queue.segment.descriptor, v, objects.at(this.index, CONSUMER.QUEUE));
    encodeDescriptor(this.table.segment.descriptor, v, objects.at(this.index, CONSUMER.MSGQ));
    this.setStarted(true);
    this.queue = queue;
    this.table.publishBell(this.entry, this.dpa._euBell(run, cc.index % run.layout.dims.eus, BIT_CONSUMER + this.index, call));
    this.table.request(this.entry, DPA_SIDE, this.immLen, queue.segment.descriptor, queue.segment.descriptor);
    this.table.setState(this.entry, ENTRY_STATE.REGISTERED); // no peer context to relay it
    return 'DOCA_SUCCESS';
  }

  /** `doca_ctx_stop`: producers no longer find it; what was posted is withdrawn. */
  stop(): 'DOCA_SUCCESS' {
    const call = 'doca_ctx_stop';
    this.alive(call);
    if (!this.isStarted) throw new DocaError('BAD_STATE', call, `${this.name} is already IDLE`);
    this.table.setState(this.entry, ENTRY_STATE.CREATED);
    withdrawPosted(this.queue!.segment.i32);
    this.completion?._remove(this);
    this.setStarted(false);
    this.queue!.segment.close();
    this.queue = undefined;
    return 'DOCA_SUCCESS';
  }

  /** @internal the DPA failed: CPU producers find no consumer (NOT_CONNECTED) rather than a queue nobody reads. */
  override _dpaFailed(): void {
    if (!this.queue) return;
    this.table.setState(this.entry, ENTRY_STATE.EXPIRED);
    withdrawPosted(this.queue.segment.i32);
  }

  /** `doca_comch_consumer_destroy`: IDLE first; detaches it from its completion context. */
  destroy(): void {
    const call = 'doca_comch_consumer_destroy';
    if (this.isDestroyed) return;
    if (this.isStarted) throw new DocaError('IN_USE', call, `${this.name} is RUNNING; stop it first`);
    this.releaseEndpoint(call);
    this.completion?._users.delete(this);
    this.completion = undefined;
  }

  /** `doca_comch_consumer_get_dpa_handle`: BAD_STATE before start. */
  getDpaHandle(): bigint {
    return this.dpaHandle('doca_comch_consumer_get_dpa_handle');
  }
}
