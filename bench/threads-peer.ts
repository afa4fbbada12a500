/**
 * Exchanges between the main thread and a worker thread of one process, 64-byte round trips; the
 * functions are for any benchmark that involves threads (a DPA one, say):
 *   messagePortRtt(n)   postMessage ping-pong on the worker's port (both sides asleep in their event loops)
 *   sabWaitRtt(n)       SharedArrayBuffer words, Atomics.wait / Atomics.notify (both asleep in futexes)
 *   sabSpinRtt(n)       SharedArrayBuffer words, both spinning on Atomics.load: the in-process limit
 *   fastpathThreadRtt(n, mode)   softdpu: the comch fast path between the server side's producer and
 *                       consumer in the main thread and the client side's in a worker (`connection.share()`)
 * Each resolves with {p50_us, p99_us, p99_9_us, first_us, warmup_mean_us, cpu_us_per_msg} (the process's
 * CPU, both threads, per round trip).
 * As a process (`threads-peer N [N_BUSY]`, in a fabric SOFTDPU_FABRIC) it runs them all and prints one
 * JSON object: the spinning contenders (SAB spin, the busy fast path) make N_BUSY trips (default N).
 */
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { ComchClient } from '../src/comch/client.js';
import type { ComchConnectionRef } from '../src/comch/endpoint-table.js';
import { ComchServer } from '../src/comch/server.js';
import { openDeviceByPci, openRepresentorByPci } from '../src/core/dev.js';
import { DevinfoRepFilter } from '../src/core/devinfo.js';
import { ProgressEngine } from '../src/core/pe.js';
import { cpuMeter, rttSummary } from './lib.js';
import { ARM, drive, fastpathEcho, fastpathPinger, HOST } from './peer-lib.js';

export interface ThreadRtt {
  p50_us: number;
  p99_us: number;
  p99_9_us?: number;
  first_us?: number;
  warmup_mean_us?: number;
  cpu_us_per_msg: number;
}

type Job = { kind: 'port' } | { kind: 'sab'; sab: SharedArrayBuffer; n: number; sleep: boolean } | { kind: 'fastpath'; ref: ComchConnectionRef; peerConsumer: number; n: number; mode: 'busy' | 'notify' };

const PING = 16; // Int32 indices, on separate cache lines
const PONG = 32;

function worker(job: Job): Worker {
  const w = new Worker(new URL(import.meta.url), { workerData: { threadsPeer: job } });
  w.on('error', (err) => {
    throw err;
  });
  return w;
}

/** A worker, once it loaded its modules and set up (it posts 'ready'), so that is not measured. */
async function readyWorker(job: Job): Promise<Worker> {
  const w = worker(job);
  const [m] = (await once(w, 'message')) as [unknown];
  if (m !== 'ready') throw new Error(`threads-peer: worker said ${String(m)}`);
  return w;
}

/** The round trips' steady-state percentiles and warm-up (measure.ts), and the CPU per trip. */
const result = (samples: number[], cpuUs: number): ThreadRtt => rttSummary(samples, cpuUs);

export async function messagePortRtt(n: number): Promise<ThreadRtt> {
  const w = await readyWorker({ kind: 'port' });
  const msg = new Uint8Array(64).fill(0x61);
  const samples: number[] = [];
  const cpu = cpuMeter();
  let t0 = performance.now();
  await new Promise<void>((done) => {
    w.on('message', () => {
      samples.push((performance.now() - t0) * 1000);
      if (samples.length === n) return done();
      t0 = performance.now();
      w.postMessage(msg);
    });
    w.postMessage(msg);
  });
  const out = result(samples, cpu());
  await w.terminate();
  return out;
}

async function sabRtt(n: number, sleep: boolean): Promise<ThreadRtt> {
  const sab = new SharedArrayBuffer(256);
  const i32 = new Int32Array(sab);
  const w = await readyWorker({ kind: 'sab', sab, n, sleep });
  const samples = new Array<number>(n);
  const cpu = cpuMeter();
  for (let i = 1; i <= n; i++) {
    const t0 = performance.now();
    Atomics.store(i32, PING, i);
    if (sleep) Atomics.notify(i32, PING);
    for (let v; (v = Atomics.load(i32, PONG)) !== i; ) if (sleep) Atomics.wait(i32, PONG, v);
    samples[i - 1] = (performance.now() - t0) * 1000;
  }
  const out = result(samples, cpu());
  await once(w, 'exit');
  return out;
}

export const sabSpinRtt = (n: number) => sabRtt(n, false);
export const sabWaitRtt = (n: number) => sabRtt(n, true);

/**
 * softdpu between threads: a server and a client in this process (this fabric); the main thread pings
 * from the server side's producer and consumer, a worker echoes with the client side's, made from the
 * client connection's `share()`. Each thread's contexts are on that thread's one engine, run in `mode`.
 */
export async function fastpathThreadRtt(n: number, mode: 'busy' | 'notify'): Promise<ThreadRtt> {
  const arm = openDeviceByPci(ARM);
  const pe = ProgressEngine.create();
  const name = `threads-${mode}`;
  const server = ComchServer.create(arm, openRepresentorByPci(arm, DevinfoRepFilter.NET, HOST), name);
  const client = ComchClient.create(openDeviceByPci(HOST), name);
  const workerConsumers: number[] = [];
  let mainConsumer!: (id: number) => void;
  const mainConsumerId = new Promise<number>((resolve) => (mainConsumer = resolve));
  server.eventConsumerRegister((_e, _c, id) => workerConsumers.push(id), () => {});
  client.eventConsumerRegister((_e, _c, id) => mainConsumer(id), () => {});
  for (const ctx of [server, client]) {
    pe.connectCtx(ctx);
    ctx.taskSendSetConf((t) => t.free(), (t) => t.free(), 4);
    ctx.start();
  }
  await pe.run({ mode: 'busy', until: () => client.state === 'RUNNING' && server.connections.length > 0 });
  // The pinger's setup drives the engine until the worker's consumer is announced; meanwhile the client
  // context tells this thread the id of the pinger's consumer, which the worker needs.
  const setup = fastpathPinger({ dev: arm, pe, conn: server.connections[0]!, size: 64, posted: 2, peerConsumers: workerConsumers, mode });
  const w = worker({ kind: 'fastpath', ref: client.getConnection().share(), peerConsumer: await mainConsumerId, n, mode });
  const exited = once(w, 'exit');
  const { samples, cpuUs } = await (await setup).run(n);
  // The worker's consumer stops through this side's contexts: keep the engine going until it is gone.
  const driven = drive(pe);
  await exited;
  await driven.stop();
  await server.stopTree({ timeoutMs: 5000 });
  await client.stopTree({ timeoutMs: 5000 });
  return result(samples, cpuUs);
}

if (!isMainThread && workerData?.threadsPeer) {
  const job = workerData.threadsPeer as Job;
  const port = parentPort!;
  if (job.kind === 'port') {
    port.on('message', (m) => port.postMessage(m));
    port.postMessage('ready');
  } else if (job.kind === 'sab') {
    const i32 = new Int32Array(job.sab);
    port.postMessage('ready');
    for (let i = 1; i <= job.n; i++) {
      for (let v; (v = Atomics.load(i32, PING)) !== i; ) if (job.sleep) Atomics.wait(i32, PING, v);
      Atomics.store(i32, PONG, i);
      if (job.sleep) Atomics.notify(i32, PONG);
    }
  } else {
    const pe = ProgressEngine.create();
    const side = { dev: openDeviceByPci(HOST), pe, conn: job.ref, size: 64, posted: 2, peerConsumers: [job.peerConsumer], mode: job.mode };
    const echo = await fastpathEcho(side);
    await pe.run({ mode: job.mode, until: () => echo.reposted() >= job.n });
    await echo.close();
  }
} else if (isMainThread && process.argv[1] === fileURLToPath(import.meta.url)) {
  const n = Number(process.argv[2]);
  const nBusy = Number(process.argv[3] ?? n);
  const out = {
    message_port: await messagePortRtt(n),
    sab_wait: await sabWaitRtt(n),
    sab_spin: await sabSpinRtt(nBusy),
    softdpu_fastpath_notify: await fastpathThreadRtt(n, 'notify'),
    softdpu_fastpath_busy: await fastpathThreadRtt(nBusy, 'busy'),
  };
  process.stdout.write(JSON.stringify(out) + '\n');
}
