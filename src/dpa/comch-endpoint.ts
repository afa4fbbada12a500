/**
 * What the CPU side of the comch endpoints on the DPA share: DPA consumers (comch-consumer.ts) and DPA
 * producers (comch-producer.ts) are entries of their MsgQ's endpoint table (comch/endpoint-table.ts), with
 * the DPA data path. DPA code drives them with the device API (dev/comch-msgq.ts).
 *
 * A DPA consumer's receive queue is a consumer queue segment (comch/consumer-queue.ts) published in the
 * MsgQ's endpoint table like any consumer's, so the CPU's ComchProducer sends to it unchanged; its bell
 * reference names an EU's bell, whose bit for this consumer tells the EU to look at its completion
 * context (consumer-completion.ts). A DPA producer finds the CPU consumers in the same table and fills
 * their queues.
 *
 * DOCA's mandatory configuration is enforced at start (BAD_STATE naming what is missing): the data
 * path on the MsgQ's DPA, a started consumer completion context (consumer) or an attached DPA
 * completion (producer), and the number of receives or sends (rounded up to a power of two).
 */
import { MAX_IMM } from '../comch/consumer-queue.js';
import { type ComchMsgq, DPA_SIDE, type MsgqDpa } from '../comch/msgq.js';
import { attach, detach, type EndpointTable } from '../comch/endpoint-table.js';
import { DocaError, describeValue } from '../core/error.js';
import { powerOfTwoAtLeast } from '../fabric/positions.js';
import { Dpa } from './dpa.js';
import { DpaObject } from './object.js';

/** @internal The most receives or sends a DPA endpoint, or consumer completion context, is set to. */
export const MAX_RECV = 1 << 16;

/** @internal A count of receives, sends or consumers: an integer in [1, max], rounded up to a power of two. */
export function count(call: string, what: string, n: number, max: number): number {
  if (!Number.isInteger(n) || n < 1 || n > max) throw new DocaError('INVALID_VALUE', call, `${what} ${describeValue(n)} is not an integer in [1, ${max}]`);
  return powerOfTwoAtLeast(n);
}

/** @internal An immediate data length: an integer in [0, MAX_IMM], else INVALID_VALUE naming it. */
export function immDataLen(call: string, length: number): number {
  if (!Number.isInteger(length) || length < 0 || length > MAX_IMM) throw new DocaError('INVALID_VALUE', call, `imm_data_len ${describeValue(length)} is not an integer in [0, ${MAX_IMM}]`);
  return length;
}

/** @internal The DPA a MsgQ's DPA side is on, or NOT_PERMITTED when that side of this MsgQ is the CPU. */
export function msgqDpa(msgq: ComchMsgq, side: 'consumer' | 'producer', call: string): Dpa {
  const dpa: MsgqDpa | undefined = side === 'consumer' ? msgq?.getDpaConsumer() : msgq?.getDpaProducer();
  if (!(dpa instanceof Dpa)) {
    const other = side === 'consumer' ? 'producers' : 'consumers';
    throw new DocaError('NOT_PERMITTED', call, `the ${side}s of ${msgq?.name ?? 'this MsgQ'} are on the CPU${msgq?.[side === 'consumer' ? 'getDpaProducer' : 'getDpaConsumer']() ? ` (its ${other} are on the DPA: it carries the other direction)` : ''}; set_dpa_${side} before start`);
  }
  return dpa;
}

/** @internal What DPA consumers and producers share: a MsgQ endpoint table entry, and the DPA data path. */
export abstract class DpaEndpoint extends DpaObject {
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
