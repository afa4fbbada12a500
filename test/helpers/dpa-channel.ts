/**
 * A CPU -> DPA MsgQ built in DOCA's order for DPA tests: a CPU producer in this thread sending to DPA
 * consumers on one consumer completion context, whose DPA thread runs `func` with a DPA pointer to
 * `[counter event, cc, consumer `repostTo` (default the first), 1, ...words]` (u64s): the arguments of
 * dpa-apps/msgq.ts `counting_consumer`, which re-posts what it took on that consumer and re-arms. Everything is torn down children first when
 * the test ends, tolerating what the test already stopped or destroyed and a DPA that went fatal.
 */
import type { TestContext } from 'node:test';
import { ComchMsgq } from '../../src/comch/msgq.js';
import type { ComchProducer } from '../../src/comch/producer.js';
import type { Dev } from '../../src/core/dev.js';
import { DocaError } from '../../src/core/error.js';
import { ProgressEngine } from '../../src/core/pe.js';
import type { Task } from '../../src/core/task.js';
import { ComchConsumerCompletion, ComchDpaConsumer } from '../../src/dpa/comch.js';
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

export function toDpaChannel(t: TestContext, dpa: Dpa, dev: Dev, options: { func: string; slots?: number; consumers?: number; producers?: number; repostTo?: number; words?: bigint[] }): ToDpa {
  const slots = options.slots ?? 8;
  const counter = dpaEvent(dev, dpa, 'publisher');
  onCleanup(t, quietly(() => (counter.stop(), counter.destroy())));
  const args = dpa.memAlloc(32 + 8 * (options.words?.length ?? 0));
  const thread = DpaThread.create(dpa);
  onCleanup(t, quietly(() => thread.destroy()));
  thread.setFuncArg(options.func, args);
  const cc = ComchConsumerCompletion.create(dpa);
  onCleanup(t, quietly(() => cc.destroy()));
  cc.setDpaThread(thread);
  cc.setMaxNumConsumers(options.consumers ?? 1);
  cc.setMaxNumRecv(slots * (options.consumers ?? 1));
  cc.start();
  onCleanup(t, quietly(() => cc.stop()));
  const msgq = ComchMsgq.create(dev);
  onCleanup(t, quietly(() => msgq.destroy()));
  msgq.setDpaConsumer(dpa);
  msgq.setMaxNumConsumers(options.consumers ?? 1);
  msgq.setMaxNumProducers(options.producers ?? 1);
  msgq.start();
  const consumers: ComchDpaConsumer[] = [];
  for (let i = 0; i < (options.consumers ?? 1); i++) {
    const consumer = ComchDpaConsumer.create(msgq);
    onCleanup(t, quietly(() => consumer.destroy()));
    consumer.setDatapathOnDpa(dpa);
    consumer.setCompletion(cc, i);
    consumer.setDevMaxNumRecv(slots);
    consumer.start();
    onCleanup(t, quietly(() => consumer.stop()));
    consumers.push(consumer);
  }
  const pe = ProgressEngine.create();
  onCleanup(t, quietly(() => pe.destroy()));
  const channel: ToDpa = { msgq, cc, consumers, thread, counter, cpuProducer: msgq.producerCreate(), pe, send: () => '', completed: 0, failed: [] };
  const producer = channel.cpuProducer;
  onCleanup(t, quietly(() => producer.destroy()));
  pe.connectCtx(producer);
  producer.taskSendSetConf(
    (task: Task) => (channel.completed++, task.free()),
    (task: Task) => (channel.failed.push(task.getStatus()), task.free()),
    slots * 4,
  );
  producer.start();
  onCleanup(t, () => producer.stopAndWait().catch(() => {}));
  const words = [counter.getDpaHandle(dpa), cc.getDpaHandle(), consumers[options.repostTo ?? 0]!.getDpaHandle(), 1n, ...(options.words ?? [])];
  const v = new DataView(new ArrayBuffer(words.length * 8));
  words.forEach((w, i) => v.setBigUint64(i * 8, w, true));
  dpa.h2dMemcpy(args, new Uint8Array(v.buffer));
  thread.start();
  onCleanup(t, quietly(() => thread.stop()));
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
  return channel;
}
