/** The consumer's post-receive task (`doca_comch_consumer_task_post_recv`): one buffer offered to producers. */
import type { DocaBuf } from '../core/buf.js';
import { DocaError } from '../core/error.js';
import { Task, type TaskConf } from '../core/task.js';
import type { ComchConsumer } from './consumer.js';
import type { Filled } from './consumer-queue.js';
import { ImmData } from './imm.js';

/**
 * The consumer's post-receive task, `struct doca_comch_consumer_task_post_recv`
 * (`doca_comch_consumer_task_post_recv_alloc_init`): one buffer offered to the producers on the other
 * side. It completes when a producer filled it: the buffer's data window is then what arrived.
 *
 * @example
 * ```ts
 * // doca_comch_consumer_task_post_recv_set_conf(consumer, recv_cb, err_cb, 16); ..._alloc_init(consumer, buf, &task)
 * consumer.taskPostRecvSetConf((task) => {
 *   console.log(task.getProducerId(), task.getBuf().getData(), task.getImmData());
 *   task.getBuf().resetDataLen();
 *   task.submit(); // post the buffer again
 * }, (task) => task.free(), 16);
 * consumer.start();
 * await consumer.waitForState('RUNNING'); // the peer registered it
 * consumer.taskPostRecvAllocInit(buf).submit();
 * ```
 */
export class ComchConsumerPostRecvTask extends Task {
  private readonly imm = new ImmData();
  private producerId = 0;
  private buf: DocaBuf | undefined;

  /** @internal use `consumer.taskPostRecvAllocInit` (the pool makes and recycles these). */
  constructor(
    private readonly consumer: ComchConsumer,
    conf: TaskConf,
  ) {
    super(consumer, conf);
  }

  /** @internal what an allocation sets (a recycled object gets every field anew). */
  _init(buf: DocaBuf | undefined): void {
    this.buf = buf;
    this.imm.clear();
    this.producerId = 0;
  }

  /**
   * `doca_comch_consumer_task_post_recv_get_buf`: after completion, its data is what was received. A MsgQ
   * receive has none (DOCA: NULL): BAD_STATE, read `getImmData()` instead.
   */
  getBuf(): DocaBuf {
    if (!this.buf) throw new DocaError('BAD_STATE', 'doca_comch_consumer_task_post_recv_get_buf', 'a MsgQ receive has no buffer: it carries immediate data only');
    return this.buf;
  }

  /** @internal the buffer, if the receive has one. */
  get _buf(): DocaBuf | undefined {
    return this.buf;
  }

  /** `doca_comch_consumer_task_post_recv_set_buf`: a buffer of the consumer's memory map. */
  setBuf(buf: DocaBuf): void {
    this.check('doca_comch_consumer_task_post_recv_set_buf');
    this.consumer._checkBuf('doca_comch_consumer_task_post_recv_set_buf', buf);
    this.buf = buf;
  }

  /**
   * `doca_comch_consumer_task_post_recv_get_imm_data`: valid after completion; undefined if none came.
   * A view of the task's own copy (as DOCA's pointer into the task): it holds the next message's data
   * once the task is posted again; copy it to keep it.
   */
  getImmData(): Uint8Array | undefined {
    return this.imm.get();
  }

  /** `doca_comch_consumer_task_post_recv_get_imm_data_len`. */
  getImmDataLen(): number {
    return this.imm.length;
  }

  /** `doca_comch_consumer_task_post_recv_get_producer_id`: 0 until completed. */
  getProducerId(): number {
    return this.producerId;
  }

  /** `doca_comch_consumer_task_post_recv_as_task`. */
  asTask(): Task {
    return this;
  }

  _execute(): void {
    this.imm.clear();
    this.producerId = 0;
    this.consumer._post(this);
  }

  /** @internal a producer filled the buffer; its slot (immediate data at `filled.immAt`) is in `slots`. */
  _received(filled: Filled, slots: DataView): void {
    this.buf?._setReceived(filled.length);
    if (filled.immLen > 0) this.imm.copyFrom(slots, filled.immAt, filled.immLen);
    else this.imm.clear();
    this.producerId = filled.producerId;
  }
}
