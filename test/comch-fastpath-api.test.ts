/** Producer and consumer semantics: creation rules, ids, events, AGAIN, sizes, expiry, teardown order. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ComchConsumer } from '../src/comch/consumer.js';
import { CONN_CLOSED, FP } from '../src/comch/layout.js';
import type { ComchConsumerPostRecvTask } from '../src/comch/post-recv-task.js';
import { ComchProducer } from '../src/comch/producer.js';
import type { ComchProducerSendTask } from '../src/comch/producer-task.js';
import { Mmap } from '../src/core/mmap.js';
import { ProgressEngine } from '../src/core/pe.js';
import { comchPair, type Pair, sharedMap, until } from './helpers/comch-pair.js';
import { code } from './helpers/errors.js';

/**
 * A consumer on the server's side of `p` over `map` and a producer on the client's side, set up by
 * `configure` while idle, both on one more engine that `p` drives; resolves once the consumer is RUNNING.
 */
const quietTasks = (consumer: ComchConsumer, producer: ComchProducer) => {
  consumer.taskPostRecvSetConf(() => {}, () => {}, 4);
  producer.taskSendSetConf(() => {}, () => {}, 4);
};

async function startEndpoints(p: Pair, map: Mmap, configure: (consumer: ComchConsumer, producer: ComchProducer) => void = quietTasks): Promise<{ consumer: ComchConsumer; producer: ComchProducer }> {
  const consumer = ComchConsumer.create(p.serverConn, map);
  const producer = ComchProducer.create(p.clientConn);
  configure(consumer, producer);
  const cpe = ProgressEngine.create();
  cpe.connectCtx(consumer);
  cpe.connectCtx(producer);
  p.drive(cpe);
  consumer.start();
  producer.start();
  await consumer.waitForState('RUNNING', { timeoutMs: 5000 });
  return { consumer, producer };
}

test('consumers and producers: ids unique per connection, new and expired events on the peer, async start', { timeout: 60_000 }, async (t) => {
  const p = await comchPair(t, 'fp-ids');
  const { map } = sharedMap(p.arm, 1 << 16);
  const cpe = ProgressEngine.create();
  p.drive(cpe);
  const consumers = [ComchConsumer.create(p.serverConn, map), ComchConsumer.create(p.serverConn, map)];
  const producers = [ComchProducer.create(p.serverConn), ComchProducer.create(p.clientConn)];
  assert.equal(new Set(consumers.map((c) => c.getId())).size, 2);
  assert.equal(new Set(producers.map((c) => c.getId())).size, 2);
  for (const c of [...consumers, ...producers]) cpe.connectCtx(c);
  assert.throws(() => producers[0]!.start(), code('DOCA_ERROR_BAD_STATE', /send task configuration/), 'DOCA: the send task callback is mandatory');
  assert.throws(() => consumers[0]!.start(), code('DOCA_ERROR_BAD_STATE', /post-receive task configuration/));
  quietTasks(consumers[0]!, producers[0]!);
  quietTasks(consumers[1]!, producers[1]!);
  assert.equal(producers[0]!.start(), 'DOCA_SUCCESS', 'a producer reaches RUNNING at once');
  assert.equal(consumers[0]!.start(), 'DOCA_ERROR_IN_PROGRESS');
  assert.equal(consumers[0]!.state, 'STARTING');
  await consumers[0]!.waitForState('RUNNING', { timeoutMs: 5000 });
  await until(() => p.events.includes(`client new ${consumers[0]!.getId()}`), 'the new-consumer event');
  await consumers[0]!.stopAndWait();
  await until(() => p.events.includes(`client expired ${consumers[0]!.getId()}`), 'the expired-consumer event');
  assert.ok(!p.events.some((e) => e.startsWith('server')), 'events fire on the peer only');
  assert.ok(!p.events.includes(`client new ${consumers[1]!.getId()}`), 'a consumer that never started is not announced');
});

test('creation rules: established connection, PCI read/write map, buffers inside it, imm data up to 32 bytes', { timeout: 60_000 }, async (t) => {
  const p = await comchPair(t, 'fp-rules');
  const local = Mmap.create();
  local.setMemrange(Buffer.alloc(64));
  local.start();
  assert.throws(() => ComchConsumer.create(p.serverConn, local), code('DOCA_ERROR_INVALID_VALUE', /lacks PCI_READ_WRITE/));
  const { map } = sharedMap(p.arm, 4096);
  const other = sharedMap(p.arm, 4096);
  const consumer = ComchConsumer.create(p.serverConn, map);
  assert.throws(() => consumer.setImmDataLen(33), code('DOCA_ERROR_INVALID_VALUE', /imm_data_len 33 is not an integer in \[0, 32\]/));
  consumer.setImmDataLen(32);
  consumer.taskPostRecvSetConf(() => {}, () => {}, 4);
  const cpe = ProgressEngine.create();
  cpe.connectCtx(consumer);
  p.drive(cpe);
  consumer.start();
  await consumer.waitForState('RUNNING', { timeoutMs: 5000 });
  assert.throws(() => consumer.setImmDataLen(8), code('DOCA_ERROR_BAD_STATE'));
  assert.throws(() => consumer.taskPostRecvAllocInit(other.buf(0, 64)), code('DOCA_ERROR_INVALID_VALUE', /not in the consumer's memory map/));
  const producer = ComchProducer.create(p.clientConn);
  cpe.connectCtx(producer);
  producer.taskSendSetConf(() => {}, () => {}, 4);
  producer.start();
  const src = sharedMap(p.host, 4096);
  assert.throws(() => producer.taskSendAllocInit(src.buf(0, 8), new Uint8Array(33), consumer.getId()), code('DOCA_ERROR_INVALID_VALUE', /immediate data of 33 bytes exceeds 32/));
  await consumer.stopAndWait();
  await producer.stopAndWait();
  consumer.destroy();
  producer.destroy();
  await p.client.stopAndWait();
  assert.throws(() => ComchProducer.create(p.clientConn), code('DOCA_ERROR_BAD_STATE', /not established/));
});

test('send: AGAIN without a posted buffer (the task stays usable), INVALID_VALUE when too big (buffer untouched), then delivery', { timeout: 60_000 }, async (t) => {
  const p = await comchPair(t, 'fp-send');
  const dst = sharedMap(p.arm, 1 << 16);
  const received: ComchConsumerPostRecvTask[] = [];
  const flushed: string[] = [];
  const sent: ComchProducerSendTask[] = [];
  const { consumer, producer } = await startEndpoints(p, dst.map, (consumer, producer) => {
    consumer.setImmDataLen(8);
    consumer.taskPostRecvSetConf((task) => received.push(task), (task) => (flushed.push(task.getStatus()), task.free()), 4);
    producer.taskSendSetConf((task) => sent.push(task), () => assert.fail('no send error expected'), 4);
  });
  const src = sharedMap(p.host, 4096);
  src.mem.set(new TextEncoder().encode('x'.repeat(100)), 0);
  const task = producer.taskSendAllocInit(src.inv.bufGetByData(src.map, src.mem.subarray(0, 100)), new Uint8Array([9, 8, 7]), consumer.getId());
  assert.throws(() => task.submit(), code('DOCA_ERROR_AGAIN', /has no posted receive buffer/));
  assert.equal(producer.getNumInflightTasks(), 0);
  dst.mem.fill(0xee, 0, 64);
  const small = dst.buf(0, 64);
  consumer.taskPostRecvAllocInit(small).submit();
  assert.throws(() => task.submit(), code('DOCA_ERROR_INVALID_VALUE', /100-byte payload exceeds consumer \d+'s next posted buffer \(64 bytes\)/));
  assert.ok(dst.mem.subarray(0, 64).every((b) => b === 0xee), 'the consumer buffer was not touched');
  assert.equal(small.getDataLen(), 0);
  task.setBuf(src.inv.bufGetByData(src.map, src.mem.subarray(0, 50)));
  task.submit();
  await until(() => received.length === 1 && sent.length === 1, 'the completion on both sides');
  const got = received[0]!;
  assert.equal(got.getBuf(), small);
  assert.equal(small.getDataLen(), 50);
  assert.equal(new TextDecoder().decode(small.getData()), 'x'.repeat(50));
  assert.deepEqual([...got.getImmData()!], [9, 8, 7]);
  assert.equal(got.getProducerId(), producer.getId());
  got.getBuf().decRefcount();
  got.free();
  sent[0]!.free();
  const tooMuchImm = producer.taskSendAllocInit(src.inv.bufGetByData(src.map, src.mem.subarray(0, 4)), new Uint8Array(9), consumer.getId());
  consumer.taskPostRecvAllocInit(dst.buf(64, 64)).submit();
  assert.throws(() => tooMuchImm.submit(), code('DOCA_ERROR_INVALID_VALUE', /imm_data_len 8/));
  await consumer.stopAndWait();
  assert.deepEqual(flushed, ['DOCA_ERROR_SHUTDOWN'], 'the buffer still posted was flushed through the error callback');
  assert.throws(() => tooMuchImm.submit(), code('DOCA_ERROR_NOT_CONNECTED', /no live consumer|expired/));
  tooMuchImm.free();
});

test('teardown order: disconnect and stop are IN_USE while producers or consumers exist; stopTree does it children first', { timeout: 60_000 }, async (t) => {
  const p = await comchPair(t, 'fp-teardown');
  const { map } = sharedMap(p.arm, 4096);
  const { consumer, producer } = await startEndpoints(p, map);
  assert.throws(() => p.server.disconnect(p.serverConn), code('DOCA_ERROR_IN_USE', /1 producer\(s\) or consumer\(s\)/));
  assert.throws(() => p.server.stop(), code('DOCA_ERROR_IN_USE'));
  assert.throws(() => p.client.stop(), code('DOCA_ERROR_IN_USE'));
  await consumer.stopAndWait();
  assert.throws(() => p.server.stop(), code('DOCA_ERROR_IN_USE'), 'a stopped but not destroyed consumer still blocks teardown');
  consumer.destroy();
  await p.client.stopTree({ timeoutMs: 5000 });
  assert.equal(p.client.state, 'IDLE');
  assert.equal(producer.isDestroyed, true);
  await until(() => p.server.connections.length === 0, 'the server to see the disconnect');
  await p.server.stopTree({ timeoutMs: 5000 });
  assert.equal(p.server.state, 'IDLE');
});

test('adapters: producer.send retries AGAIN under a bounded policy; consumer.messages reposts and breaks cleanly', { timeout: 60_000 }, async (t) => {
  const p = await comchPair(t, 'fp-adapters');
  const dst = sharedMap(p.arm, 4 * 256);
  const { consumer, producer } = await startEndpoints(p, dst.map, (consumer, producer) => {
    consumer.setImmDataLen(4);
    consumer.taskPostRecvSetConf(() => {}, () => {}, 4);
    producer.taskSendSetConf(() => {}, () => {}, 4);
  });
  const src = sharedMap(p.host, 4096);
  const payload = (n: number) => {
    src.mem.set(new TextEncoder().encode(`message ${n}`), n * 16);
    return src.inv.bufGetByData(src.map, src.mem.subarray(n * 16, n * 16 + `message ${n}`.length));
  };
  await assert.rejects(producer.send(payload(0), { consumerId: consumer.getId(), retry: { immediate: 2, delayed: 2, delayMs: 1 } }), code('DOCA_ERROR_AGAIN', /no posted buffer after 5 attempts/));
  const bufs = [0, 1, 2, 3].map((i) => dst.buf(i * 256, 256));
  const got: string[] = [];
  const sending = (async () => {
    for (let n = 1; n <= 6; n++) await producer.send(payload(n), { consumerId: consumer.getId(), immData: new Uint8Array([n, 0, 0, 0]) });
  })();
  for await (const m of consumer.messages(bufs)) {
    assert.equal(m.producerId, producer.getId());
    got.push(`${new TextDecoder().decode(m.data)}/${m.immData![0]}`);
    if (got.length === 6) break;
  }
  await sending;
  assert.deepEqual(got, [1, 2, 3, 4, 5, 6].map((n) => `message ${n}/${n}`));
  await consumer.stopAndWait();
  assert.equal(consumer.state, 'IDLE', 'the buffers left posted were flushed and their tasks freed');
});

test('consumer.messages: what was delivered before a stop is yielded, then the iteration ends (no BAD_STATE from reposting)', { timeout: 60_000 }, async (t) => {
  const p = await comchPair(t, 'fp-stop-iter');
  const dst = sharedMap(p.arm, 4 * 256);
  const { consumer, producer } = await startEndpoints(p, dst.map);
  const src = sharedMap(p.host, 4096);
  const payload = (n: number) => {
    src.mem.set(new TextEncoder().encode(`message ${n}`), n * 16);
    return src.inv.bufGetByData(src.map, src.mem.subarray(n * 16, n * 16 + `message ${n}`.length));
  };
  const it = consumer.messages([0, 1, 2, 3].map((i) => dst.buf(i * 256, 256)));
  for (let n = 1; n <= 4; n++) await producer.send(payload(n), { consumerId: consumer.getId() });
  consumer.stop(); // every posted buffer is filled: all four complete successfully while STOPPING
  const got: string[] = [];
  for await (const m of it) got.push(new TextDecoder().decode(m.data));
  assert.deepEqual(got, [1, 2, 3, 4].map((n) => `message ${n}`), 'nothing delivered is lost, and the end is an end, not an error');
  await consumer.waitForState('IDLE', { timeoutMs: 5000 });
});

test('a busy engine (never asleep) looks at its endpoints\' connection once in 64 polls, and still sees its end within them', { timeout: 60_000 }, async (t) => {
  const p = await comchPair(t, 'fp-busy-end');
  const { map } = sharedMap(p.arm, 4096);
  const consumer = ComchConsumer.create(p.serverConn, map);
  const producer = ComchProducer.create(p.clientConn);
  quietTasks(consumer, producer);
  const busy = ProgressEngine.create(); // progressed by hand below: it never sleeps
  busy.connectCtx(consumer);
  busy.connectCtx(producer);
  consumer.start();
  producer.start();
  await until(() => (busy.progress(), consumer.state === 'RUNNING'), 'the consumer to start on the busy engine', 5000);
  // The connection ends as the peer that finishes first ends it: its fast-path state word.
  const table = (producer as unknown as { table: { i32: Int32Array } }).table;
  Atomics.store(table.i32, FP.STATE / 4, CONN_CLOSED);
  let polls = 0;
  while ((consumer.state === 'RUNNING' || producer.state === 'RUNNING') && polls < 1000) {
    busy.progress();
    polls++;
  }
  // Two endpoints, each polled on every other call at the most (the engine goes round them): 2 x 64.
  assert.ok(polls <= 2 * 64 + 2, `both endpoints left RUNNING after ${polls} progress() calls`);
  assert.notEqual(consumer.state, 'RUNNING');
  assert.notEqual(producer.state, 'RUNNING');
  await until(() => (busy.progress(), consumer.state === 'IDLE' && producer.state === 'IDLE'), 'both endpoints to reach IDLE', 5000);
});
