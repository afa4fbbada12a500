/**
 * The fast path trusts nothing a peer writes and loses nothing it delivered: positions across 2^32, a
 * hostile length or offset, a dead claimer, dead endpoint owners, and buffers filled before a stop.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { ComchConsumer } from '../src/comch/consumer.js';
import { ComchServer } from '../src/comch/server.js';
import { QueueView } from '../src/comch/consumer-queue.js';
import type { ComchConsumerPostRecvTask } from '../src/comch/post-recv-task.js';
import { ComchProducer } from '../src/comch/producer.js';
import { openDeviceByPci, openRepresentorByPci } from '../src/core/dev.js';
import { DevinfoRepFilter } from '../src/core/devinfo.js';
import { logBackendCreateWithBuf } from '../src/core/log.js';
import { ProgressEngine } from '../src/core/pe.js';
import { useFabric } from '../src/fabric/fabric.js';
import { setStartPosition } from '../src/fabric/positions.js';
import type { Segment } from '../src/fabric/segment.js';
import { comchPair, sharedMap, until } from './helpers/comch-pair.js';
import { spawnChild } from './helpers/child.js';
import { code } from './helpers/errors.js';
import { tempFabricDir } from './helpers/fabric.js';
import { firstMessage } from './helpers/wait.js';

const queueOf = (consumer: ComchConsumer) => (consumer as unknown as { queue: { segment: Segment } }).queue.segment;
const SLOTS = 256;
const CLAIM_HEAD = 192 / 4;

/** A consumer (on its own engine, which the test progresses) and a producer on the other side. */
async function endpoints(t: Parameters<typeof comchPair>[0], name: string, posted: number, size = 64) {
  const p = await comchPair(t, name);
  const dst = sharedMap(p.arm, posted * size, posted);
  const src = sharedMap(p.host, size, 2);
  const received: ComchConsumerPostRecvTask[] = [];
  const failed: string[] = [];
  const consumer = ComchConsumer.create(p.serverConn, dst.map);
  consumer.taskPostRecvSetConf((task) => received.push(task), (task) => (failed.push(task.getStatus()), task.free()), posted);
  const producer = ComchProducer.create(p.clientConn);
  producer.taskSendSetConf((task) => task.free(), (task) => task.free(), 8);
  const cpe = ProgressEngine.create();
  const ppe = ProgressEngine.create();
  cpe.connectCtx(consumer);
  ppe.connectCtx(producer);
  consumer.start();
  producer.start();
  const progress = () => {
    while (cpe.progress() || ppe.progress());
  };
  await until(() => (progress(), consumer.state === 'RUNNING'), 'the consumer to start');
  for (let i = 0; i < posted; i++) consumer.taskPostRecvAllocInit(dst.buf(i * size, size)).submit();
  const payload = src.inv.bufGetByData(src.map, src.mem.subarray(0, size));
  const send = (text: string) => {
    src.mem.set(new TextEncoder().encode(text.padEnd(size, '.')).subarray(0, size));
    const task = producer.taskSendAllocInit(payload, undefined, consumer.getId());
    try {
      task.submit();
    } catch (err) {
      task.free(); // a refused submission leaves the task with its owner
      throw err;
    }
  };
  t.after(async () => {
    for (const ctx of [consumer, producer]) if (ctx.state !== 'IDLE') await ctx.stopAndWait().catch(() => {});
  });
  return { p, consumer, producer, cpe, ppe, progress, send, received, failed, dst };
}

test('positions across 2^32 with a slot count that is not a power of two: every message arrives, in order', { timeout: 60_000 }, async (t) => {
  setStartPosition(2 ** 32 - 40);
  t.after(() => setStartPosition(0));
  const { progress, send, received } = await endpoints(t, 'wrap', 3);
  const got: string[] = [];
  for (let i = 0; i < 200; i++) {
    send(`m${i}`);
    progress();
    const task = received.shift();
    assert.ok(task, `message ${i} arrived`);
    got.push(new TextDecoder().decode(task.getBuf().getData()).replace(/\.+$/, ''));
    task.submit(); // post it again: positions move on past the wrap
  }
  assert.deepEqual(got, Array.from({ length: 200 }, (_, i) => `m${i}`));
});

test('a length beyond what was posted fails the consumer with CONNECTION_ABORTED; nothing past the buffer is read', { timeout: 60_000 }, async (t) => {
  const lines: string[] = [];
  const log = logBackendCreateWithBuf((line) => lines.push(line), { sdk: true });
  t.after(() => log.destroy());
  const { consumer, ppe, cpe, send, received, failed } = await endpoints(t, 'hostile-length', 4);
  send('hello');
  while (ppe.progress());
  const q = queueOf(consumer);
  new DataView(q.u8.buffer).setUint32(SLOTS + 16, 3000, true); // the producer "reports" 3000 bytes in a 64-byte buffer
  await until(() => (cpe.progress(), consumer.state === 'IDLE'), 'the consumer to fail');
  assert.equal(received.length, 0, 'no receive completed with the forged length');
  assert.deepEqual(failed, Array(4).fill('DOCA_ERROR_CONNECTION_ABORTED'));
  assert.match(lines.join(''), /reported 3000 bytes in a 64-byte buffer/);
});

test('a posted buffer outside the consumer\'s memory fails the send with CONNECTION_ABORTED and claims nothing', { timeout: 60_000 }, async (t) => {
  const { consumer, producer, send } = await endpoints(t, 'hostile-offset', 4);
  const q = queueOf(consumer);
  new DataView(q.u8.buffer).setFloat64(SLOTS + 8, 2 ** 40, true);
  const head = Atomics.load(q.i32, CLAIM_HEAD);
  assert.throws(() => send('x'), code('DOCA_ERROR_CONNECTION_ABORTED', /posted a 64-byte buffer at byte 1099511627776/));
  assert.equal(Atomics.load(q.i32, CLAIM_HEAD), head, 'no slot was claimed');
  assert.equal(producer.state, 'RUNNING', 'the producer itself is fine');
});

test('a consumer stopped with buffers it has not taken yet completes them successfully, and flushes the rest', { timeout: 60_000 }, async (t) => {
  const { consumer, ppe, cpe, send, received, failed } = await endpoints(t, 'stop-delivers', 4);
  send('first');
  send('second');
  while (ppe.progress());
  consumer.stop();
  await until(() => (cpe.progress(), received.length + failed.length === 4), 'every posted buffer to complete');
  assert.deepEqual(
    received.map((task) => new TextDecoder().decode(task.getBuf().getData()).replace(/\.+$/, '')),
    ['first', 'second'],
  );
  assert.deepEqual(failed, ['DOCA_ERROR_SHUTDOWN', 'DOCA_ERROR_SHUTDOWN']);
  received.forEach((task) => task.free());
  await until(() => (cpe.progress(), consumer.state === 'IDLE'), 'the consumer to stop');
});

test('a claim whose producer thread died is posted again: the consumer is not wedged', { timeout: 60_000 }, async (t) => {
  const { p, consumer, progress, send, received } = await endpoints(t, 'dead-claim', 2);
  // A producer in a worker; the test then claims a buffer in its name (as if it died between claim and fill).
  const url = new URL('../src/comch/producer.js', import.meta.url).href;
  const source = `
    const { workerData, parentPort } = require('node:worker_threads');
    import(workerData.url).then(({ ComchProducer }) => {
      const producer = ComchProducer.create(workerData.ref);
      parentPort.postMessage(producer.entry);
      setInterval(() => {}, 1000);
    });`;
  const worker = new Worker(source, { eval: true, workerData: { url, ref: p.clientConn.share() } });
  const entry = await firstMessage<number>(worker, "the worker's producer entry");
  const q = queueOf(consumer);
  const view = new QueueView(q, Number.MAX_SAFE_INTEGER);
  assert.ok(typeof view.claim(1, entry + 1) === 'object', 'the worker\'s producer holds a claim');
  await worker.terminate();
  send('after');
  await until(() => (progress(), received.length === 1), 'the live producer\'s message to arrive past the dead claim', 5000);
  assert.equal(new TextDecoder().decode(received[0]!.getBuf().getData()).replace(/\.+$/, ''), 'after');
  assert.equal(consumer.state, 'RUNNING');
  received[0]!.free();
});

test('a worker that ends owning a producer and a consumer: the context stops without IN_USE and the peer sees the consumer expire', { timeout: 60_000 }, async (t) => {
  const p = await comchPair(t, 'dead-worker');
  const source = `
    const { workerData, parentPort } = require('node:worker_threads');
    Promise.all([import(workerData.base + 'comch/producer.js'), import(workerData.base + 'comch/consumer.js'), import(workerData.base + 'core/pe.js'), import(workerData.base + 'core/memory.js'), import(workerData.base + 'core/mmap.js')]).then(async ([{ ComchProducer }, { ComchConsumer }, { ProgressEngine }, { allocSharedMemory }, { Mmap, AccessFlag }]) => {
      const mem = allocSharedMemory(4096);
      const map = Mmap.create();
      map.setMemrange(mem);
      map.setPermissions(AccessFlag.LOCAL_READ_WRITE | AccessFlag.PCI_READ_WRITE);
      map.start();
      const pe = ProgressEngine.create();
      const consumer = ComchConsumer.create(workerData.ref, map);
      const producer = ComchProducer.create(workerData.ref);
      consumer.taskPostRecvSetConf(() => {}, () => {}, 2);
      producer.taskSendSetConf(() => {}, () => {}, 2);
      pe.connectCtx(consumer);
      pe.connectCtx(producer);
      consumer.start();
      producer.start();
      void pe.run({ until: () => false });
      await consumer.waitForState('RUNNING', { timeoutMs: 5000 });
      parentPort.postMessage(consumer.getId());
    });`;
  const base = new URL('../src/', import.meta.url).href;
  const worker = new Worker(source, { eval: true, workerData: { base, ref: p.clientConn.share() } });
  const id = await firstMessage<number>(worker, "the worker's consumer id");
  await until(() => p.events.includes(`server new ${id}`), 'the server to hear of the worker\'s consumer');
  assert.throws(() => p.client.stop(), code('DOCA_ERROR_IN_USE'), 'while the worker lives, its endpoints count');
  await worker.terminate();
  await until(() => p.events.includes(`server expired ${id}`), 'the peer to see the dead worker\'s consumer expire', 5000);
  assert.equal(p.client.stop(), 'DOCA_ERROR_IN_PROGRESS', 'no IN_USE: the dead thread\'s endpoints were reaped');
  await p.client.waitForState('IDLE', { timeoutMs: 5000 });
});

test('iterators and sends honour timeoutMs', { timeout: 60_000 }, async (t) => {
  const p = await comchPair(t, 'timeouts');
  const dst = sharedMap(p.arm, 4096, 2);
  const consumer = ComchConsumer.create(p.serverConn, dst.map);
  consumer.taskPostRecvSetConf(() => {}, () => {}, 2);
  const producer = ComchProducer.create(p.clientConn);
  producer.taskSendSetConf(() => {}, () => {}, 2);
  const cpe = ProgressEngine.create();
  cpe.connectCtx(consumer);
  cpe.connectCtx(producer);
  p.drive(cpe);
  consumer.start();
  producer.start();
  await consumer.waitForState('RUNNING', { timeoutMs: 5000 });
  const messages = consumer.messages([dst.buf(0, 1024)], { timeoutMs: 50 });
  await assert.rejects(messages.next(), code('DOCA_ERROR_TIME_OUT', /nothing arrived within 50 ms/));
  // The peer's consumer has nothing posted once this one's iterator ended: sends see AGAIN until the timeout.
  const src = sharedMap(p.host, 64, 2);
  await assert.rejects(
    producer.send(src.buf(0, 64), { consumerId: consumer.getId() + 1000, timeoutMs: 50 }),
    code('DOCA_ERROR_NOT_CONNECTED'),
    'an unknown consumer is refused at once',
  );
  const dst2 = sharedMap(p.arm, 64, 1);
  const idle = ComchConsumer.create(p.serverConn, dst2.map);
  idle.taskPostRecvSetConf(() => {}, () => {}, 1);
  cpe.connectCtx(idle);
  idle.start();
  await idle.waitForState('RUNNING', { timeoutMs: 5000 });
  await until(() => p.events.includes(`client new ${idle.getId()}`), 'the client to hear of the idle consumer');
  await assert.rejects(
    producer.send(src.inv.bufGetByData(src.map, src.mem.subarray(0, 8)), { consumerId: idle.getId(), timeoutMs: 50, retry: { immediate: 0, delayed: 1000, delayMs: 5 } }),
    code('DOCA_ERROR_TIME_OUT', /did not complete within 50 ms/),
  );
  await idle.stopAndWait();
});

test('messages whose sends completed before the producer\'s process died are all received', { timeout: 60_000 }, async (t) => {
  const dir = tempFabricDir(t);
  useFabric({ dir });
  const arm = openDeviceByPci('03:00.0');
  const server = ComchServer.create(arm, openRepresentorByPci(arm, DevinfoRepFilter.NET, 'b1:00.0'), 'burst');
  const pe = ProgressEngine.create();
  pe.connectCtx(server);
  server.taskSendSetConf((task) => task.free(), (task) => task.free(), 4);
  server.start();
  const ac = new AbortController();
  const driving = pe.run({ signal: ac.signal, until: () => false });
  t.after(async () => {
    await server.stopTree().catch(() => {});
    ac.abort();
    await driving;
  });
  const child = spawnChild(t, 'fp-burst', ['burst', '8'], { env: { SOFTDPU_FABRIC: dir } });
  await until(() => server.connections.length === 1, 'the client to connect', 10_000);
  const dst = sharedMap(arm, 8 * 64, 8);
  const consumer = ComchConsumer.create(server.connections[0]!, dst.map);
  const received: string[] = [];
  const failed: string[] = [];
  consumer.taskPostRecvSetConf(
    (task) => (received.push(new TextDecoder().decode(task.getBuf().getData())), task.free()),
    (task) => (failed.push(task.getStatus()), task.free()),
    8,
  );
  const cpe = ProgressEngine.create();
  cpe.connectCtx(consumer);
  consumer.start();
  await until(() => (cpe.progress(), consumer.state === 'RUNNING'), 'the consumer to start');
  for (let i = 0; i < 8; i++) consumer.taskPostRecvAllocInit(dst.buf(i * 64, 64)).submit();
  // The consumer's engine is not progressed: the producer's completed sends sit in its posted buffers.
  await child.waitFor(/^sent 8$/);
  child.proc.kill('SIGKILL');
  await until(() => server.connections.length === 0, 'the server to see the client die', 10_000);
  await until(() => (cpe.progress(), consumer.state === 'IDLE'), 'the consumer to fail and stop', 10_000);
  assert.deepEqual(received, Array.from({ length: 8 }, (_, i) => `m${i}`), 'delivered before the death, so received');
  assert.deepEqual(failed, []);
  consumer.destroy();
});
