/**
 * MsgQs between the CPU and a DPA thread, built in DOCA's order for DPA tests: a CPU producer in this
 * thread sending to DPA consumers on one consumer completion context, whose DPA thread runs `func` with
 * a DPA pointer to `[counter event, cc, consumer repostTo (default the first), 1, ...]` (u64s): the
 * arguments of dpa-apps/msgq.ts `counting_consumer`, which re-posts what it took on that consumer and
 * re-arms. With `answer`, the way back too: a DPA producer (completing into a DPA completion) to a CPU
 * consumer, whose handles follow: `[..., producer, sent completion, CPU consumer id, ...words]`.
 *
 * `close()` tears everything down children first (also when the test ends), tolerating what the test
 * already stopped or destroyed and a DPA that went fatal, and says which steps failed with which DOCA
 * error (a DPA thread that never returns: TIME_OUT).
 */
import type { TestContext } from 'node:test';
import type { ComchConsumer } from '../../src/comch/consumer.js';
import { ComchMsgq } from '../../src/comch/msgq.js';
import type { ComchProducer } from '../../src/comch/producer.js';
import type { Dev } from '../../src/core/dev.js';
import { DocaError } from '../../src/core/error.js';
import { ProgressEngine } from '../../src/core/pe.js';
import type { Task } from '../../src/core/task.js';
import { ComchConsumerCompletion } from '../../src/dpa/consumer-completion.js';
import { ComchDpaConsumer } from '../../src/dpa/comch-consumer.js';
import { ComchDpaProducer } from '../../src/dpa/comch-producer.js';
import { DpaCompletion } from '../../src/dpa/completion.js';
import type { Dpa } from '../../src/dpa/dpa.js';
import { DpaThread } from '../../src/dpa/thread.js';
import type { SyncEvent } from '../../src/sync-event/sync-event.js';
import { dpaEvent, onCleanup } from './dpa.js';

export interface ToDpa {
  msgq: ComchMsgq;
  cc: ComchConsumerCompletion;
  consumers: ComchDpaConsumer[];
  thread: DpaThread;
  /** The event the thread counts what it took on. */
  counter: SyncEvent;
  cpuProducer: ComchProducer;
  pe: ProgressEngine;
  /** Sends `imm` to consumer `which` (default 0): 'ok', or the DOCA error name the submit was refused with. */
  send(imm: Uint8Array, which?: number): string;
  /** Sends that completed, and those that failed after submit (their error names). */
  completed: number;
  failed: string[];
  /** With `answer`: the immediate data of every answer the CPU consumer received, in order. */
  answers: Uint8Array[];
  /** With `answer`: the DPA producer and the DPA completion its sends complete into. */
  dpaProducer?: ComchDpaProducer;
  sent?: DpaCompletion;
  /** Tears everything down, children first; the steps that failed, as `step: DOCA error name`. */
  close(): Promise<string[]>;
  /** The DPA pointer of the thread's argument block (the u64s above). */
  args: bigint;
}

/** Runs `fn`, ignoring the DOCA errors of a teardown step the test (or a fatal DPA) already took. */
export function quietly(fn: () => unknown): () => unknown {
  return () => {
    try {
      return fn();
    } catch (err) {
      if (!(err instanceof DocaError)) throw err;
      return undefined;
    }
  };
}

export interface ChannelOptions {
  func: string;
  slots?: number;
  consumers?: number;
  producers?: number;
  repostTo?: number;
  answer?: boolean;
  words?: bigint[];
}

export function toDpaChannel(t: TestContext, dpa: Dpa, dev: Dev, options: ChannelOptions): ToDpa {
  const undo: [string, () => unknown][] = [];
  try {
    return build(t, dpa, dev, options, undo);
  } catch (err) {
    // What was made goes again (the DPA may have gone fatal under the set-up).
    for (const [, step] of undo.reverse()) quietly(step)();
    throw err;
  }
}

function build(t: TestContext, dpa: Dpa, dev: Dev, options: ChannelOptions, undo: [string, () => unknown][]): ToDpa {
  const slots = options.slots ?? 8;
  const made = <T>(what: string, value: T, teardown: (v: T) => unknown): T => (undo.push([what, () => teardown(value)]), value);
  const counter = made('counter event', dpaEvent(dev, dpa, 'publisher'), (e) => (e.stop(), e.destroy()));
  const args = dpa.memAlloc(32 + 24 + 8 * (options.words?.length ?? 0));
  const thread = made('DPA thread', DpaThread.create(dpa), (th) => th.destroy());
  thread.setFuncArg(options.func, args);
  const cc = made('consumer completion', ComchConsumerCompletion.create(dpa), (c) => c.destroy());
  cc.setDpaThread(thread);
  cc.setMaxNumConsumers(options.consumers ?? 1);
  cc.setMaxNumRecv(slots * (options.consumers ?? 1));
  cc.start();
  undo.push(['consumer completion stop', () => cc.stop()]);
  const msgq = made('MsgQ to the DPA', ComchMsgq.create(dev), (q) => q.destroy());
  msgq.setDpaConsumer(dpa);
  msgq.setMaxNumConsumers(options.consumers ?? 1);
  msgq.setMaxNumProducers(options.producers ?? 1);
  msgq.start();
  const consumers: ComchDpaConsumer[] = [];
  for (let i = 0; i < (options.consumers ?? 1); i++) {
    const consumer = made('DPA consumer', ComchDpaConsumer.create(msgq), (c) => c.destroy());
    consumer.setDatapathOnDpa(dpa);
    consumer.setCompletion(cc, i);
    consumer.setDevMaxNumRecv(slots);
    consumer.start();
    undo.push(['DPA consumer stop', () => consumer.stop()]);
    consumers.push(consumer);
  }
  const pe = made('engine', ProgressEngine.create(), (e) => e.destroy());
  const channel: ToDpa = { msgq, cc, consumers, thread, counter, cpuProducer: msgq.producerCreate(), pe, send: () => '', completed: 0, failed: [], answers: [], close: async () => [], args };
  const producer = made('CPU producer', channel.cpuProducer, (p) => p.destroy());
  pe.connectCtx(producer);
  producer.taskSendSetConf(
    (task: Task) => (channel.completed++, task.free()),
    (task: Task) => (channel.failed.push(task.getStatus()), task.free()),
    slots * 4,
  );
  producer.start();
  const words = [counter.getDpaHandle(dpa), cc.getDpaHandle(), consumers[options.repostTo ?? 0]!.getDpaHandle(), 1n];
  let cpuConsumer: ComchConsumer | undefined;
  if (options.answer) {
    const sent = made('sent completion', DpaCompletion.create(dpa, slots), (c) => c.destroy());
    sent.start();
    undo.push(['sent completion stop', () => sent.stop()]);
    const back = made('MsgQ from the DPA', ComchMsgq.create(dev), (q) => q.destroy());
    back.setDpaProducer(dpa);
    back.start();
    const dpaProducer = made('DPA producer', ComchDpaProducer.create(back), (p) => p.destroy());
    dpaProducer.setDatapathOnDpa(dpa);
    dpaProducer.dpaCompletionAttach(sent);
    dpaProducer.setDevMaxNumSend(slots);
    dpaProducer.start();
    undo.push(['DPA producer stop', () => dpaProducer.stop()]);
    const consumer = made('CPU consumer', back.consumerCreate(), (c) => c.destroy());
    cpuConsumer = consumer;
    pe.connectCtx(consumer);
    consumer.setImmDataLen(32);
    consumer.taskPostRecvSetConf(
      (task) => {
        channel.answers.push(task.getImmData()?.slice() ?? new Uint8Array(0));
        if (consumer.state === 'RUNNING') task.submit();
        else task.free();
      },
      (task) => task.free(),
      slots,
    );
    consumer.start();
    for (let i = 0; i < slots; i++) consumer.taskPostRecvAllocInit().submit();
    words.push(dpaProducer.getDpaHandle(), sent.getDpaHandle(), BigInt(consumer.getId()));
    channel.dpaProducer = dpaProducer;
    channel.sent = sent;
  }
  words.push(...(options.words ?? []));
  const v = new DataView(new ArrayBuffer(words.length * 8));
  words.forEach((w, i) => v.setBigUint64(i * 8, w, true));
  dpa.h2dMemcpy(args, new Uint8Array(v.buffer));
  thread.start();
  undo.push(['DPA thread stop', () => thread.stop()]);
  thread.run();
  channel.send = (imm: Uint8Array, which = 0): string => {
    const task = producer.taskSendAllocInit(undefined, imm, consumers[which]!.getId());
    try {
      task.submit();
    } catch (err) {
      task.free();
      return (err as { code: string }).code;
    }
    while (pe.progress());
    return 'ok';
  };
  let closed: Promise<string[]> | undefined;
  channel.close = () =>
    (closed ??= (async () => {
      const failures: string[] = [];
      for (const ctx of [producer, cpuConsumer]) await ctx?.stopAndWait({ timeoutMs: 10_000 }).catch((err: unknown) => failures.push(`${ctx.name} stop: ${(err as DocaError).code}`));
      for (const [what, step] of undo.reverse()) {
        try {
          step();
        } catch (err) {
          if (!(err instanceof DocaError)) throw err;
          // Stopping what the test (or a fatal DPA) already stopped is BAD_STATE: not a failure of the teardown.
          if (!(what.endsWith('stop') && err.code === 'DOCA_ERROR_BAD_STATE')) failures.push(`${what}: ${err.code}`);
        }
      }
      return failures;
    })());
  onCleanup(t, () => channel.close());
  return channel;
}
