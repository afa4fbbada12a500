/**
 * One side of the fast-path benchmark, in its own process, busy-polling once connected:
 *   consume <json>   server with `consumers` consumers, `posted` buffers of `size` bytes each, reposted
 *                    on completion; prints {"gbps","rate"} once `count` messages arrived in all
 *                    (`consumerMode: 'notify'` sleeps between completions instead of spinning)
 *   produce <json>   client with `producers` producers sending `count` messages in all, round-robin to
 *                    every consumer, resubmitting on AGAIN
 */
import { ComchClient } from '../src/comch/client.js';
import { ComchConsumer } from '../src/comch/consumer.js';
import { ComchProducer } from '../src/comch/producer.js';
import type { ComchProducerSendTask } from '../src/comch/producer-task.js';
import { ComchServer } from '../src/comch/server.js';
import { BufInventory } from '../src/core/buf.js';
import { openDeviceByPci, openRepresentorByPci } from '../src/core/dev.js';
import { DevinfoRepFilter } from '../src/core/devinfo.js';
import { DocaError } from '../src/core/error.js';
import { allocSharedMemory } from '../src/core/memory.js';
import { AccessFlag, Mmap } from '../src/core/mmap.js';
import { ProgressEngine } from '../src/core/pe.js';

const [role, json] = process.argv.slice(2);
const o = JSON.parse(json!) as { size: number; count: number; consumers: number; producers: number; posted: number; consumerMode?: 'busy' | 'notify' };
const NAME = 'fastpath-bench';

function spin(engines: ProgressEngine[], until: () => boolean): void {
  while (!until()) for (const pe of engines) pe.progress();
}

if (role === 'consume') {
  const dev = openDeviceByPci('03:00.0');
  const rep = openRepresentorByPci(dev, DevinfoRepFilter.NET, 'b1:00.0');
  const pe = ProgressEngine.create();
  const server = ComchServer.create(dev, rep, NAME);
  pe.connectCtx(server);
  server.start();
  process.stdout.write('ready\n');
  await pe.run({ mode: 'busy', until: () => server.connections.length > 0 });
  const conn = server.connections[0]!;
  let got = 0;
  let first = 0;
  let last = 0;
  const engines = [pe];
  const consumers: ComchConsumer[] = [];
  for (let c = 0; c < o.consumers; c++) {
    const mem = allocSharedMemory(o.posted * o.size);
    const map = Mmap.create();
    map.setMemrange(mem);
    map.setPermissions(AccessFlag.PCI_READ_WRITE);
    map.addDev(dev);
    map.start();
    const inv = BufInventory.create(o.posted);
    inv.start();
    const cpe = ProgressEngine.create();
    const consumer = ComchConsumer.create(conn, map);
    consumer.setImmDataLen(32);
    consumer.taskPostRecvSetConf(
      (task) => {
        if (got === 0) first = performance.now();
        if (++got === o.count) last = performance.now();
        task.submit();
      },
      (task) => {
        // Buffers still posted come back flushed (SHUTDOWN) as the server stops at the end; a failure
        // before every message arrived would leave the loop below waiting forever.
        if (got < o.count) throw new Error(`fastpath-peer consume: receive failed with ${task.getStatus()} after ${got} of ${o.count} messages: ${task.error?.message}`);
        task.free();
      },
      o.posted,
    );
    cpe.connectCtx(consumer);
    consumer.start();
    engines.push(cpe);
    consumers.push(consumer);
    // The consumer registers through the server's engine: progress both (and let the socket turn).
    while (consumer.state !== 'RUNNING') {
      pe.progress();
      cpe.progress();
      await new Promise((resolve) => setImmediate(resolve));
    }
    for (let i = 0; i < o.posted; i++) consumer.taskPostRecvAllocInit(inv.bufGetByAddr(map, mem.subarray(i * o.size, (i + 1) * o.size))).submit();
  }
  if (o.consumerMode === 'notify') await Promise.all(engines.map((e) => e.run({ until: () => got >= o.count })));
  else spin(engines, () => got >= o.count);
  const seconds = (last - first) / 1000;
  process.stdout.write(JSON.stringify({ gbps: ((o.count - 1) * o.size) / seconds / 1e9, rate: (o.count - 1) / seconds }) + '\n');
  await server.stopTree({ timeoutMs: 5000 }).catch(() => {});
} else {
  const dev = openDeviceByPci('b1:00.0');
  const pe = ProgressEngine.create();
  const client = ComchClient.create(dev, NAME);
  pe.connectCtx(client);
  const consumers: number[] = [];
  client.eventConsumerRegister(
    (_e, _c, id) => consumers.push(id),
    () => {},
  );
  client.start();
  await pe.run({ mode: 'busy', until: () => client.state === 'RUNNING' && consumers.length === o.consumers });
  const conn = client.getConnection();
  const src = allocSharedMemory(o.size);
  src.fill(0x5a);
  const map = Mmap.create();
  map.setMemrange(src);
  map.addDev(dev);
  map.start();
  const inv = BufInventory.create(o.producers);
  inv.start();
  let submitted = 0;
  let completed = 0;
  const engines: ProgressEngine[] = [pe];
  const waiting: ComchProducerSendTask[] = [];
  const submit = (task: ComchProducerSendTask) => {
    task.setConsumerId(consumers[submitted % consumers.length]!);
    try {
      task.submit();
      submitted++;
    } catch (err) {
      if (!DocaError.is(err, 'AGAIN')) throw err;
      waiting.push(task);
    }
  };
  for (let p = 0; p < o.producers; p++) {
    const ppe = ProgressEngine.create();
    const producer = ComchProducer.create(conn);
    producer.taskSendSetConf(
      (task) => {
        completed++;
        if (submitted < o.count) submit(task);
        else task.free();
      },
      (task) => {
        // A failed send never counts as completed: the loop below would wait for it forever.
        throw new Error(`fastpath-peer produce: send failed with ${task.getStatus()} after ${completed} of ${o.count} messages: ${task.error?.message}`);
      },
      64,
    );
    ppe.connectCtx(producer);
    producer.start();
    engines.push(ppe);
    const buf = inv.bufGetByData(map, src);
    for (let i = 0; i < 64 && submitted < o.count; i++) submit(producer.taskSendAllocInit(buf, undefined, consumers[0]!));
  }
  while (completed < o.count) {
    for (const e of engines) e.progress();
    for (let n = waiting.length; n > 0 && submitted < o.count; n--) submit(waiting.shift()!);
  }
  // Tasks refused with AGAIN after the last submission are still allocated: a producer stops only once
  // its tasks are freed.
  for (const task of waiting.splice(0)) task.free();
  await client.stopTree({ timeoutMs: 5000 }).catch(() => {});
}
