/**
 * One side of the comch control-path benchmarks, in its own process:
 *   echo  <busy|notify>         server: answers every message with the same bytes; stops on a 1-byte message;
 *                               prints {"cpu_us_per_msg"} (its CPU from the first message to the last)
 *   ping  <busy|notify> N [SIZE]  client: N round trips of SIZE bytes (default 64), prints
 *                               {"p50_us","p99_us","cpu_us_per_msg"}
 *   sink  N                     server: counts N messages (busy poll), prints {"rate","whole_rate"}
 *                               (messages/s; lib/measure.ts StreamClock: after the warm-up, and over all)
 *   flood N                     client: sends N 64-byte messages as fast as the queue allows (busy poll),
 *                               resubmitting each completed task
 *   send  N                     client: the same, a task per message as DOCA's samples send (alloc_init,
 *                               submit, freed by its completion); prints {}
 * Busy-polling sides run DOCA-style synchronous progress loops once connected. With SOFTDPU_BENCH_ALLOC=1
 * (lib/alloc.ts), sink, flood and send also measure their own allocation per message: {"alloc": {...}}.
 */
import { ComchClient } from '../src/comch/client.js';
import { ComchServer } from '../src/comch/server.js';
import type { ComchSendTask } from '../src/comch/send-task.js';
import { openDeviceByPci, openRepresentorByPci } from '../src/core/dev.js';
import { DevinfoRepFilter } from '../src/core/devinfo.js';
import { ProgressEngine } from '../src/core/pe.js';
import { ARM, HOST } from './peer-lib.js';
import { allocMeterFromEnv, cpuMeter, printCpu, printRtt, StreamClock } from './lib.js';

const [role, mode, count, size] = process.argv.slice(2);
const n = Number(count ?? mode);
const NAME = 'bench';
const QUIT = new Uint8Array(1);
const MSG = new Uint8Array(Number(size ?? 64)).fill(0x61); // only ping takes a size

function server(): { pe: ProgressEngine; server: ComchServer } {
  const dev = openDeviceByPci(ARM);
  const rep = openRepresentorByPci(dev, DevinfoRepFilter.NET, HOST);
  const pe = ProgressEngine.create();
  const s = ComchServer.create(dev, rep, NAME);
  pe.connectCtx(s);
  s.setRecvQueueSize(4096);
  return { pe, server: s };
}

async function client(sendCb: (t: ComchSendTask) => void): Promise<{ pe: ProgressEngine; client: ComchClient }> {
  const dev = openDeviceByPci(HOST);
  const pe = ProgressEngine.create();
  const c = ComchClient.create(dev, NAME);
  pe.connectCtx(c);
  c.setRecvQueueSize(4096);
  c.taskSendSetConf(sendCb, (t) => {
    throw new Error(`send failed: ${t.error?.message}`);
  }, 1024);
  return { pe, client: c };
}

function spin(pe: ProgressEngine, until: () => boolean): void {
  while (!until()) pe.progress();
}

if (role === 'echo') {
  const { pe, server: s } = server();
  let quit = false;
  let echoed = 0;
  let cpu = () => 0;
  let cpuUs = 0;
  s.taskSendSetConf((t) => t.free(), (t) => t.free(), 1024);
  s.eventMsgRecvRegister((_e, data, len, conn) => {
    if (len === 1) {
      quit = true;
      cpuUs = cpu();
    } else {
      if (echoed++ === 0) cpu = cpuMeter();
      s.taskSendAllocInit(conn, data).submit();
    }
  });
  s.start();
  process.stdout.write('ready\n');
  if (mode === 'busy') {
    await pe.run({ mode: 'busy', until: () => s.connections.length > 0 });
    spin(pe, () => quit);
  } else {
    await pe.run({ until: () => quit });
  }
  printCpu(cpuUs, echoed);
  await s.stopAndWait();
} else if (role === 'ping') {
  let replies = 0;
  const samples: number[] = [];
  let t0 = 0;
  const meter = allocMeterFromEnv(n);
  const c = await client((t) => t.free());
  c.client.eventMsgRecvRegister(() => {
    samples.push((performance.now() - t0) * 1000);
    replies++;
    meter.tick();
    if (mode !== 'busy' && replies < n) {
      t0 = performance.now();
      c.client.taskSendAllocInit(c.client.getConnection(), MSG).submit();
    }
  });
  c.client.start();
  const conn = await (async () => {
    const ready = c.client.connected();
    await c.pe.run({ mode: 'busy', until: () => c.client.state === 'RUNNING' });
    return ready;
  })();
  const cpu = cpuMeter();
  if (mode === 'busy') {
    for (let i = 0; i < n; i++) {
      t0 = performance.now();
      c.client.taskSendAllocInit(conn, MSG).submit();
      spin(c.pe, () => replies > i);
    }
  } else {
    t0 = performance.now();
    c.client.taskSendAllocInit(conn, MSG).submit();
    await c.pe.run({ until: () => replies >= n });
  }
  const cpuUs = cpu();
  const quit = conn.send(QUIT);
  await c.pe.run({ mode: 'busy', until: () => c.pe.getNumInflightTasks() === 0 });
  await quit;
  printRtt(samples, cpuUs, { alloc: await meter.figures() });
  await c.client.stopAndWait();
} else if (role === 'sink') {
  const { pe, server: s } = server();
  let got = 0;
  const clock = new StreamClock(n);
  const meter = allocMeterFromEnv(n);
  s.eventMsgRecvRegister(() => {
    clock.at(++got);
    meter.tick();
  });
  s.taskSendSetConf((t) => t.free(), (t) => t.free(), 16);
  s.start();
  process.stdout.write('ready\n');
  await pe.run({ mode: 'busy', until: () => s.connections.length > 0 });
  spin(pe, () => got >= n);
  const { rate, whole_rate } = clock.figures(64);
  process.stdout.write(JSON.stringify({ rate, whole_rate, alloc: await meter.figures() }) + '\n');
  await s.stopAndWait();
} else if (role === 'flood') {
  let submitted = 0;
  let completed = 0;
  const meter = allocMeterFromEnv(n);
  const c = await client((t) => {
    completed++;
    meter.tick();
    if (submitted < n) {
      submitted++;
      t.submit();
    } else t.free();
  });
  c.client.start();
  const conn = await (async () => {
    const ready = c.client.connected();
    await c.pe.run({ mode: 'busy', until: () => c.client.state === 'RUNNING' });
    return ready;
  })();
  for (let i = 0; i < 1024 && submitted < n; i++, submitted++) c.client.taskSendAllocInit(conn, MSG).submit();
  spin(c.pe, () => completed >= n);
  const alloc = await meter.figures();
  if (alloc) process.stdout.write(JSON.stringify({ alloc }) + '\n');
  await c.client.stopAndWait();
} else if (role === 'send') {
  let submitted = 0;
  let completed = 0;
  const meter = allocMeterFromEnv(n);
  let conn: ReturnType<ComchClient['getConnection']> | undefined;
  const c = await client((t) => {
    t.free();
    completed++;
    meter.tick();
    if (submitted < n) {
      submitted++;
      c.client.taskSendAllocInit(conn!, MSG).submit();
    }
  });
  c.client.start();
  conn = await (async () => {
    const ready = c.client.connected();
    await c.pe.run({ mode: 'busy', until: () => c.client.state === 'RUNNING' });
    return ready;
  })();
  for (let i = 0; i < 1024 && submitted < n; i++, submitted++) c.client.taskSendAllocInit(conn, MSG).submit();
  spin(c.pe, () => completed >= n);
  process.stdout.write(JSON.stringify({ alloc: await meter.figures() }) + '\n');
  await c.client.stopAndWait();
}
