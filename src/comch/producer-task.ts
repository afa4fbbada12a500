/** The producer's send task (`doca_comch_producer_task_send`): a buffer (and immediate data) for one consumer. */
import type { DocaBuf } from '../core/buf.js';
import { DocaError } from '../core/error.js';
import { Task, type TaskConf } from '../core/task.js';
import { ImmData } from './imm.js';
import type { ComchProducer } from './producer.js';

/**
 * The producer's send task, `struct doca_comch_producer_task_send`
 * (`doca_comch_producer_task_send_alloc_init`): a buffer, and immediate data, for one remote consumer.
 * `submit()` throws AGAIN, and nothing changes, while that consumer has no posted buffer: resubmit later.
 *
 * @example
 * ```ts
 * // doca_comch_producer_task_send_alloc_init(producer, buf, imm, imm_len, consumer_id, &task); doca_task_submit(...)
 * const task = producer.taskSendAllocInit(buf, new Uint8Array([1, 2]), consumerId);
 * try {
 *   task.submit(); // completes through the conf's success callback inside progress()
 * } catch (err) {
 *   if (!DocaError.is(err, 'AGAIN')) throw err; // no posted buffer yet: submit again later
 * }
 * ```
 */
export class ComchProducerSendTask extends Task {
  /** @internal the task's copy of its immediate data (what the send writes into the slot). */
  readonly _imm = new ImmData();
  private buf: DocaBuf | undefined;
  private consumerId = 0;

  /** @internal use `producer.taskSendAllocInit` (the pool makes and recycles these). */
  constructor(
    private readonly producer: ComchProducer,
    conf: TaskConf,
  ) {
    super(producer, conf);
  }

  /** @internal what an allocation sets (a recycled object gets every field anew). */
  _init(buf: DocaBuf | undefined, immData: Uint8Array | undefined, consumerId: number): void {
    this.buf = buf;
    this._imm.set(immData);
    this.consumerId = consumerId;
  }

  /** `doca_comch_producer_task_send_get_buf`: a MsgQ send has none (DOCA: NULL): BAD_STATE. */
  getBuf(): DocaBuf {
    if (!this.buf) throw new DocaError('BAD_STATE', 'doca_comch_producer_task_send_get_buf', 'a MsgQ send has no buffer: it carries immediate data only');
    return this.buf;
  }

  /** @internal the buffer, if the send has one. */
  get _buf(): DocaBuf | undefined {
    return this.buf;
  }

  /** `doca_comch_producer_task_send_set_buf`. */
  setBuf(buf: DocaBuf): void {
    this.check('doca_comch_producer_task_send_set_buf');
    this.producer._checkSend('doca_comch_producer_task_send_set_buf', buf, this._imm.get());
    this.buf = buf;
  }

  /** `doca_comch_producer_task_send_get_imm_data`: a view of the task's copy, taken when it was set. */
  getImmData(): Uint8Array | undefined {
    return this._imm.get();
  }

  /** `doca_comch_producer_task_send_get_imm_data_len`. */
  getImmDataLen(): number {
    return this._imm.length;
  }

  /** `doca_comch_producer_task_send_set_imm_data`: copied into the task. */
  setImmData(immData: Uint8Array | undefined): void {
    this.check('doca_comch_producer_task_send_set_imm_data');
    this.producer._checkSend('doca_comch_producer_task_send_set_imm_data', this.buf, immData);
    this._imm.set(immData);
  }

  /** `doca_comch_producer_task_send_get_consumer_id`. */
  getConsumerId(): number {
    return this.consumerId;
  }

  /** `doca_comch_producer_task_send_set_consumer_id`. */
  setConsumerId(consumerId: number): void {
    this.check('doca_comch_producer_task_send_set_consumer_id');
    this.consumerId = consumerId;
  }

  /** `doca_comch_producer_task_send_as_task`. */
  asTask(): Task {
    return this;
  }

  _execute(): void {
    this.producer._send(this);
  }
}
