/**
 * Comch MsgQs between the CPU and the DPA: a ping-pong over two queues checking every byte and the
 * order, DOCA's direction, size and ack rules, immediate data views that die with their ack, consumer
 * completions that activate only while armed, producer completions and their error type, dmaCopy, and
 * a teardown under load that leaves nothing behind.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { MsgqPingPong } from '../src/cli/samples/msgq-pingpong.js';
import { ComchMsgq } from '../src/comch/msgq.js';
import type { Dev } from '../src/core/dev.js';
import { openDeviceByPci } from '../src/core/dev.js';
import { DocaErrorCode } from '../src/core/error.js';
import { allocSharedMemory } from '../src/core/memory.js';
import { AccessFlag, Mmap } from '../src/core/mmap.js';
import { ProgressEngine } from '../src/core/pe.js';
import type { Task } from '../src/core/task.js';
import { ComchConsumerCompletion } from '../src/dpa/consumer-completion.js';
import { ComchDpaConsumer } from '../src/dpa/comch-consumer.js';
import { ComchDpaProducer } from '../src/dpa/comch-producer.js';
import { DpaCompletion } from '../src/dpa/completion.js';
import type { Dpa } from '../src/dpa/dpa.js';
import { CQE_SIZE, RETURNED_SIZE } from '../src/dpa/objects.js';
import { DpaThread } from '../src/dpa/thread.js';
import { setStartPosition } from '../src/fabric/positions.js';
import { SyncEvent } from '../src/sync-event/sync-event.js';
import { dpaFabric, eventually, memfds, onCleanup, openFds, startDpa, threadCount } from './helpers/dpa.js';
import { code } from './helpers/errors.js';

const E = DocaErrorCode;
const SLOTS = 16;

/**
 * Both directions, built by hand in DOCA's order: CPU -> DPA (a CPU producer, a DPA consumer on a
 * consumer completion context of thread `counting_consumer`) and DPA -> CPU (a DPA producer completing
 * into `sent`, a CPU consumer that records what it receives). Everything is torn down children first.
 */
function channel(t: TestContext, dpa: Dpa, dev: Dev, options: { rearm: boolean; posted: number }) {
  const counter = SyncEvent.create();
  counter.addPublisherLocationDpa(dpa);
  counter.addSubscriberLocationCpu(dev);
  counter.start();
  onCleanup(t, () => (counter.stop(), counter.destroy()));
  const args = dpa.memAlloc(32);
  const thread = DpaThread.create(dpa);
  onCleanup(t, () => thread.destroy());
  thread.setFuncArg('counting_consumer', args);
  const cc = ComchConsumerCompletion.create(dpa);
  onCleanup(t, () => cc.destroy());
  cc.setDpaThread(thread);
  cc.setMaxNumRecv(SLOTS);
  cc.start();
  onCleanup(t, quietly(() => cc.stop()));
  const sent = DpaCompletion.create(dpa, 4);
  onCleanup(t, () => sent.destroy());
  sent.start();
  onCleanup(t, quietly(() => sent.stop()));
  const toDpa = ComchMsgq.create(dev);
  onCleanup(t, () => toDpa.destroy());
  toDpa.setDpaConsumer(dpa);
  toDpa.start();
  const consumer = ComchDpaConsumer.create(toDpa);
  onCleanup(t, () => consumer.destroy());
  assert.throws(() => consumer.getDpaHandle(), code('BAD_STATE', /not started/));
  assert.throws(() => consumer.start(), code('BAD_STATE', /data path is not on the DPA/));
  consumer.setDatapathOnDpa(dpa);
  assert.throws(() => consumer.start(), code('BAD_STATE', /no consumer completion context/));
  consumer.setCompletion(cc, 7);
  assert.throws(() => consumer.start(), code('BAD_STATE', /no number of receives/));
  consumer.setDevMaxNumRecv(SLOTS - 3);
  assert.equal(consumer.getDevMaxNumRecv(), SLOTS, 'rounded up to a power of two');
  consumer.start();
  onCleanup(t, quietly(() => consumer.stop()));
  const fromDpa = ComchMsgq.create(dev);
  onCleanup(t, () => fromDpa.destroy());
  fromDpa.setDpaProducer(dpa);
  fromDpa.start();
  const producer = ComchDpaProducer.create(fromDpa);
  onCleanup(t, () => producer.destroy());
  producer.setDatapathOnDpa(dpa);
  assert.throws(() => producer.start(), code('BAD_STATE', /no DPA completion/));
  producer.dpaCompletionAttach(sent);
  producer.setDevMaxNumSend(4);
  producer.start();
  onCleanup(t, quietly(() => producer.stop()));
  const pe = ProgressEngine.create();
  onCleanup(t, () => pe.destroy());
  const free = (task: Task) => task.free();
  const cpuProducer = toDpa.producerCreate();
  onCleanup(t, () => cpuProducer.destroy());
  pe.connectCtx(cpuProducer);
  cpuProducer.taskSendSetConf(free, free, SLOTS * 2);
  cpuProducer.start();
  onCleanup(t, () => cpuProducer.stopAndWait());
  const cpuConsumer = fromDpa.consumerCreate();
  onCleanup(t, () => cpuConsumer.destroy());
  pe.connectCtx(cpuConsumer);
  cpuConsumer.setImmDataLen(32);
  const received: { imm: number[]; producer: number }[] = [];
  cpuConsumer.taskPostRecvSetConf(
    (task) => {
      received.push({ imm: [...(task.getImmData() ?? [])], producer: task.getProducerId() });
      task.free();
    },
    free,
    SLOTS,
  );
  cpuConsumer.start();
  onCleanup(t, () => cpuConsumer.stopAndWait());
  for (let i = 0; i < options.posted; i++) cpuConsumer.taskPostRecvAllocInit().submit();
  const a = new DataView(new ArrayBuffer(32));
  [counter.getDpaHandle(dpa), cc.getDpaHandle(), consumer.getDpaHandle(), options.rearm ? 1n : 0n].forEach((v, i) => a.setBigUint64(i * 8, v, true));
  dpa.h2dMemcpy(args, new Uint8Array(a.buffer));
  thread.start();
  onCleanup(t, quietly(() => thread.stop()));
  thread.run();
  /** A CPU send to the DPA consumer; the DOCA error name it was refused with, or 'ok'. */
  const send = (imm: Uint8Array): string => {
    const task = cpuProducer.taskSendAllocInit(undefined, imm, consumer.getId());
    try {
      task.submit();
      return 'ok';
    } catch (err) {
      task.free();
      return (err as { code: string }).code;
    }
  };
  const progress = () => {
    while (pe.progress());
  };
  return { counter, thread, cc, sent, toDpa, fromDpa, consumer, producer, cpuProducer, cpuConsumer, received, send, progress, pe };
}

/** `stop`, where the test may have stopped it already (BAD_STATE then). */
function quietly(stop: () => unknown): () => unknown {
  return () => {
    try {
      return stop();
    } catch (err) {
      if ((err as { code?: string }).code !== 'DOCA_ERROR_BAD_STATE') throw err;
      return undefined;
    }
  };
}

/**
 * A window for an activation that must not happen: one that did would have run within it. A slow
 * machine can only hide such an activation, never make the check after it fail wrongly.
 */
const settle = (ms = 60) => new Promise((r) => setTimeout(r, ms));

for (const [poll, wrap] of [[false, false], [true, false], [false, true]] as const) {
  const how = `${poll ? 'both polling' : 'DPA thread activated by completions'}${wrap ? ', every position crossing 2^32' : ''}`;
  test(`ping-pong CPU -> DPA -> CPU over two MsgQs (${how}): every byte, every order`, { timeout: 30_000 }, async (t) => {
    dpaFabric(t, { numEus: 2 });
    if (wrap) {
      // Queues, completion rings and returned-element positions all start 300 below 2^32: 600 messages wrap them.
      setStartPosition(2 ** 32 - 300);
      t.after(() => setStartPosition(0));
    }
    const dev = openDeviceByPci(poll ? 'b1:00.0' : '03:00.0');
    const n = 600;
    const pp = MsgqPingPong.open({ dev, poll, expected: n, queue: 8 });
    onCleanup(t, () => pp.close());
    const answers: Uint8Array[] = [];
    pp.onReply = (imm) => answers.push(imm.slice());
    for (let i = 0; i < n; i++) {
      const msg = new Uint8Array(i % 33).map((_, k) => (i * 7 + k) & 0xff); // 0 to 32 bytes
      pp.send(msg);
      const deadline = performance.now() + 5000;
      while (answers.length <= i) {
        if (pp.pe.progress()) continue;
        if (performance.now() > deadline) throw new Error(`no answer to message ${i}`);
        if (!poll) await new Promise((r) => setImmediate(r));
      }
      assert.deepEqual([...answers[i]!], [...msg], `answer ${i}`);
    }
    assert.equal(answers.length, n, 'nothing extra');
    await eventually(() => pp.answered() === BigInt(n), 'the DPA count');
    await pp.close();
  });
}

test('directions: DPA endpoints only on the DPA side of a MsgQ, CPU endpoints only on the CPU side', { timeout: 30_000 }, async (t) => {
  dpaFabric(t, { numEus: 1 });
  const dev = openDeviceByPci('03:00.0');
  const dpa = startDpa(t, dev, 'msgq');
  const toDpa = ComchMsgq.create(dev);
  onCleanup(t, () => toDpa.destroy());
  assert.throws(() => toDpa.consumerCreate(), code('BAD_STATE', /not started/));
  toDpa.setDpaConsumer(dpa);
  assert.throws(() => toDpa.setDpaProducer(dpa), code('INVALID_VALUE', /carries one direction/));
  toDpa.start();
  assert.throws(() => toDpa.setMaxNumConsumers(2), code('BAD_STATE', /configure it before start/));
  assert.throws(() => ComchDpaProducer.create(toDpa), code('NOT_PERMITTED', /producers of comch msgq \d+ are on the CPU \(its consumers are on the DPA/));
  assert.throws(() => toDpa.consumerCreate(), code('NOT_PERMITTED', /live on DPA of 0000:03:00\.0: create them with ComchDpaConsumer\.create/));
  const fromDpa = ComchMsgq.create(dev);
  onCleanup(t, () => fromDpa.destroy());
  fromDpa.setDpaProducer(dpa);
  fromDpa.start();
  assert.throws(() => ComchDpaConsumer.create(fromDpa), code('NOT_PERMITTED'));
  assert.throws(() => fromDpa.producerCreate(), code('NOT_PERMITTED'));
  const host = openDeviceByPci('b1:00.0');
  const other = ComchMsgq.create(host);
  assert.throws(() => other.setDpaConsumer(dpa), code('INVALID_VALUE', /is not on device 0000:b1:00\.0/));
  other.destroy();
  const consumer = ComchDpaConsumer.create(toDpa);
  assert.throws(() => toDpa.stop(), code('IN_USE', /still exist/));
  assert.throws(() => consumer.setDatapathOnDpa(startDpa(t, dev, 'msgq')), code('INVALID_VALUE', /not DPA .*, the DPA of/));
  consumer.destroy();
});

test('sizes and acks: more than 32 bytes, more receives than the queue holds, more acks than were returned are refused and change nothing', { timeout: 30_000 }, async (t) => {
  dpaFabric(t, { numEus: 2 });
  const dev = openDeviceByPci('03:00.0');
  const dpa = startDpa(t, dev, 'msgq');
  const c = channel(t, dpa, dev, { rearm: true, posted: 0 });
  assert.throws(() => c.cpuProducer.taskSendAllocInit(undefined, new Uint8Array(33), c.consumer.getId()), code('INVALID_VALUE', /33 bytes exceeds 32/));
  assert.equal(c.send(new Uint8Array(4)), 'DOCA_ERROR_AGAIN', 'the DPA consumer posted no receive yet');
  const consumer = c.consumer.getDpaHandle();
  assert.equal(dpa.rpc('try_ack', consumer, BigInt(SLOTS + 1)), BigInt(E.DOCA_ERROR_INVALID_VALUE), 'more receives than the queue holds');
  assert.equal(c.send(new Uint8Array(4)), 'DOCA_ERROR_AGAIN', 'and nothing was posted');
  assert.equal(dpa.rpc('try_ack', consumer, BigInt(SLOTS)), 0n);
  assert.equal(dpa.rpc('try_ack', consumer, 1n), BigInt(E.DOCA_ERROR_INVALID_VALUE), 'the queue is full of posted receives');
  assert.equal(dpa.rpc('try_completion_ack', c.cc.getDpaHandle(), 1n), BigInt(E.DOCA_ERROR_INVALID_VALUE), 'no completion was returned');
  for (let i = 0; i < SLOTS; i++) assert.equal(c.send(new Uint8Array([i])), 'ok', `credit ${i}`);
  await eventually(() => c.counter.get() === BigInt(SLOTS), 'the DPA thread to count them');
  assert.equal(dpa.rpc('try_send', c.producer.getDpaHandle(), BigInt(c.cpuConsumer.getId()), 33n, 0n), BigInt(E.DOCA_ERROR_INVALID_VALUE), 'the DPA side refuses 33 bytes too');
});

test('a consumer completion activates its thread only while armed; re-arming after a drain activates at once', { timeout: 30_000 }, async (t) => {
  dpaFabric(t, { numEus: 2 });
  const dev = openDeviceByPci('b1:00.0');
  const dpa = startDpa(t, dev, 'msgq');
  const c = channel(t, dpa, dev, { rearm: false, posted: 0 });
  dpa.rpc('try_ack', c.consumer.getDpaHandle(), BigInt(SLOTS));
  assert.equal(c.send(new Uint8Array([1])), 'ok');
  await eventually(() => c.counter.get() === 1n, 'the first activation');
  assert.equal(c.send(new Uint8Array([2])), 'ok');
  assert.equal(c.send(new Uint8Array([3])), 'ok');
  await settle();
  assert.equal(c.counter.get(), 1n, 'the thread did not request notification: not activated');
  dpa.rpc('rearm_cc', c.cc.getDpaHandle());
  await eventually(() => c.counter.get() === 3n, 'the activation after re-arming: both waiting receives');
});

test('immediate data views are valid until the completion is acked, reused after, detached once their context stops', { timeout: 30_000 }, async (t) => {
  dpaFabric(t, { numEus: 1 });
  const dev = openDeviceByPci('03:00.0');
  const dpa = startDpa(t, dev, 'msgq');
  const c = channel(t, dpa, dev, { rearm: false, posted: 0 });
  c.thread.stop(); // the RPC takes the receives itself
  dpa.rpc('try_ack', c.consumer.getDpaHandle(), 2n);
  assert.equal(c.send(new Uint8Array(32).fill(0x41)), 'ok');
  assert.equal(c.send(new Uint8Array(5).fill(0x42)), 'ok');
  assert.equal(dpa.rpc('take_one', c.cc.getDpaHandle(), c.consumer.getDpaHandle()), BigInt(0x41 * 1e6 + 32 * 1000 + 32), '32 bytes before the ack, and after (DOCA promises them until the ack)');
  assert.equal(dpa.rpc('take_one', c.cc.getDpaHandle(), c.consumer.getDpaHandle()), BigInt(0x42 * 1e6 + 5 * 1000 + 5));
  assert.equal(dpa.rpc('take_one', c.cc.getDpaHandle(), c.consumer.getDpaHandle()), 0n, 'nothing else came');
  assert.equal(dpa.rpc('last_view_length'), 5n);
  c.consumer.stop();
  c.consumer.destroy();
  c.cc.stop();
  dpa.rpc('last_view_length'); // a run ends: the unit detaches the views of contexts that changed
  assert.equal(dpa.rpc('last_view_length'), 0n, 'detached once its context stopped');
});

test('DPA producer: is_consumer_empty, sends that complete, and SEND_ERR when the CPU consumer posted nothing', { timeout: 30_000 }, async (t) => {
  dpaFabric(t, { numEus: 1 });
  const dev = openDeviceByPci('03:00.0');
  const dpa = startDpa(t, dev, 'msgq');
  const c = channel(t, dpa, dev, { rearm: true, posted: 0 });
  const producer = c.producer.getDpaHandle();
  const id = BigInt(c.cpuConsumer.getId());
  assert.equal(dpa.rpc('consumer_empty', producer, id), 1n);
  assert.equal(dpa.rpc('try_send', producer, id, 4n, 9n), 0n, 'a send with nothing posted is not an error of the call');
  assert.equal(dpa.rpc('sent_types', c.sent.getDpaHandle()), (1n << 56n) | 0xdn, 'one SEND_ERR completion');
  c.cpuConsumer.taskPostRecvAllocInit().submit();
  assert.equal(dpa.rpc('consumer_empty', producer, id), 0n);
  assert.equal(dpa.rpc('try_send', producer, id, 32n, 100n), 0n);
  assert.equal(dpa.rpc('sent_types', c.sent.getDpaHandle()), 1n << 56n, 'one SEND completion (type 0)');
  await eventually(() => (c.progress(), c.received.length === 1), 'the CPU receive');
  assert.deepEqual(c.received[0], { imm: Array.from({ length: 32 }, (_, i) => 100 + i), producer: c.producer.getId() });
  assert.equal(dpa.rpc('try_send', producer, 999n, 1n, 0n), 0n);
  assert.equal(dpa.rpc('sent_types', c.sent.getDpaHandle()), (1n << 56n) | 0xdn, 'no consumer 999: SEND_ERR');
});

test('dmaCopy copies between maps, then sends the immediate message; alignment, ranges and permissions are checked', { timeout: 30_000 }, async (t) => {
  dpaFabric(t, { numEus: 1 });
  const dev = openDeviceByPci('03:00.0');
  const dpa = startDpa(t, dev, 'msgq');
  const c = channel(t, dpa, dev, { rearm: true, posted: 2 });
  const map = (bytes: Uint8Array, flags: number) => {
    const m = Mmap.create();
    m.setMemrange(bytes);
    m.setPermissions(flags);
    m.addDev(dev);
    m.start();
    onCleanup(t, () => m.destroy());
    return m;
  };
  const srcMem = allocSharedMemory(4096);
  srcMem.forEach((_, i) => (srcMem[i] = (i * 13) & 0xff));
  const dstMem = allocSharedMemory(4096);
  const src = map(srcMem, AccessFlag.LOCAL_READ_WRITE | AccessFlag.PCI_READ_WRITE);
  const dst = map(dstMem, AccessFlag.LOCAL_READ_WRITE | AccessFlag.PCI_READ_WRITE);
  const ro = map(allocSharedMemory(4096), AccessFlag.PCI_READ_ONLY);
  const [s, d, r] = [src.devGetDpaHandle(dev), dst.devGetDpaHandle(dev), ro.devGetDpaHandle(dev)];
  const producer = c.producer.getDpaHandle();
  const id = BigInt(c.cpuConsumer.getId());
  assert.equal(dpa.rpc('try_dma', producer, id, d, 128n, s, 256n, 1000n), 0n);
  assert.deepEqual(dstMem.subarray(128, 1128), srcMem.subarray(256, 1256), 'the bytes were copied');
  assert.equal(dstMem[127], 0);
  assert.equal(dstMem[1128], 0);
  await eventually(() => (c.progress(), c.received.length === 1), 'the immediate message after the copy');
  assert.deepEqual(c.received[0]!.imm, [0xd, 0x3a]);
  assert.equal(dpa.rpc('try_dma', producer, id, d, 100n, s, 0n, 8n), BigInt(E.DOCA_ERROR_INVALID_VALUE), 'unaligned');
  assert.equal(dpa.rpc('try_dma', producer, id, d, 3968n, s, 0n, 256n), BigInt(E.DOCA_ERROR_INVALID_VALUE), 'past the end of the map');
  assert.equal(dpa.rpc('try_dma', producer, id, r, 0n, s, 0n, 8n), BigInt(E.DOCA_ERROR_NOT_PERMITTED), 'a read-only destination');
  assert.equal(dpa.rpc('try_dma', producer, id, c.producer.getDpaHandle(), 0n, s, 0n, 8n), BigInt(E.DOCA_ERROR_INVALID_VALUE), 'not a map handle');
  assert.equal(dstMem[0], 0, 'none of those wrote anything');
  ro.destroy();
  assert.equal(dpa.rpc('try_dma', producer, id, r, 0n, s, 0n, 8n), BigInt(E.DOCA_ERROR_BAD_STATE), 'a destroyed map');
});

test('teardown with a polling DPA thread, messages in flight and attached consumers: wrong orders refused, the right one leaves nothing', { timeout: 30_000 }, async (t) => {
  dpaFabric(t, { numEus: 2 });
  const dev = openDeviceByPci('03:00.0');
  const threads = threadCount();
  const kinds = ['dpa', 'dpaheap', 'consumer', 'conn'];
  const segments = kinds.map(memfds);
  const fds = openFds();
  const pp = MsgqPingPong.open({ dev, poll: true, expected: 1e9, queue: 8 });
  let answers = 0;
  pp.onReply = () => answers++;
  for (let i = 0; i < 5; i++) pp.send(new Uint8Array([i]));
  await eventually(() => (pp.pe.progress(), answers === 5), 'answers from the polling thread');
  for (let i = 0; i < 3; i++) pp.send(new Uint8Array([i])); // in flight while we tear down
  assert.throws(() => pp.dpa.stop(), code('IN_USE', /still has DPA thread/));
  assert.throws(() => pp.dpa.destroy(), code('IN_USE'));
  await pp.close();
  assert.equal(threadCount(), threads, 'no execution unit thread is left');
  assert.deepEqual(kinds.map(memfds), segments, 'no segment is left');
  assert.deepEqual(openFds(), fds, 'no fd is left');
});

test('a consumer completion context cannot stop while consumers are attached', { timeout: 30_000 }, async (t) => {
  dpaFabric(t, { numEus: 1 });
  const dev = openDeviceByPci('03:00.0');
  const dpa = startDpa(t, dev, 'msgq');
  const c = channel(t, dpa, dev, { rearm: true, posted: 0 });
  assert.throws(() => c.cc.stop(), code('IN_USE', /still attached to/));
  assert.throws(() => c.cc.setMaxNumRecv(4), code('BAD_STATE', /configure it while it is stopped/));
  assert.throws(() => c.fromDpa.stop(), code('IN_USE'));
  c.consumer.stop();
  assert.throws(() => c.cc.stop(), code('IN_USE'), 'stopped, but still attached until destroyed');
});

test('a completion queue whose positions start just below 2^32 shows no element before one is posted', { timeout: 30_000 }, async (t) => {
  dpaFabric(t, { numEus: 1 });
  const dev = openDeviceByPci('03:00.0');
  const dpa = startDpa(t, dev, 'msgq');
  t.after(() => setStartPosition(0));
  for (const start of [2 ** 32 - 1, 2 ** 32 - 3, 0]) {
    setStartPosition(start);
    const cq = DpaCompletion.create(dpa, 4);
    cq.start();
    // A fresh element reads sequence 0, which is "position -1 + 1": it must not pass for a posted one.
    assert.equal(dpa.rpc('sent_types', cq.getDpaHandle()), 0n, `no completion on a fresh queue starting at ${start}`);
    cq.stop();
    cq.destroy();
  }
});

test('a consumer completion restarted with more consumers and receives gets lists of the new sizes, not past its old ones', { timeout: 30_000 }, async (t) => {
  dpaFabric(t, { numEus: 1 });
  const dev = openDeviceByPci('03:00.0');
  const dpa = startDpa(t, dev, 'msgq');
  const thread = DpaThread.create(dpa);
  onCleanup(t, () => thread.destroy());
  thread.setFuncArg('counting_consumer', dpa.memAlloc(32));
  const cc = ComchConsumerCompletion.create(dpa);
  onCleanup(t, () => cc.destroy());
  cc.setDpaThread(thread);
  cc.setMaxNumConsumers(1);
  cc.setMaxNumRecv(1);
  cc.start();
  // Allocated right after the first start's lists: what a restart writing past them would overwrite.
  const neighbour = DpaCompletion.create(dpa, 4);
  onCleanup(t, () => neighbour.destroy());
  neighbour.start();
  onCleanup(t, quietly(() => neighbour.stop()));
  const ranges = () => {
    const inner = cc as unknown as { list: number; returned: number };
    return [
      [inner.list, inner.list + cc.getMaxNumConsumers() * 8],
      [inner.returned, inner.returned + cc.getMaxNumRecv() * RETURNED_SIZE],
    ] as const;
  };
  const ring = (neighbour as unknown as { ring: number }).ring;
  cc.stop();
  cc.setMaxNumConsumers(64);
  cc.setMaxNumRecv(64);
  cc.start();
  onCleanup(t, quietly(() => cc.stop()));
  for (const [from, to] of ranges()) assert.ok(to <= ring || from >= ring + 4 * CQE_SIZE, `[${from}, ${to}) overlaps the neighbour's ring at ${ring}`);
  const [[listFrom, listTo], [retFrom, retTo]] = ranges();
  assert.ok(listTo <= retFrom || retTo <= listFrom, 'the two lists do not overlap');
});
