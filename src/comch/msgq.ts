/**
 * The comch MsgQ (`struct doca_comch_msgq`): consumers and producers on one device without a server,
 * client or connection, typically with one side on the DPA. Each MsgQ carries one direction: set its
 * consumers on a DPA (CPU -> DPA) or its producers (DPA -> CPU); two MsgQs make a two-way channel.
 *
 * A MsgQ is a connection segment of its own (layout.ts) with tiny, unused message rings: its endpoint
 * table is where consumers publish their queues and bells and producers find them, exactly as on a
 * connection, so the CPU's `ComchConsumer` and `ComchProducer` work on it unchanged. CPU endpoints take
 * the "server" side, DPA endpoints (dpa/comch-consumer.ts, dpa/comch-producer.ts) the "client" side. With no peer context to relay a
 * consumer's announcement, a MsgQ consumer registers itself: its start returns at once, RUNNING.
 * MsgQ endpoints carry immediate data only (at most 32 bytes; no buffers), as DOCA's do.
 */
import { comchConsumerCapGetMaxImmDataLen } from './caps.js';
import type { Dev } from '../core/dev.js';
import { capabilityReport } from '../core/caps.js';
import { DocaError, describeValue } from '../core/error.js';
import type { Segment } from '../fabric/segment.js';
import { Counter, detachedRecord, StatKind, type StatRecord, statRecord } from '../fabric/stats.js';
import { ComchConsumer } from './consumer.js';
import { connLayout, createConnSegment } from './layout.js';
import { ComchProducer } from './producer.js';
import { attach, type ComchConnectionRef, detach, type EndpointTable } from './endpoint-table.js';

/** What a MsgQ needs of a DPA (a `Dpa`, which lives in a layer above). */
export interface MsgqDpa {
  readonly name: string;
  readonly dev: Dev;
}

/** Where a MsgQ's endpoints live. */
export type MsgqSide = 'server' | 'client';
/** The side CPU endpoints take in a MsgQ's endpoint table; DPA endpoints take the other. */
export const CPU_SIDE: MsgqSide = 'server';
export const DPA_SIDE: MsgqSide = 'client';

let nextId = 1;

/**
 * The comch MsgQ, `struct doca_comch_msgq` (`doca_comch_msgq_create`): consumers and producers on one
 * device without a server, client or connection, one direction per queue: its consumers on a DPA
 * (CPU -> DPA, `setDpaConsumer`) or its producers (DPA -> CPU, `setDpaProducer`). CPU endpoints are
 * `ComchConsumer` and `ComchProducer` carrying immediate data only (at most 32 bytes, no buffers).
 *
 * @example
 * ```ts
 * // doca_comch_msgq_create(dev, &msgq); doca_comch_msgq_set_dpa_consumer(msgq, dpa); doca_comch_msgq_start(msgq)
 * const toDpa = ComchMsgq.create(dev);
 * toDpa.setDpaConsumer(dpa);
 * toDpa.start();
 * const dpaConsumer = ComchDpaConsumer.create(toDpa); // then its completion, setDevMaxNumRecv, start
 * const producer = toDpa.producerCreate(); // a CPU ComchProducer: taskSendAllocInit(undefined, imm, consumerId)
 * ```
 */
export class ComchMsgq {
  private dpaConsumer: MsgqDpa | undefined;
  private dpaProducer: MsgqDpa | undefined;
  private maxConsumers = 1;
  private maxProducers = 1;
  private segment: Segment | undefined;
  private table: EndpointTable | undefined;
  private reference: ComchConnectionRef | undefined;
  private destroyed = false;
  /** What observers of the fabric see of it while started (fabric/stats.ts MSGQ). */
  private stat: StatRecord = detachedRecord();
  readonly id = nextId++;
  readonly name = `comch msgq ${this.id}`;

  private constructor(readonly dev: Dev) {}

  /** `doca_comch_msgq_create`. */
  static create(dev: Dev): ComchMsgq {
    if (!dev?.isOpen) throw new DocaError('INVALID_VALUE', 'doca_comch_msgq_create', `the device must be open (got ${describeValue(dev)})`);
    return new ComchMsgq(dev);
  }

  /** `doca_comch_msgq_set_dpa_consumer`: CPU -> DPA; every consumer lives on `dpa` (of the same device). */
  setDpaConsumer(dpa: MsgqDpa): void {
    const call = 'doca_comch_msgq_set_dpa_consumer';
    this.configurable(call);
    this.checkDpa(dpa, call);
    if (this.dpaProducer) throw new DocaError('INVALID_VALUE', call, `${this.name} already has its producers on ${this.dpaProducer.name}; a MsgQ carries one direction (use two MsgQs)`);
    this.dpaConsumer = dpa;
  }

  /** `doca_comch_msgq_set_dpa_producer`: DPA -> CPU; every producer lives on `dpa` (of the same device). */
  setDpaProducer(dpa: MsgqDpa): void {
    const call = 'doca_comch_msgq_set_dpa_producer';
    this.configurable(call);
    this.checkDpa(dpa, call);
    if (this.dpaConsumer) throw new DocaError('INVALID_VALUE', call, `${this.name} already has its consumers on ${this.dpaConsumer.name}; a MsgQ carries one direction (use two MsgQs)`);
    this.dpaProducer = dpa;
  }

  /** The DPA its consumers live on, if any. */
  getDpaConsumer(): MsgqDpa | undefined {
    return this.dpaConsumer;
  }

  /** The DPA its producers live on, if any. */
  getDpaProducer(): MsgqDpa | undefined {
    return this.dpaProducer;
  }

  /** `doca_comch_msgq_set_max_num_consumers`. */
  setMaxNumConsumers(n: number): void {
    this.maxConsumers = this.count('doca_comch_msgq_set_max_num_consumers', n, capabilityReport(this.dev.asDevinfo().spec).consumer.maxConsumers);
  }

  /** `doca_comch_msgq_set_max_num_producers`. */
  setMaxNumProducers(n: number): void {
    this.maxProducers = this.count('doca_comch_msgq_set_max_num_producers', n, capabilityReport(this.dev.asDevinfo().spec).producer.maxProducers);
  }

  /** What `doca_comch_msgq_set_max_num_consumers` set (softdpu's: DOCA has no getter). */
  getMaxNumConsumers(): number {
    return this.maxConsumers;
  }

  /** What `doca_comch_msgq_set_max_num_producers` set (softdpu's: DOCA has no getter). */
  getMaxNumProducers(): number {
    return this.maxProducers;
  }

  /** `doca_comch_msgq_start`: freezes the configuration; consumers and producers can be created. */
  start(): void {
    const call = 'doca_comch_msgq_start';
    this.configurable(call);
    const segment = createConnSegment(connLayout(8, 1, 1, 2 * (this.maxConsumers + this.maxProducers)));
    const caps = capabilityReport(this.dev.asDevinfo().spec);
    this.reference = {
      segment: segment.descriptor,
      side: CPU_SIDE,
      id: this.id,
      msgq: true,
      caps: {
        maxNumTasks: caps.consumer.maxNumTasks,
        maxBufSize: caps.consumer.maxBufSize,
        maxImmDataLen: comchConsumerCapGetMaxImmDataLen(this.dev.asDevinfo()),
        maxConsumers: this.maxConsumers,
        maxProducers: this.maxProducers,
      },
    };
    this.segment = segment;
    const table = attach(this.reference, call);
    this.table = table;
    const direction = this.dpaConsumer ? 'cpu→dpa' : this.dpaProducer ? 'dpa→cpu' : 'cpu→cpu';
    const stat = statRecord(this.dev.fabric.dir, StatKind.MSGQ, `${this.name} ${direction}`, this.dev._stat, this.id);
    this.stat = stat;
    // Endpoints of this thread come and go through the shared table: count both sides then.
    table.onChange = () => {
      stat.c[Counter.MSGQ.CONSUMERS] = table.consumers(CPU_SIDE) + table.consumers(DPA_SIDE);
      stat.c[Counter.MSGQ.PRODUCERS] = table.producers(CPU_SIDE) + table.producers(DPA_SIDE);
    };
  }

  /** `doca_comch_msgq_stop`: refused (IN_USE) while consumers or producers made from it exist. */
  stop(): void {
    const call = 'doca_comch_msgq_stop';
    this.alive(call);
    if (!this.table) throw new DocaError('BAD_STATE', call, `${this.name} is not started`);
    const r = this.table;
    const n = r.consumers(CPU_SIDE) + r.consumers(DPA_SIDE) + r.producers(CPU_SIDE) + r.producers(DPA_SIDE);
    if (n > 0) throw new DocaError('IN_USE', call, `${n} consumer(s) and producer(s) made from ${this.name} still exist; destroy them first`);
    r.onChange = undefined;
    this.stat.release();
    r.close();
    detach(r);
    this.segment!.close();
    this.table = undefined;
    this.segment = undefined;
    this.reference = undefined;
  }

  /** `doca_comch_msgq_destroy`: stops it first if started (IN_USE while endpoints exist). */
  destroy(): void {
    if (this.destroyed) return;
    if (this.table) this.stop();
    this.destroyed = true;
  }

  get isStarted(): boolean {
    return this.table !== undefined;
  }

  /**
   * `doca_comch_msgq_consumer_create` for a CPU consumer (this MsgQ's consumers are not on a DPA): post
   * receive tasks without a buffer; each completes with the immediate data a producer sent.
   */
  consumerCreate(): ComchConsumer {
    const call = 'doca_comch_msgq_consumer_create';
    const ref = this.started(call);
    if (this.dpaConsumer) throw new DocaError('NOT_PERMITTED', call, `the consumers of ${this.name} live on ${this.dpaConsumer.name}: create them with ComchDpaConsumer.create(msgq)`);
    return ComchConsumer._createOnMsgq(ref);
  }

  /** `doca_comch_msgq_producer_create` for a CPU producer (this MsgQ's producers are not on a DPA). */
  producerCreate(): ComchProducer {
    const call = 'doca_comch_msgq_producer_create';
    const ref = this.started(call);
    if (this.dpaProducer) throw new DocaError('NOT_PERMITTED', call, `the producers of ${this.name} live on ${this.dpaProducer.name}: create them with ComchDpaProducer.create(msgq)`);
    return ComchProducer._createOnMsgq(ref);
  }

  /** @internal the reference endpoints attach with (BAD_STATE unless started). */
  _started(call: string): ComchConnectionRef {
    return this.started(call);
  }

  private started(call: string): ComchConnectionRef {
    this.alive(call);
    if (!this.reference) throw new DocaError('BAD_STATE', call, `${this.name} is not started`);
    return this.reference;
  }

  private checkDpa(dpa: MsgqDpa, call: string): void {
    if (!dpa || typeof dpa.name !== 'string' || !dpa.dev) throw new DocaError('INVALID_VALUE', call, `expected a Dpa, got ${describeValue(dpa)}`);
    if (dpa.dev !== this.dev) throw new DocaError('INVALID_VALUE', call, `${dpa.name} is not on ${this.dev.name}, the MsgQ's device`);
  }

  private count(call: string, n: number, max: number): number {
    this.configurable(call);
    if (!Number.isInteger(n) || n < 1 || n > max) throw new DocaError('INVALID_VALUE', call, `${describeValue(n)} is not an integer in [1, ${max}]`);
    return n;
  }

  private alive(call: string): void {
    if (this.destroyed) throw new DocaError('BAD_STATE', call, `${this.name} was destroyed`);
  }

  private configurable(call: string): void {
    this.alive(call);
    if (this.table) throw new DocaError('BAD_STATE', call, `${this.name} is started; configure it before start`);
  }
}
