/**
 * One side of the soak (bench/soak.ts), in its own process, busy-polling:
 *   server   comch server: checks and counts the client's control messages (sequence numbers), takes its
 *            fast-path messages in a consumer (per producer, in order), exports a sync event the client
 *            adds to; on the client's END message prints what it received as JSON and leaves
 *   client   sends control messages as fast as flow control lets it, fast-path messages from a producer
 *            in its main thread and from one in a worker thread (which a fault plan may crash: a new one
 *            takes over), and adds 1 to the sync event, each counted only once it completed successfully;
 *            on `finish` (stdin) it stops, waits for every send, and sends END with its counts
 * Faults the plan injects (AGAIN at submit, a crashed worker) are retried or survived, never counted.
 */
import { Worker } from 'node:worker_threads';
import { ComchClient } from '../src/comch/client.js';
import type { ComchConnection } from '../src/comch/connection.js';
import { ComchConsumer } from '../src/comch/consumer.js';
import { ComchProducer } from '../src/comch/producer.js';
import type { ComchConnectionRef } from '../src/comch/endpoint-table.js';
import { ComchServer } from '../src/comch/server.js';
import { openDeviceByPci, openRepresentorByPci } from '../src/core/dev.js';
import { DevinfoRepFilter } from '../src/core/devinfo.js';
import { DocaError } from '../src/core/error.js';
import { ProgressEngine } from '../src/core/pe.js';
import { SyncEvent } from '../src/sync-event/sync-event.js';
import { ARM, HOST, sharedBuffers } from './peer-lib.js';

const NAME = 'soak';
const MSG = 64;
const [role] = process.argv.slice(2);
const u32 = (b: Uint8Array, at = 0) => new DataView(b.buffer, b.byteOffset).getUint32(at, true);
const put = (b: Uint8Array, value: number, at = 0) => new DataView(b.buffer, b.byteOffset).setUint32(at, value, true);

/** Drives `pe` busily until `until()`, letting the event loop turn every few thousand calls. */
async function spin(pe: ProgressEngine, until: () => boolean): Promise<void> {
  while (!until()) {
    for (let i = 0; i < 4096 && !until(); i++) pe.progress();
    await new Promise((r) => setImmediate(r));
  }
}

if (role === 'server') {
  const arm = openDeviceByPci(ARM);
  const pe = ProgressEngine.create();
  const server = ComchServer.create(arm, openRepresentorByPci(arm, DevinfoRepFilter.NET, HOST), NAME);
  pe.connectCtx(server);
  let control = 0;
  let outOfOrder = 0;
  const fast = new Map<number, number>(); // producer id -> messages, in order
  let end: Record<string, unknown> | undefined;
  server.taskSendSetConf((t) => t.free(), (t) => t.free(), 16);
  server.eventMsgRecvRegister((_e, data) => {
    if (data.length === MSG) {
      if (u32(data) !== control) outOfOrder++;
      control++;
    } else {
      end = JSON.parse(new TextDecoder().decode(data)) as Record<string, unknown>;
    }
  });
  server.eventConsumerRegister(() => {}, () => {});
  server.start();
  process.stdout.write('ready\n');
  await spin(pe, () => server.connections.length > 0);
  const conn = server.connections[0]!;
  const bufs = sharedBuffers(arm, MSG, 256);
  const consumer = ComchConsumer.create(conn, bufs.map);
  consumer.taskPostRecvSetConf(
    (task) => {
      const data = task.getBuf().getData();
      const producer = task.getProducerId();
      const seen = fast.get(producer) ?? 0;
      if (u32(data) !== seen) outOfOrder++;
      fast.set(producer, seen + 1);
      task.submit();
    },
    (task) => task.free(),
    256,
  );
  pe.connectCtx(consumer);
  consumer.start();
  const event = SyncEvent.create();
  event.addPublisherLocationRemotePci();
  event.addSubscriberLocationCpu(arm);
  event.start();
  await spin(pe, () => consumer.state === 'RUNNING');
  for (let i = 0; i < 256; i++) consumer.taskPostRecvAllocInit(bufs.empty(i)).submit();
  const blob = event.exportToRemotePci(arm);
  server.taskSendAllocInit(conn, blob).submit();
  await spin(pe, () => end !== undefined);
  // The END message trails every control message; fast-path messages completed before it are in the queue.
  const deadline = performance.now() + 10_000;
  await spin(pe, () => [...fast.values()].reduce((a, b) => a + b, 0) >= Number(end!.fast) || consumer.state !== 'RUNNING' || performance.now() > deadline);
  process.stdout.write(JSON.stringify({ control, fast: Object.fromEntries(fast), outOfOrder, value: Number(event.get()) }) + '\n');
  await server.stopTree({ timeoutMs: 5000 }).catch(() => {});
  event.stop();
  event.destroy();
  process.exit(0);
} else if (role === 'client') {
  const host = openDeviceByPci(HOST);
  const pe = ProgressEngine.create();
  const client = ComchClient.create(host, NAME);
  pe.connectCtx(client);
  let blob: Uint8Array | undefined;
  const peerConsumers: number[] = [];
  client.eventMsgRecvRegister((_e, data) => (blob = data));
  client.eventConsumerRegister((_e, _c, id) => peerConsumers.push(id), () => {});
  let controlSent = 0;
  let controlNext = 0;
  const message = new Uint8Array(MSG);
  client.taskSendSetConf(
    (t) => {
      controlSent++;
      t.free();
    },
    (t) => t.free(),
    64,
  );
  client.start();
  await spin(pe, () => client.state === 'RUNNING' && peerConsumers.length > 0 && blob !== undefined);
  const conn: ComchConnection = client.getConnection();
  const event = SyncEvent.createFromExport(host, blob!);
  event.start();
  let adds = 0;
  // The main thread's producer.
  const src = sharedBuffers(host, MSG, 64);
  const srcBufs = Array.from({ length: 64 }, (_, i) => src.full(i));
  const producer = ComchProducer.create(conn);
  let fastSent = 0;
  let fastNext = 0;
  let inFlight = 0;
  producer.taskSendSetConf(
    (t) => {
      fastSent++;
      inFlight--;
      t.free();
    },
    (t) => {
      inFlight--;
      t.free();
    },
    64,
  );
  pe.connectCtx(producer);
  producer.start();
  // The worker's producer: its completed sends are counted in shared memory, so a crash keeps them.
  const workerCounts = new Int32Array(new SharedArrayBuffer(4 * 1024));
  let workers = 0;
  let current: Worker | undefined;
  let lastExit: Promise<unknown> = Promise.resolve();
  const startWorker = () => {
    const index = workers++ % 1024;
    const w = new Worker(new URL('./soak-worker.js', import.meta.url), { workerData: { ref: conn.share() satisfies ComchConnectionRef, consumer: peerConsumers[0], counts: workerCounts, index } });
    current = w;
    w.on('error', () => {});
    lastExit = new Promise((resolve) => w.once('exit', resolve));
    w.once('exit', () => {
      if (!finishing) startWorker(); // crashed by the plan: another producer takes over
    });
  };
  let finishing = false;
  startWorker();
  process.stdin.on('data', (d) => {
    if (String(d).includes('finish')) finishing = true;
  });
  process.stdout.write('ready\n');
  while (!finishing) {
    for (let round = 0; round < 256; round++) {
      for (let i = 0; i < 8; i++) {
        const copy = message.slice(); // a held-back send reads its bytes later: one buffer each
        put(copy, controlNext);
        try {
          const t = client.taskSendAllocInit(conn, copy);
          try {
            t.submit();
            controlNext++;
          } catch (err) {
            t.free();
            if (!DocaError.is(err, 'AGAIN')) throw err;
          }
        } catch (err) {
          if (!DocaError.is(err, 'NO_MEMORY')) throw err;
        }
      }
      if (inFlight < 32) {
        const buf = srcBufs[fastNext % 64]!;
        put(buf.getData(), fastNext);
        const t = producer.taskSendAllocInit(buf, undefined, peerConsumers[0]!);
        try {
          t.submit();
          fastNext++;
          inFlight++;
        } catch (err) {
          t.free();
          if (!DocaError.is(err, 'AGAIN')) throw err;
        }
      }
      event.updateAdd(1);
      adds++;
      pe.progress();
    }
    await new Promise((r) => setImmediate(r));
  }
  current?.postMessage('finish');
  await Promise.race([lastExit, new Promise((r) => setTimeout(r, 10_000))]);
  await spin(pe, () => inFlight === 0 && pe.getNumInflightTasks() === 0);
  const workerSent = workerCounts.reduce((a, b) => a + b, 0);
  const totals = { control: controlSent, fastMain: fastSent, fastWorkers: workerSent, fast: fastSent + workerSent, adds, workers };
  const done = client.taskSendAllocInit(conn, new TextEncoder().encode(JSON.stringify(totals)));
  done.submit();
  await spin(pe, () => pe.getNumInflightTasks() === 0);
  process.stdout.write(JSON.stringify(totals) + '\n');
  await spin(pe, () => client.state !== 'RUNNING' || !conn.isConnected);
  process.exit(0);
}
