/**
 * A worker thread that dies owning a producer (issue 18, CPU-side trust gaps): the objects a dead thread
 * created go with it, as a dead process's do, so its context stops without IN_USE however the thread
 * ended: process.exit() in the middle of sending, terminate(), a `crash` fault at a send, or its event
 * loop simply running dry. The client is asked right after the thread is gone.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { ComchConsumer } from '../src/comch/consumer.js';
import { type Pair, comchPair, sharedMap, until } from './helpers/comch-pair.js';
import { code } from './helpers/errors.js';
import { firstMessage } from './helpers/wait.js';

type Death = 'exit' | 'terminate' | 'fault' | 'dry';

/**
 * A worker whose producer sends to the server's consumer `consumer` over `p`'s client connection; once
 * its sends completed it calls `whileAlive`, then dies (`how`) and the returned promise resolves once it
 * has exited.
 */
async function producerThatDies(p: Pair, consumer: number, how: Death, whileAlive: () => void): Promise<void> {
  const base = new URL('../src/', import.meta.url).href;
  const helpers = new URL('./helpers/comch-pair.js', import.meta.url).href;
  const source = `
    const { workerData, parentPort } = require('node:worker_threads');
    (async () => {
      const [{ ComchProducer }, { ProgressEngine }, { openDeviceByPci }, { useFabric }, { Faults }, { sharedMap }] = await Promise.all(
        ['comch/producer.js', 'core/pe.js', 'core/dev.js', 'fabric/fabric.js', 'fabric/faults/api.js'].map((f) => import(workerData.base + f)).concat(import(workerData.helpers)));
      useFabric({ dir: workerData.dir });
      const { buf } = sharedMap(openDeviceByPci('b1:00.0'), 64 * 4, 4);
      const pe = ProgressEngine.create();
      const producer = ComchProducer.create(workerData.ref);
      let done = 0;
      producer.taskSendSetConf((t) => (done++, t.getBuf().decRefcount(), t.free()), (t) => (t.getBuf().decRefcount(), t.free()), 4);
      pe.connectCtx(producer);
      producer.start();
      const send = () => {
        try {
          producer.taskSendAllocInit(buf((done % 4) * 64, 64), undefined, workerData.consumer).submit();
        } catch {}
        while (pe.progress());
      };
      while (done < 8) {
        send();
        await new Promise((r) => setImmediate(r));
      }
      parentPort.once('message', () => {
        if (workerData.how === 'exit') process.exit(1);
        if (workerData.how === 'fault') {
          Faults.add({ kind: 'crash', scope: 'thread', match: { ctx: 'doca_comch_producer', task: 'send', thread: 'worker' } });
          send();
        }
        parentPort.close(); // 'dry': nothing keeps the event loop alive; the worker ends without destroying its producer
      });
      parentPort.postMessage('sent');
      if (workerData.how === 'terminate') setInterval(() => {}, 1000);
    })();`;
  const worker = new Worker(source, { eval: true, workerData: { base, helpers, ref: p.clientConn.share(), dir: p.host.fabric.dir, consumer, how } });
  const exited = new Promise<number>((resolve) => worker.once('exit', resolve));
  await firstMessage(worker, 'the worker to say it sent');
  whileAlive();
  if (how === 'terminate') void worker.terminate();
  else worker.postMessage('die');
  await exited;
}

for (const how of ['exit', 'terminate', 'fault', 'dry'] as const) {
  test(`a worker that dies owning a producer (${how}): the client stops without IN_USE`, { timeout: 30_000 }, async (t) => {
    const p = await comchPair(t, `dead-owner-${how}`);
    const { map, buf } = sharedMap(p.arm, 64 * 8, 8);
    const consumer = ComchConsumer.create(p.serverConn, map);
    let received = 0;
    consumer.taskPostRecvSetConf((task) => (received++, task.submit()), (task) => task.free(), 8);
    p.pe.connectCtx(consumer);
    consumer.start();
    await consumer.waitForState('RUNNING', { timeoutMs: 5000 });
    for (let i = 0; i < 8; i++) consumer.taskPostRecvAllocInit(buf(i * 64, 64)).submit();
    await producerThatDies(p, consumer.getId(), how, () => {
      assert.throws(() => p.client.stop(), code('IN_USE'), 'while the worker lives, its producer counts');
    });
    assert.ok(received > 0, 'the worker sent before it died');
    // Right after its death (an answer about the thread cached a moment ago said alive: IN_USE before).
    assert.equal(p.client.stop(), 'DOCA_ERROR_IN_PROGRESS', 'no IN_USE: the dead thread\'s producer went with it');
    await until(() => p.client.getState() === 0, 'the client to reach IDLE', 10_000);
    await consumer.stopAndWait();
    consumer.destroy();
  });
}
