/**
 * The CPU side's trust gaps around dead threads (issue 18): a CPU producer that dies between claiming a
 * DPA consumer's receive and filling it, and a worker thread that dies owning a producer.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { QueueView } from '../src/comch/consumer-queue.js';
import { openDeviceByPci } from '../src/core/dev.js';
import type { Segment } from '../src/fabric/segment.js';
import { toDpaChannel } from './helpers/dpa-channel.js';
import { dpaFabric, eventually, startDpa } from './helpers/dpa.js';
import { firstMessage } from './helpers/wait.js';

/** A CPU producer of `ref`'s MsgQ in a worker thread: resolves with its endpoint entry and the worker. */
async function producerInWorker(ref: unknown): Promise<{ entry: number; worker: Worker }> {
  const url = new URL('../src/comch/producer.js', import.meta.url).href;
  const source = `
    const { workerData, parentPort } = require('node:worker_threads');
    import(workerData.url).then(({ ComchProducer }) => {
      const producer = ComchProducer._createOnMsgq(workerData.ref);
      parentPort.postMessage(producer.entry);
      setInterval(() => {}, 1000);
    });`;
  const worker = new Worker(source, { eval: true, workerData: { url, ref } });
  const entry = await firstMessage<number>(worker, "the worker's producer entry");
  return { entry, worker };
}

test('a DPA consumer\'s receive claimed by a CPU producer that died before filling it is posted again: the consumer is not wedged', { timeout: 30_000 }, async (t) => {
  dpaFabric(t, { numEus: 2 });
  const dev = openDeviceByPci('03:00.0');
  const dpa = startDpa(t, dev, 'crash');
  const channel = toDpaChannel(t, dpa, dev, { func: 'counting_consumer', producers: 2 });
  const consumer = channel.consumers[0]!;
  dpa.rpc('post', consumer.getDpaHandle(), 2n);
  const segment = (consumer as unknown as { queue: { segment: Segment } }).queue.segment;
  const queue = new QueueView(segment, segment.size);
  // A producer in a worker claims the first receive (the test claims it in its name) and dies unfilled.
  const { entry, worker } = await producerInWorker(channel.msgq._started('test'));
  assert.ok(typeof queue.claim(0, entry + 1) === 'object', 'the worker\'s producer holds a claim');
  await worker.terminate();
  assert.equal(channel.send(new Uint8Array([1])), 'ok', 'the second receive takes a live send');
  await eventually(() => channel.counter.get() === 1n, 'the live message, past the dead claim (the head stayed on it before)');
  // The dead claim's receive was posted again: credits are as many as before.
  assert.equal(channel.send(new Uint8Array([2])), 'ok');
  assert.equal(channel.send(new Uint8Array([3])), 'ok');
  await eventually(() => channel.counter.get() === 3n, 'both, on the credits given back');
  // A claim whose producer died before writing its name (claimer 0) is given up after a bounded time too.
  assert.ok(typeof queue.claim(0, 0) === 'object');
  assert.equal(channel.send(new Uint8Array([4])), 'ok');
  await eventually(() => channel.counter.get() === 4n, 'the message past the anonymous claim', 10_000);
  assert.equal(dpa.peekAtLastError(), undefined);
});
