/**
 * Comch MsgQ endpoints whose data path is on the DPA, the CPU side of them: the consumer completion
 * context (`doca_comch_consumer_completion`), DPA consumers (CPU -> DPA) and DPA producers (DPA -> CPU).
 * DPA code drives them with the device API (dev/comch-msgq.ts).
 *
 * A DPA consumer's receive queue is a consumer queue segment (comch/consumer-queue.ts) published in the
 * MsgQ's endpoint table like any consumer's, so the CPU's ComchProducer sends to it unchanged; its bell
 * reference names an EU's bell, whose bit for this consumer tells the EU to look at its completion
 * context. A DPA producer finds the CPU consumers in the same table and fills their queues.
 *
 * DOCA's mandatory configuration is enforced at start (BAD_STATE naming what is missing): the data
 * path on the MsgQ's DPA, a started consumer completion context (consumer) or an attached DPA
 * completion (producer), and the number of receives or sends (rounded up to a power of two).
 */
import { ConsumerQueue, QUEUE_LAYOUT } from '../comch/consumer-queue.js';
import { CONSUMER as ENTRY_STATE } from '../comch/layout.js';
import { type ComchMsgq, DPA_SIDE, type MsgqDpa } from '../comch/msgq.js';
import { attach, detach, type EndpointTable } from '../comch/endpoint-table.js';
import { DocaError, describeValue } from '../core/error.js';
import { encodeDescriptor } from '../fabric/segment.js';
import { startPosition } from '../fabric/positions.js';
import { DpaCompletion, ThreadAttached } from './completion.js';
import { withdrawPosted } from './consumer-queue.js';
import { Dpa } from './dpa.js';
import { BIT_CONSUMER, ObjKind } from './layout.js';
import { DpaObject } from './object.js';
import { CONSUMER, CONSUMER_COMPLETION, PRODUCER, RETURNED_SIZE } from './objects.js';
import type { DpaThread } from './thread.js';

const MAX_IMM = 32;
const MAX_RECV = 1 << 16;
const pow2 = (n: number) => 2 ** Math.ceil(Math.log2(n));

function count(call: string, what: string, n: number, max: number): number {
  if (!Number.isInteger(n) || n < 1 || n > max) throw new DocaError('INVALID_VALUE', call, `${what} ${describeValue(n)} is not an integer in [1, ${max}]`);
  return pow2(n);
}

/** An immediate data length: an integer in [0, MAX_IMM], else INVALID_VALUE naming it. */
function immDataLen(call: string, length: number): number {
  if (!Number.isInteger(length) || length < 0 || length > MAX_IMM) throw new DocaError('INVALID_VALUE', call, `imm_data_len ${describeValue(length)} is not an integer in [0, ${MAX_IMM}]`);
  return length;
}

/** The DPA a MsgQ's DPA side is on, or NOT_PERMITTED when that side of this MsgQ is the CPU. */
function msgqDpa(msgq: ComchMsgq, side: 'consumer' | 'producer', call: string): Dpa {
  const dpa: MsgqDpa | undefined = side === 'consumer' ? msgq?.getDpaConsumer() : msgq?.getDpaProducer();
  if (!(dpa instanceof Dpa)) {
    const other = side === 'consumer' ? 'producers' : 'consumers';
    throw new DocaError('NOT_PERMITTED', call, `the ${side}s of ${msgq?.name ?? 'this MsgQ'} are on the CPU${msgq?.[side === 'consumer' ? 'getDpaProducer' : 'getDpaConsumer']() ? ` (its ${other} are on the DPA: it carries the other direction)` : ''}; set_dpa_${side} before start`);
  }
  return dpa;
}

/**
 * `struct doca_comch_consumer_completion`: where DPA consumers' receives complete, for one DPA thread.
 *
 * @example
 * ```ts
 * // doca_comch_consumer_completion_create(dpa, &cc); doca_comch_consumer_completion_set_dpa_thread(cc, thread); ..._start(cc)
 * const cc = ComchConsumerCompletion.create(dpa);
 * cc.setDpaThread(thread);
 * cc.setMaxNumConsumers(1);
 * cc.setMaxNumRecv(64);
 * cc.start();
 * thread.setFuncArg('onReceive', cc.getDpaHandle()); // DPA code: comchConsumerGetCompletion(cc)
 * ```
 */
export class ComchConsumerCompletion extends ThreadAttached {
  private maxConsumers = 1;
  private maxRecv = 1;
  private immLen = MAX_IMM;
  private list: number | undefined;
  private returned: number | undefined;

  private constructor(dpa: Dpa) {
    super(dpa, ObjKind.CONSUMER_COMPLETION, 'doca_comch_consumer_completion_create');
  }

  /** `doca_comch_consumer_completion_create` (on the DPA its thread runs on). */
  static create(dpa: Dpa): ComchConsumerCompletion {
    return new ComchConsumerCompletion(dpa);
  }

  /** `doca_comch_consumer_completion_set_dpa_thread`: the thread its completions activate. */
  setDpaThread(thread: DpaThread): void {
    this.attach(thread, 'doca_comch_consumer_completion_set_dpa_thread');
  }

  /** `doca_comch_consumer_completion_get_dpa_thread`: undefined until set. */
  getDpaThread(): DpaThread | undefined {
    return this.thread;
  }

  /** `doca_comch_consumer_completion_set_max_num_consumers` (rounded up to a power of two). */
  setMaxNumConsumers(n: number): void {
    const call = 'doca_comch_consumer_completion_set_max_num_consumers';
    this.configurable(call);
    this.maxConsumers = count(call, 'max_num_consumers', n, 1 << 10);
  }

  /** `doca_comch_consumer_completion_get_max_num_consumers`. */
  getMaxNumConsumers(): number {
    return this.maxConsumers;
  }

  /** `doca_comch_consumer_completion_set_max_num_recv`: across its consumers (rounded up to a power of two). */
  setMaxNumRecv(n: number): void {
    const call = 'doca_comch_consumer_completion_set_max_num_recv';
    this.configurable(call);
    this.maxRecv = count(call, 'max_num_recv', n, MAX_RECV);
  }

  /** `doca_comch_consumer_completion_get_max_num_recv`. */
  getMaxNumRecv(): number {
    return this.maxRecv;
  }

  /** `doca_comch_consumer_completion_set_imm_data_len`: at least every attached consumer's (at most 32). */
  setImmDataLen(length: number): void {
    const call = 'doca_comch_consumer_completion_set_imm_data_len';
    this.configurable(call);
    this.immLen = immDataLen(call, length);
  }

  /** `doca_comch_consumer_completion_get_imm_data_len`. */
  getImmDataLen(): number {
    return this.immLen;
  }

  /** `doca_comch_consumer_completion_start`: consumers attach only while it is started. */
  start(): void {
    const call = 'doca_comch_consumer_completion_start';
    this.configurable(call);
    const r = this.dpa._running(call);
    if (!this.thread) throw new DocaError('BAD_STATE', call, `${this.name} has no DPA thread (setDpaThread)`);
    this.list ??= r.arena.alloc(this.maxConsumers * 8);
    this.returned ??= r.arena.alloc(this.maxRecv * RETURNED_SIZE);
    if (this.list === undefined || this.returned === undefined) throw new DocaError('NO_MEMORY', call, `the DPA has no room for ${this.name}'s lists`);
    r.segment.u8.fill(0, this.list, this.list + this.maxConsumers * 8);
    const o = r.objects;
    const v = r.view.view;
    v.setUint32(o.at(this.index, CONSUMER_COMPLETION.MAX_CONSUMERS), this.maxConsumers, true);
    v.setUint32(o.at(this.index, CONSUMER_COMPLETION.MAX_RECV), this.maxRecv, true);
    v.setUint32(o.at(this.index, CONSUMER_COMPLETION.IMM_LEN), this.immLen, true);
    v.setUint32(o.at(this.index, CONSUMER_COMPLETION.LIST), this.list, true);
    v.setUint32(o.at(this.index, CONSUMER_COMPLETION.RETURNED), this.returned, true);
    // Positions start where every ring's do (fabric/positions.ts), so a soak can bring the wrap forward.
    for (const f of [CONSUMER_COMPLETION.RET_HEAD, CONSUMER_COMPLETION.RET_TAIL]) o.store(this.index, f, startPosition());
    o.store(this.index, CONSUMER_COMPLETION.CURSOR, 0);
    this.publishThread();
    this.setStarted(true);
  }

  /** `doca_comch_consumer_completion_stop`: refused (IN_USE) while consumers are attached. */
  stop(): void {
    const call = 'doca_comch_consumer_completion_stop';
    this.alive(call);
    if (!this.isStarted) throw new DocaError('BAD_STATE', call, `${this.name} is not started`);
    if (this._users.size > 0) throw new DocaError('IN_USE', call, `${[...this._users].map((u) => u.name).join(', ')} still attached to ${this.name}; destroy them first`);
    this.setStarted(false);
  }

  /** `doca_comch_consumer_completion_destroy`: stopped first. */
  destroy(): void {
    const call = 'doca_comch_consumer_completion_destroy';
    if (this.isDestroyed) return;
    if (this.isStarted) throw new DocaError('BAD_STATE', call, `${this.name} is started; stop it first`);
    this.destroyObject(call);
    if (this.dpa.isStarted) for (const at of [this.list, this.returned]) if (at !== undefined) this.dpaRun.arena.free(at);
    this.list = this.returned = undefined;
    this.detach();
  }

  /** `doca_comch_consumer_completion_get_dpa_handle`: BAD_STATE before start. */
  getDpaHandle(): bigint {
    return this.dpaHandle('doca_comch_consumer_completion_get_dpa_handle');
  }

  /** @internal a consumer starts: it takes a free place in the list (NO_MEMORY beyond max consumers). */
  _add(consumer: ComchDpaConsumer, slots: number, call: string): void {
    const r = this.dpaRun;
    let used = 0;
    for (const u of this._users) if (u instanceof ComchDpaConsumer && u !== consumer && u.isStarted) used += u._slots;
    if (used + slots > this.maxRecv) throw new DocaError('NO_MEMORY', call, `${this.name} takes ${this.maxRecv} receives; its consumers already have ${used}, this one wants ${slots}`);
    const i32 = r.view.i32;
    for (let i = 0; i < this.maxConsumers; i++) {
      const at = (this.list! + i * 8) / 4;
      if (Atomics.load(i32, at) !== 0) continue;
      Atomics.store(i32, at + 1, r.objects.generation(consumer.index));
      Atomics.store(i32, at, consumer.index + 1);
      return;
    }
    throw new DocaError('NO_MEMORY', call, `${this.name} already has its maximum of ${this.maxConsumers} started consumers`);
  }

  /** @internal a consumer stops. */
  _remove(consumer: ComchDpaConsumer): void {
    const i32 = this.dpaRun.view.i32;
    for (let i = 0; i < this.maxConsumers; i++) {
      const at = (this.list! + i * 8) / 4;
      if (Atomics.load(i32, at) === consumer.index + 1) Atomics.store(i32, at, 0);
    }
  }
}

/** What DPA consumers and producers share: a MsgQ endpoint table entry, and the DPA data path. */
abstract class DpaEndpoint extends DpaObject {
  protected readonly table: EndpointTable;
  protected readonly entry: number;
  protected readonly endpointId: number;
  private datapath: Dpa | undefined;

  protected constructor(
    readonly msgq: ComchMsgq,
    dpa: Dpa,
    kind: number,
    role: 'consumer' | 'producer',
    call: string,
  ) {
    super(dpa, kind, call);
    const ref = msgq._started(call);
    this.table = attach(ref, call);
    try {
      const max = role === 'consumer' ? ref.caps.maxConsumers : ref.caps.maxProducers;
      ({ index: this.entry, id: this.endpointId } = this.table.reserve(DPA_SIDE, role, max, call));
    } catch (err) {
      detach(this.table);
      this.destroyObject(call);
      throw err;
    }
  }

  /** `doca_ctx_set_datapath_on_dpa`: mandatory; the DPA must be the MsgQ's. */
  setDatapathOnDpa(dpa: Dpa): void {
    const call = 'doca_ctx_set_datapath_on_dpa';
    this.configurable(call);
    if (dpa !== this.dpa) throw new DocaError('INVALID_VALUE', call, `${describeValue(dpa)} is not ${this.dpa.name}, the DPA of ${this.msgq.name}`);
    this.datapath = dpa;
  }

  /** `doca_comch_consumer_get_id` / `doca_comch_producer_get_id`: unique within the MsgQ. */
  getId(): number {
    return this.endpointId;
  }

  /** `doca_ctx_get_state`, as a name. */
  get state(): 'IDLE' | 'RUNNING' {
    return this.isStarted ? 'RUNNING' : 'IDLE';
  }

  protected requireDatapath(call: string): void {
    if (!this.datapath) throw new DocaError('BAD_STATE', call, `${this.name}'s data path is not on the DPA (setDatapathOnDpa)`);
  }

  /** Frees the table entry and the object (destroy). */
  protected releaseEndpoint(call: string): void {
    this.destroyObject(call);
    this.table.release(this.entry);
    detach(this.table);
  }
}

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

  /** `doca_comch_consumer_get_dev_max_num_recv`: as set, rounded up to a power of two. */
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
    const r = this.dpa._running(call);
    this.requireDatapath(call);
    const cc = this.completion;
    if (!cc || cc.isDestroyed) throw new DocaError('BAD_STATE', call, `${this.name} has no consumer completion context (setCompletion)`);
    if (!cc.isStarted) throw new DocaError('BAD_STATE', call, `${cc.name} is not started`);
    if (this.maxRecv === 0) throw new DocaError('BAD_STATE', call, `${this.name} has no number of receives (setDevMaxNumRecv)`);
    if (this.immLen > cc.getImmDataLen()) throw new DocaError('INVALID_VALUE', call, `${this.name} takes ${this.immLen} bytes of immediate data; ${cc.name} only ${cc.getImmDataLen()}`);
    if (!this.table.connected) throw new DocaError('BAD_STATE', call, `${this.msgq.name} was stopped`);
    cc._add(this, this.maxRecv, call);
    const queue = new ConsumerQueue(this.maxRecv, this.immLen);
    const o = r.objects;
    const v = r.view.view;
    const start = Atomics.load(queue.segment.i32, QUEUE_LAYOUT.POST_TAIL / 4);
    o.store(this.index, CONSUMER.CC, cc.index + 1);
    o.store(this.index, CONSUMER.CC_GEN, o.generation(cc.index));
    v.setUint32(o.at(this.index, CONSUMER.USER_DATA), this.userData, true);
    v.setUint32(o.at(this.index, CONSUMER.SLOTS), queue.slots, true);
    v.setUint32(o.at(this.index, CONSUMER.IMM_LEN), this.immLen, true);
    v.setUint32(o.at(this.index, CONSUMER.ID), this.endpointId, true);
    o.store(this.index, CONSUMER.HEAD, start);
    o.store(this.index, CONSUMER.RELEASED, start);
    encodeDescriptor(queue.segment.descriptor, v, o.at(this.index, CONSUMER.QUEUE));
    encodeDescriptor(this.table.segment.descriptor, v, o.at(this.index, CONSUMER.MSGQ));
    this.setStarted(true);
    this.queue = queue;
    this.table.publishBell(this.entry, this.dpa._euBell(r, cc.index % r.layout.dims.eus, BIT_CONSUMER + this.index, call));
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

/**
 * A comch producer on the DPA (`doca_comch_msgq_producer_create` on a MsgQ whose producers are on a DPA):
 * the CPU side configures it, DPA code sends immediate data to the CPU's consumers with it.
 *
 * @example
 * ```ts
 * // doca_comch_msgq_producer_create(msgq, &producer); doca_comch_producer_dpa_completion_attach(producer, comp)
 * const producer = ComchDpaProducer.create(toCpu);
 * producer.setDatapathOnDpa(dpa);
 * producer.dpaCompletionAttach(comp);
 * producer.setDevMaxNumSend(16);
 * producer.start();
 * // DPA code: comchProducerPostSendImmOnly(producer.getDpaHandle(), consumerId, imm, 0)
 * ```
 */
export class ComchDpaProducer extends DpaEndpoint {
  private completion: DpaCompletion | undefined;
  private maxSend = 0;

  private constructor(msgq: ComchMsgq, call: string) {
    super(msgq, msgqDpa(msgq, 'producer', call), ObjKind.PRODUCER, 'producer', call);
  }

  /** `doca_comch_msgq_producer_create`, for a MsgQ whose producers are on a DPA (NOT_PERMITTED otherwise). */
  static create(msgq: ComchMsgq): ComchDpaProducer {
    return new ComchDpaProducer(msgq, 'doca_comch_msgq_producer_create');
  }

  /** `doca_comch_producer_dpa_completion_attach`: where its sends complete (a DPA completion of the same DPA). */
  dpaCompletionAttach(completion: DpaCompletion): void {
    const call = 'doca_comch_producer_dpa_completion_attach';
    this.configurable(call);
    this.sameDpa(completion, 'DpaCompletion', call);
    if (!(completion instanceof DpaCompletion)) throw new DocaError('INVALID_VALUE', call, 'expected a DpaCompletion');
    this.completion?._users.delete(this);
    this.completion = completion;
    completion._users.add(this);
  }

  /** `doca_comch_producer_set_dev_max_num_send` (rounded up to a power of two). */
  setDevMaxNumSend(n: number): void {
    const call = 'doca_comch_producer_set_dev_max_num_send';
    this.configurable(call);
    this.maxSend = count(call, 'dev_max_num_send', n, MAX_RECV);
  }

  /** `doca_comch_producer_get_dev_max_num_send`: as set, rounded up to a power of two. */
  getDevMaxNumSend(): number {
    return this.maxSend;
  }

  /** `doca_ctx_start`: RUNNING at once. */
  start(): 'DOCA_SUCCESS' {
    const call = 'doca_ctx_start';
    this.configurable(call);
    const r = this.dpa._running(call);
    this.requireDatapath(call);
    const comp = this.completion;
    if (!comp || comp.isDestroyed) throw new DocaError('BAD_STATE', call, `${this.name} has no DPA completion (dpaCompletionAttach)`);
    if (!comp.isStarted) throw new DocaError('BAD_STATE', call, `${comp.name} is not started`);
    if (this.maxSend === 0) throw new DocaError('BAD_STATE', call, `${this.name} has no number of sends (setDevMaxNumSend)`);
    if (!this.table.connected) throw new DocaError('BAD_STATE', call, `${this.msgq.name} was stopped`);
    const o = r.objects;
    const v = r.view.view;
    o.store(this.index, PRODUCER.COMPLETION, comp.index + 1);
    o.store(this.index, PRODUCER.COMPLETION_GEN, o.generation(comp.index));
    v.setUint32(o.at(this.index, PRODUCER.ID), this.endpointId, true);
    v.setUint32(o.at(this.index, PRODUCER.MAX_SEND), this.maxSend, true);
    v.setUint32(o.at(this.index, PRODUCER.MSGQ_ID), this.msgq.id, true);
    v.setUint32(o.at(this.index, PRODUCER.ENTRY), this.entry, true);
    encodeDescriptor(this.msgq._started(call).segment, v, o.at(this.index, PRODUCER.MSGQ));
    this.setStarted(true);
    return 'DOCA_SUCCESS';
  }

  /** `doca_ctx_stop`. */
  stop(): 'DOCA_SUCCESS' {
    const call = 'doca_ctx_stop';
    this.alive(call);
    if (!this.isStarted) throw new DocaError('BAD_STATE', call, `${this.name} is already IDLE`);
    this.setStarted(false);
    return 'DOCA_SUCCESS';
  }

  /** `doca_comch_producer_destroy`: IDLE first. */
  destroy(): void {
    const call = 'doca_comch_producer_destroy';
    if (this.isDestroyed) return;
    if (this.isStarted) throw new DocaError('IN_USE', call, `${this.name} is RUNNING; stop it first`);
    this.releaseEndpoint(call);
    this.completion?._users.delete(this);
    this.completion = undefined;
  }

  /** `doca_comch_producer_get_dpa_handle`: BAD_STATE before start. */
  getDpaHandle(): bigint {
    return this.dpaHandle('doca_comch_producer_get_dpa_handle');
  }
}
