/**
 * A producer reads its consumer's entry once per RECHECK_SENDS sends (producer.ts), not on every send:
 * a consumer whose thread died with buffers posted (it never withdrew them) takes a bounded number of
 * sends more, which complete into its queue, and then every send fails with NOT_CONNECTED. A consumer
 * that stops properly withdraws its buffers, so the first send after finds none and fails at once.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { ComchConsumer } from '../src/comch/consumer.js';
import { ComchProducer, RECHECK_SENDS } from '../src/comch/producer.js';
import type { ComchProducerSendTask } from '../src/comch/producer-task.js';
import { DocaError } from '../src/core/error.js';
import { ProgressEngine } from '../src/core/pe.js';
import { type Pair, comchPair, sharedMap, until } from './helpers/comch-pair.js';
import { firstMessage } from './helpers/wait.js';

const POSTED = 128;

/** A worker with a consumer on the server side that posts POSTED buffers; resolves with it and its consumer id. */
async function consumerInWorker(p: Pair): Promise<{ worker: Worker; id: number }> {
  const base = new URL('../src/', import.meta.url).href;
  const helpers = new URL('./helpers/comch-pair.js', import.meta.url).href;
  const source = `
    const { workerData, parentPort } = require('node:worker_threads');
    (async () => {
      const [{ ComchConsumer }, { ProgressEngine }, { openDeviceByPci }, { useFabric }, { sharedMap }] = await Promise.all(
        ['comch/consumer.js', 'core/pe.js', 'core/dev.js', 'fabric/fabric.js'].map((f) => import(workerData.base + f)).concat(import(workerData.helpers)));
      useFabric({ dir: workerData.dir });
      const { map, buf } = sharedMap(openDeviceByPci('03:00.0'), 64 * workerData.posted, workerData.posted);
      const pe = ProgressEngine.create();
      const consumer = ComchConsumer.create(workerData.ref, map);
      consumer.taskPostRecvSetConf((t) => t.submit(), (t) => t.free(), workerData.posted);
      pe.connectCtx(consumer);
      void pe.run({ until: () => false }); // until terminated, its buffers posted
      consumer.start();
      await consumer.waitForState('RUNNING', { timeoutMs: 10000 });
      for (let i = 0; i < workerData.posted; i++) consumer.taskPostRecvAllocInit(buf(i * 64, 64)).submit();
      parentPort.postMessage(consumer.getId());
    })();`;
  const worker = new Worker(source, { eval: true, workerData: { base, helpers, ref: p.serverConn.share(), dir: p.arm.fabric.dir, posted: POSTED } });
  const id = await firstMessage<number>(worker, "the worker's consumer id, its buffers posted");
  return { worker, id };
}

/** A started producer on the client's connection, on an engine the pair drives; `sent` counts completions. */
function producerOf(p: Pair): { sent: () => number; send(id: number): void } {
  const { buf } = sharedMap(p.host, 64 * 4, 4);
  const pe = ProgressEngine.create();
  const producer = ComchProducer.create(p.clientConn);
  let sent = 0;
  const done = (t: ComchProducerSendTask) => (t.getBuf().decRefcount(), t.free());
  producer.taskSendSetConf((t) => (sent++, done(t)), done, 4);
  pe.connectCtx(producer);
  p.drive(pe);
  producer.start();
  return {
    sent: () => sent,
    send(id) {
      const task = producer.taskSendAllocInit(buf(0, 64), undefined, id);
      try {
        task.submit();
      } catch (err) {
        done(task);
        throw err;
      }
    },
  };
}

/** Sends one at a time (each completion taken before the next) until a send throws; returns how many completed, and the error. */
async function sendUntilRefused(p: ReturnType<typeof producerOf>, id: number): Promise<{ completed: number; err: unknown }> {
  const before = p.sent();
  for (let i = 0; i < 2 * POSTED; i++) {
    try {
      p.send(id);
    } catch (err) {
      return { completed: p.sent() - before, err };
    }
    await until(() => p.sent() - before === i + 1, `send ${i + 1} to complete`, 5000);
  }
  return { completed: p.sent() - before, err: undefined };
}

test(`a consumer that died with buffers posted takes at most ${RECHECK_SENDS} sends more, then NOT_CONNECTED`, { timeout: 60_000 }, async (t) => {
  const p = await comchPair(t, 'dead-consumer');
  const { worker, id } = await consumerInWorker(p);
  const prod = producerOf(p);
  for (let i = 0; i < 4; i++) {
    prod.send(id); // the producer now remembers the consumer
    await until(() => prod.sent() === i + 1, `send ${i + 1} to complete`, 5000);
  }
  await worker.terminate(); // dies with 124 buffers still posted
  await until(() => p.events.includes(`client expired ${id}`), 'the client to hear that the consumer expired', 10_000);
  const { completed, err } = await sendUntilRefused(prod, id);
  assert.ok(err instanceof DocaError && err.code === 'DOCA_ERROR_NOT_CONNECTED', `sends end with NOT_CONNECTED (${String(err)})`);
  assert.ok(completed < RECHECK_SENDS, `${completed} sends completed into the dead consumer's queue (bound ${RECHECK_SENDS})`);
  t.diagnostic(`${completed} sends completed after the consumer's death was known`);
});

test('a consumer that stopped withdrew its buffers: the next send fails with NOT_CONNECTED at once', { timeout: 60_000 }, async (t) => {
  const p = await comchPair(t, 'stopped-consumer');
  const { map, buf } = sharedMap(p.arm, 64 * 8, 8);
  const cpe = ProgressEngine.create();
  const consumer = ComchConsumer.create(p.serverConn, map);
  consumer.taskPostRecvSetConf((task) => task.submit(), (task) => task.free(), 8);
  cpe.connectCtx(consumer);
  p.drive(cpe);
  consumer.start();
  await consumer.waitForState('RUNNING', { timeoutMs: 5000 });
  for (let i = 0; i < 8; i++) consumer.taskPostRecvAllocInit(buf(i * 64, 64)).submit();
  const prod = producerOf(p);
  prod.send(consumer.getId());
  await until(() => prod.sent() === 1, 'the first send to complete', 5000);
  await consumer.stopAndWait();
  const { completed, err } = await sendUntilRefused(prod, consumer.getId());
  assert.equal(completed, 0, 'no send completed into a stopped consumer');
  assert.ok(err instanceof DocaError && err.code === 'DOCA_ERROR_NOT_CONNECTED', String(err));
});
