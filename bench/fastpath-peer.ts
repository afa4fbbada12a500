/**
 * One side of the fast-path benchmark, in its own process, busy-polling once connected:
 *   consume <json>   server with `consumers` consumers, `posted` buffers of `size` bytes each (faulted in
 *                    before they are posted), reposted on completion after reading the payload's first
 *                    and last byte in place (as the C shm_ring reads its first and last 8 bytes);
 *                    prints {"gbps","rate","whole_rate"} (lib/measure.ts StreamClock: after the warm-up,
 *                    and over every message) once `count` messages arrived in all
 *                    (`consumerMode: 'notify'` sleeps between completions instead of spinning)
 *   produce <json>   client with `producers` producers sending `count` messages in all, round-robin to
 *                    every consumer, resubmitting on AGAIN; it leaves once the consumer side said (a
 *                    1-byte control message) that everything arrived: a completed send is in the
 *                    consumer's queue, not yet taken, and a connection that ends flushes the queue;
 *                    `taskPerMsg: true` frees every completed task and allocates the next send's
 *                    (alloc_init, as DOCA's samples send) instead of resubmitting it
 * With SOFTDPU_BENCH_ALLOC=1 (lib/alloc.ts) each side also measures its own allocation per message (a
 * completed post-recv, a completed send) and prints {"alloc": {...}} (the producer's alone on its line).
 */
import { ComchClient } from '../src/comch/client.js';
import { ComchConsumer } from '../src/comch/consumer.js';
import { ComchProducer } from '../src/comch/producer.js';
import type { ComchProducerSendTask } from '../src/comch/producer-task.js';
import { ComchServer } from '../src/comch/server.js';
import { openDeviceByPci, openRepresentorByPci } from '../src/core/dev.js';
import { DevinfoRepFilter } from '../src/core/devinfo.js';
import { DocaError } from '../src/core/error.js';
import { ProgressEngine } from '../src/core/pe.js';
import { allocMeterFromEnv, StreamClock } from './lib.js';
import { ARM, HOST, sharedBuffers } from './peer-lib.js';

const [role, json] = process.argv.slice(2);
const o = JSON.parse(json!) as { size: number; count: number; consumers: number; producers: number; posted: number; consumerMode?: 'busy' | 'notify'; taskPerMsg?: boolean };
const NAME = 'fastpath-bench';

/** Progresses every engine until `until()` holds: by index, since an iterator per pass is garbage the allocation meter would count. */
function spin(engines: ProgressEngine[], until: () => boolean): void {
  while (!until()) for (let i = 0; i < engines.length; i++) engines[i]!.progress();
}

if (role === 'consume') {
  const dev = openDeviceByPci(ARM);
  const rep = openRepresentorByPci(dev, DevinfoRepFilter.NET, HOST);
  const pe = ProgressEngine.create();
  const server = ComchServer.create(dev, rep, NAME);
  pe.connectCtx(server);
  server.taskSendSetConf((t) => t.free(), (t) => t.free(), 4);
  server.start();
  process.stdout.write('ready\n');
  await pe.run({ mode: 'busy', until: () => server.connections.length > 0 });
  const conn = server.connections[0]!;
  let got = 0;
  let touched = 0;
  const clock = new StreamClock(o.count);
  const engines = [pe];
  const consumers: ComchConsumer[] = [];
  const meter = allocMeterFromEnv(o.count);
  for (let c = 0; c < o.consumers; c++) {
    const bufs = sharedBuffers(dev, o.size, o.posted);
    const cpe = ProgressEngine.create();
    const consumer = ComchConsumer.create(conn, bufs.map);
    consumer.setImmDataLen(32);
    consumer.taskPostRecvSetConf(
      (task) => {
        clock.at(++got);
        const data = task.getBuf().getData();
        touched ^= data[0]! ^ data[data.length - 1]!;
        task.submit();
        meter.tick();
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
    for (let i = 0; i < o.posted; i++) consumer.taskPostRecvAllocInit(bufs.empty(i)).submit();
  }
  if (o.consumerMode === 'notify') await Promise.all(engines.map((e) => e.run({ until: () => got >= o.count })));
  else spin(engines, () => got >= o.count);
  process.stdout.write(JSON.stringify({ ...clock.figures(o.size), touched, alloc: await meter.figures() }) + '\n');
  const told = conn.send(new Uint8Array(1));
  await pe.run({ mode: 'busy', until: () => pe.getNumInflightTasks() === 0 });
  await told;
  await pe.run({ mode: 'busy', until: () => server.connections.length === 0 }); // the producer side leaves first
  await server.stopTree({ timeoutMs: 5000 }).catch(() => {});
} else {
  const dev = openDeviceByPci(HOST);
  const pe = ProgressEngine.create();
  const client = ComchClient.create(dev, NAME);
  pe.connectCtx(client);
  const consumers: number[] = [];
  client.eventConsumerRegister(
    (_e, _c, id) => consumers.push(id),
    () => {},
  );
  let received = false;
  client.eventMsgRecvRegister(() => (received = true));
  client.taskSendSetConf((t) => t.free(), (t) => t.free(), 4);
  client.start();
  await pe.run({ mode: 'busy', until: () => client.state === 'RUNNING' && consumers.length === o.consumers });
  const conn = client.getConnection();
  const src = sharedBuffers(dev, o.size, o.producers);
  src.mem.fill(0x5a);
  let submitted = 0;
  let completed = 0;
  const meter = allocMeterFromEnv(o.count);
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
    const buf = src.full(p);
    producer.taskSendSetConf(
      (task) => {
        completed++;
        meter.tick();
        if (o.taskPerMsg) {
          task.free();
          if (submitted < o.count) submit(producer.taskSendAllocInit(buf, undefined, consumers[0]!));
        } else if (submitted < o.count) submit(task);
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
    for (let i = 0; i < 64 && submitted < o.count; i++) submit(producer.taskSendAllocInit(buf, undefined, consumers[0]!));
  }
  while (completed < o.count) {
    for (let i = 0; i < engines.length; i++) engines[i]!.progress();
    for (let n = waiting.length; n > 0 && submitted < o.count; n--) submit(waiting.shift()!);
  }
  // Tasks refused with AGAIN after the last submission are still allocated: a producer stops only once
  // its tasks are freed.
  for (const task of waiting.splice(0)) task.free();
  const alloc = await meter.figures();
  if (alloc) process.stdout.write(JSON.stringify({ alloc }) + '\n');
  await pe.run({ mode: 'busy', until: () => received });
  await client.stopTree({ timeoutMs: 5000 }).catch(() => {});
}
