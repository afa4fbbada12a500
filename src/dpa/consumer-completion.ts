/** The consumer completion context (`doca_comch_consumer_completion`): where DPA consumers' receives complete. */
import { MAX_IMM } from '../comch/consumer-queue.js';
import { DocaError } from '../core/error.js';
import { startPosition } from '../fabric/positions.js';
import { ThreadAttached } from './attached.js';
import { Dpa } from './dpa.js';
import { ObjKind } from './layout.js';
import type { DpaThread } from './thread.js';
import { count, immDataLen, MAX_RECV } from './comch-endpoint.js';
import type { ComchDpaConsumer } from './comch-consumer.js';
import { CONSUMER_COMPLETION, RETURNED_SIZE } from './objects.js';

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
  /** The sizes `list` and `returned` were allocated for (a restart with larger settings allocates anew). */
  private listFor = 0;
  private returnedFor = 0;

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

  /** The thread `doca_comch_consumer_completion_set_dpa_thread` set, undefined until then (softdpu's: DOCA has no getter). */
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
    const run = this.dpa._running(call);
    if (!this.thread) throw new DocaError('BAD_STATE', call, `${this.name} has no DPA thread (setDpaThread)`);
    // Kept across restarts while they are large enough: a restart with more consumers or receives than
    // the first start allocated for gets new ranges (it would write past the old ones otherwise).
    if (this.list !== undefined && this.listFor < this.maxConsumers) this.list = void run.arena.free(this.list);
    if (this.returned !== undefined && this.returnedFor < this.maxRecv) this.returned = void run.arena.free(this.returned);
    if (this.list === undefined) [this.list, this.listFor] = [run.arena.alloc(this.maxConsumers * 8), this.maxConsumers];
    if (this.returned === undefined) [this.returned, this.returnedFor] = [run.arena.alloc(this.maxRecv * RETURNED_SIZE), this.maxRecv];
    if (this.list === undefined || this.returned === undefined) throw new DocaError('NO_MEMORY', call, `the DPA has no room for ${this.name}'s lists`);
    run.segment.u8.fill(0, this.list, this.list + this.maxConsumers * 8);
    const objects = run.objects;
    const v = run.tables.view;
    v.setUint32(objects.at(this.index, CONSUMER_COMPLETION.MAX_CONSUMERS), this.maxConsumers, true);
    v.setUint32(objects.at(this.index, CONSUMER_COMPLETION.MAX_RECV), this.maxRecv, true);
    v.setUint32(objects.at(this.index, CONSUMER_COMPLETION.IMM_LEN), this.immLen, true);
    v.setUint32(objects.at(this.index, CONSUMER_COMPLETION.LIST), this.list, true);
    v.setUint32(objects.at(this.index, CONSUMER_COMPLETION.RETURNED), this.returned, true);
    // Positions start where every ring's do (fabric/positions.ts), so a soak can bring the wrap forward.
    for (const f of [CONSUMER_COMPLETION.RET_HEAD, CONSUMER_COMPLETION.RET_TAIL]) objects.store(this.index, f, startPosition());
    objects.store(this.index, CONSUMER_COMPLETION.CURSOR, 0);
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
    const run = this.dpaRun;
    let used = 0;
    // Only consumers attach to a consumer completion context (ComchDpaConsumer.setCompletion).
    for (const u of this._users as Set<ComchDpaConsumer>) if (u !== consumer && u.isStarted) used += u._slots;
    if (used + slots > this.maxRecv) throw new DocaError('NO_MEMORY', call, `${this.name} takes ${this.maxRecv} receives; its consumers already have ${used}, this one wants ${slots}`);
    const i32 = run.tables.i32;
    for (let i = 0; i < this.maxConsumers; i++) {
      const at = (this.list! + i * 8) / 4;
      if (Atomics.load(i32, at) !== 0) continue;
      Atomics.store(i32, at + 1, run.objects.generation(consumer.index));
      Atomics.store(i32, at, consumer.index + 1);
      return;
    }
    throw new DocaError('NO_MEMORY', call, `${this.name} already has its maximum of ${this.maxConsumers} started consumers`);
  }

  /** @internal a consumer stops. */
  _remove(consumer: ComchDpaConsumer): void {
    const i32 = this.dpaRun.tables.i32;
    for (let i = 0; i < this.maxConsumers; i++) {
      const at = (this.list! + i * 8) / 4;
      if (Atomics.load(i32, at) === consumer.index + 1) Atomics.store(i32, at, 0);
    }
  }
}
