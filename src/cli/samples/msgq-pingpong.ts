/**
 * A two-way channel between the CPU and a DPA thread over two comch MsgQs (CPU -> DPA and DPA -> CPU),
 * set up in DOCA's order with its mandatory configuration, and torn down children first. The DPA side
 * is dpa-apps/pingpong.ts: its thread answers each message with the same bytes and counts them on a
 * sync event. Used by the comch_msgq_dpa_pingpong sample, its tests and the DPA benchmark.
 */
import { ComchMsgq } from '../../comch/msgq.js';
import type { ComchConsumer } from '../../comch/consumer.js';
import type { ComchConsumerPostRecvTask } from '../../comch/post-recv-task.js';
import type { ComchProducer } from '../../comch/producer.js';
import type { Dev } from '../../core/dev.js';
import { DocaError } from '../../core/error.js';
import { ProgressEngine } from '../../core/pe.js';
import type { Task } from '../../core/task.js';
import { DpaApp } from '../../dpa/app.js';
import { ComchConsumerCompletion } from '../../dpa/consumer-completion.js';
import { ComchDpaConsumer } from '../../dpa/comch-consumer.js';
import { ComchDpaProducer } from '../../dpa/comch-producer.js';
import { DpaCompletion } from '../../dpa/completion.js';
import { Dpa } from '../../dpa/dpa.js';
import { DpaThread } from '../../dpa/thread.js';
import { SyncEvent } from '../../sync-event/sync-event.js';

/** The DPA application of the ping-pong. */
export const PINGPONG_APP = new URL('./dpa-apps/pingpong.js', import.meta.url);
const IMM = 32;

export interface PingPongOptions {
  dev: Dev;
  /** The DPA thread keeps polling until `expected` messages came (else it is activated per batch). */
  poll: boolean;
  expected: number;
  /** Receives each side keeps posted (default 16). */
  queue?: number;
}

const NO_IMM = new Uint8Array(0);

export class MsgqPingPong {
  /**
   * Called with each answer's immediate data inside `pe.progress()`: a view of the receive task's own
   * copy, valid during the call (the task is posted again after it): copy it to keep it.
   */
  onReply: ((imm: Uint8Array) => void) | undefined;
  private readonly undo: (() => void)[] = [];
  private closed = false;

  private constructor(
    readonly dpa: Dpa,
    readonly pe: ProgressEngine,
    readonly count: SyncEvent,
    private readonly producer: ComchProducer,
    private readonly consumer: ComchConsumer,
    private readonly dpaConsumerId: number,
  ) {}

  /** Builds both queues, the DPA thread and its completions, and posts the first receives. */
  static open(o: PingPongOptions): MsgqPingPong {
    const q = o.queue ?? 16;
    const undo: (() => void)[] = [];
    try {
      const dpa = Dpa.create(o.dev);
      undo.push(() => dpa.destroy());
      dpa.setApp(DpaApp.create(PINGPONG_APP));
      dpa.start();
      const count = SyncEvent.create();
      undo.push(() => count.destroy());
      count.addPublisherLocationDpa(dpa);
      count.addSubscriberLocationCpu(o.dev);
      count.start();
      undo.push(() => count.stop());
      const args = dpa.memAlloc(72);
      const thread = DpaThread.create(dpa);
      undo.push(() => thread.destroy());
      thread.setFuncArg('pong', args);
      const cc = ComchConsumerCompletion.create(dpa);
      undo.push(() => cc.destroy());
      cc.setDpaThread(thread);
      cc.setMaxNumConsumers(1);
      cc.setMaxNumRecv(q);
      cc.setImmDataLen(IMM);
      cc.start();
      undo.push(() => cc.stop());
      const sent = DpaCompletion.create(dpa, q);
      undo.push(() => sent.destroy());
      sent.start();
      undo.push(() => sent.stop());
      const toDpa = ComchMsgq.create(o.dev);
      undo.push(() => toDpa.destroy());
      toDpa.setDpaConsumer(dpa);
      toDpa.start();
      const dpaConsumer = ComchDpaConsumer.create(toDpa);
      undo.push(() => dpaConsumer.destroy());
      dpaConsumer.setDatapathOnDpa(dpa);
      dpaConsumer.setCompletion(cc);
      dpaConsumer.setDevMaxNumRecv(q);
      dpaConsumer.setImmDataLen(IMM);
      dpaConsumer.start();
      undo.push(() => dpaConsumer.stop());
      const fromDpa = ComchMsgq.create(o.dev);
      undo.push(() => fromDpa.destroy());
      fromDpa.setDpaProducer(dpa);
      fromDpa.start();
      const dpaProducer = ComchDpaProducer.create(fromDpa);
      undo.push(() => dpaProducer.destroy());
      dpaProducer.setDatapathOnDpa(dpa);
      dpaProducer.dpaCompletionAttach(sent);
      dpaProducer.setDevMaxNumSend(q);
      dpaProducer.start();
      undo.push(() => dpaProducer.stop());
      const pe = ProgressEngine.create();
      undo.push(() => pe.destroy());
      const free = (t: Task) => t.free();
      const producer = toDpa.producerCreate();
      undo.push(() => producer.destroy());
      pe.connectCtx(producer);
      producer.taskSendSetConf(free, free, q);
      producer.start();
      const consumer = fromDpa.consumerCreate();
      undo.push(() => consumer.destroy());
      pe.connectCtx(consumer);
      consumer.setImmDataLen(IMM);
      let pp: MsgqPingPong | undefined;
      const onRecv = (task: ComchConsumerPostRecvTask) => {
        pp?.onReply?.(task.getImmData() ?? NO_IMM);
        // A reply may still land while the consumer is stopping: deliver it, and free the task
        // instead of reposting it, or the consumer stays STOPPING with a task nobody owns.
        if (consumer.state === 'RUNNING') task.submit();
        else task.free();
      };
      consumer.taskPostRecvSetConf(onRecv, free, q);
      consumer.start();
      for (let i = 0; i < q; i++) consumer.taskPostRecvAllocInit().submit();
      const a = new DataView(new ArrayBuffer(72));
      const fields = [cc.getDpaHandle(), dpaConsumer.getDpaHandle(), dpaProducer.getDpaHandle(), sent.getDpaHandle(), count.getDpaHandle(dpa), BigInt(consumer.getId()), o.poll ? 1n : 0n, BigInt(o.expected), 0n];
      fields.forEach((v, i) => a.setBigUint64(i * 8, v, true));
      dpa.h2dMemcpy(args, new Uint8Array(a.buffer));
      thread.start();
      undo.push(() => thread.stop());
      thread.run();
      dpa.rpc('pong_init', dpaConsumer.getDpaHandle(), BigInt(q));
      pp = new MsgqPingPong(dpa, pe, count, producer, consumer, dpaConsumer.getId());
      // Stop and destroy children first: CPU endpoints, DPA endpoints, queues, contexts, the thread, the DPA.
      pp.undo.push(...undo.reverse());
      return pp;
    } catch (err) {
      for (const u of undo.reverse()) {
        try {
          u();
        } catch {
          // tearing down what was made; the first error is the one to report
        }
      }
      throw err;
    }
  }

  /** Sends `imm` (at most 32 bytes) to the DPA thread; AGAIN when the DPA has no receive posted. */
  send(imm: Uint8Array): void {
    const task = this.producer.taskSendAllocInit(undefined, imm, this.dpaConsumerId);
    try {
      task.submit();
    } catch (err) {
      task.free();
      throw err;
    }
  }

  /** Messages the DPA thread answered so far (its count event). */
  answered(): bigint {
    return this.count.get();
  }

  /** Stops and destroys everything, children first; then waits until every execution unit thread exited. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.producer.stopAndWait({ timeoutMs: 5000 });
    await this.consumer.stopAndWait({ timeoutMs: 5000 });
    let first: unknown;
    for (const u of this.undo) {
      try {
        u();
      } catch (err) {
        if (!DocaError.is(err, 'BAD_STATE')) first ??= err; // BAD_STATE: already stopped
      }
    }
    await this.dpa.exited();
    if (first !== undefined) throw first;
  }
}
