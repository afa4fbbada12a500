/** A comch producer on the DPA (`doca_comch_msgq_producer_create` on a MsgQ whose producers are on a DPA): its CPU side. */
import { type ComchMsgq } from '../comch/msgq.js';
import { DocaError } from '../core/error.js';
import { encodeDescriptor } from '../fabric/segment.js';
import { DpaCompletion } from './completion.js';
import { ObjKind } from './layout.js';
import { PRODUCER } from './objects.js';
import { count, DpaEndpoint, MAX_RECV, msgqDpa } from './comch-endpoint.js';

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

  /** What `doca_comch_producer_set_dev_max_num_send` set, rounded up to a power of two (softdpu's: DOCA has no getter). */
  getDevMaxNumSend(): number {
    return this.maxSend;
  }

  /** `doca_ctx_start`: RUNNING at once. */
  start(): 'DOCA_SUCCESS' {
    const call = 'doca_ctx_start';
    this.configurable(call);
    const run = this.dpa._running(call);
    this.requireDatapath(call);
    const comp = this.completion;
    if (!comp || comp.isDestroyed) throw new DocaError('BAD_STATE', call, `${this.name} has no DPA completion (dpaCompletionAttach)`);
    if (!comp.isStarted) throw new DocaError('BAD_STATE', call, `${comp.name} is not started`);
    if (this.maxSend === 0) throw new DocaError('BAD_STATE', call, `${this.name} has no number of sends (setDevMaxNumSend)`);
    if (!this.table.connected) throw new DocaError('BAD_STATE', call, `${this.msgq.name} was stopped`);
    const objects = run.objects;
    const v = run.tables.view;
    objects.store(this.index, PRODUCER.COMPLETION, comp.index + 1);
    objects.store(this.index, PRODUCER.COMPLETION_GEN, objects.generation(comp.index));
    v.setUint32(objects.at(this.index, PRODUCER.ID), this.endpointId, true);
    v.setUint32(objects.at(this.index, PRODUCER.MAX_SEND), this.maxSend, true);
    v.setUint32(objects.at(this.index, PRODUCER.MSGQ_ID), this.msgq.id, true);
    v.setUint32(objects.at(this.index, PRODUCER.ENTRY), this.entry, true);
    encodeDescriptor(this.msgq._started(call).segment, v, objects.at(this.index, PRODUCER.MSGQ));
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
