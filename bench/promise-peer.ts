/**
 * Comch through the promise and iterator API, written as README.md and examples/echo-*.mjs show it: every
 * context on its own engine, driven by `pe.run({ signal, until: () => false })`. Sides, each a process:
 *   echo NAME              server: `for await ({ connection, data } of server.messages()) await
 *                          connection.send(data)` until a 1-byte message; prints {"cpu_us_per_msg"}
 *   ping NAME N            client: N x (`await connection.send(64 B)`, `await replies.next()`) with
 *                          `replies = connection.messages()`; prints {"p50_us","p99_us","cpu_us_per_msg"}
 *   scale NAME N K1,K2,..  the pinging client, plus idle clients (each its own ComchClient and engine, all
 *                          on one device, each waiting in `connection.messages().next()`) added up to
 *                          each K in turn (after 500 warm-up trips); per K: N round trips and this
 *                          process's CPU over 1 s idle;
 *                          prints {"results":[{"k","p50_us","p99_us","cpu_us_per_msg","idle_cpu_pct"}]}
 *   idle-server NAME / idle-client NAME   connect, each side waiting for a message, and sit for 1 s;
 *                          print {"cpu_pct"} of that second
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { ComchConnection } from '../src/comch/connection.js';
import { openDeviceByPci } from '../src/core/dev.js';
import { cpuMeter, idleCpu, percentiles, printCpu, printRtt } from './lib.js';
import { type Driven, HOST, readmeClient, readmeServer, watchdog } from './peer-lib.js';

const [role, name, count, ks] = process.argv.slice(2);
const n = Number(count);
const MSG = new Uint8Array(64).fill(0x61);
const QUIT = new Uint8Array(1);
watchdog(`promise-peer ${role}`, 300_000);

/** Round trips through the promise API: send, then the next reply from the connection's iterator. */
async function roundTrips(connection: ComchConnection, replies: AsyncIterator<Uint8Array>, trips: number): Promise<{ samples: number[]; cpuUs: number }> {
  const samples: number[] = [];
  const cpu = cpuMeter();
  for (let i = 0; i < trips; i++) {
    const t0 = performance.now();
    await connection.send(MSG);
    const { value, done } = await replies.next();
    if (done || value.length !== MSG.length) throw new Error(`promise-peer: reply ${i} is ${done ? 'missing' : `${value.length} bytes`}`);
    samples.push((performance.now() - t0) * 1000);
  }
  return { samples, cpuUs: cpu() };
}

/** Stops an engine's driver, then stops and destroys the context as the README does. */
async function close(side: Driven, ctx: { [Symbol.asyncDispose](): Promise<void> }): Promise<void> {
  await side.stop();
  await ctx[Symbol.asyncDispose]();
}

if (role === 'echo') {
  const side = readmeServer(name!);
  process.stdout.write('ready\n');
  let echoed = 0;
  let cpu = () => 0;
  for await (const { connection, data } of side.server.messages()) {
    if (data.length === 1) break;
    if (echoed++ === 0) cpu = cpuMeter();
    await connection.send(data);
  }
  printCpu(cpu(), echoed);
  await close(side, side.server);
} else if (role === 'ping' || role === 'scale') {
  const dev = openDeviceByPci(HOST);
  const pinger = readmeClient(name!, dev);
  const connection = await pinger.client.connected({ timeoutMs: 10_000 });
  const replies = connection.messages();
  if (role === 'ping') {
    const { samples, cpuUs } = await roundTrips(connection, replies, n);
    printRtt(samples, cpuUs);
  } else {
    const idle: { side: ReturnType<typeof readmeClient>; it: AsyncIterableIterator<Uint8Array> }[] = [];
    const results = [];
    await roundTrips(connection, replies, Math.min(n, 500)); // warm-up, so K = 0 is not the JIT's first go
    for (const k of ks!.split(',').map(Number)) {
      while (idle.length < k) {
        // Up to 32 connect at once.
        const batch = Array.from({ length: Math.min(32, k - idle.length) }, () => readmeClient(name!, dev));
        for (const side of batch) {
          const it = (await side.client.connected({ timeoutMs: 30_000 })).messages();
          void it.next(); // waits for a message that never comes, as an idle client would
          idle.push({ side, it });
        }
      }
      await sleep(100);
      const { samples, cpuUs } = await roundTrips(connection, replies, n);
      const { p50, p99 } = percentiles(samples);
      const idlePct = await idleCpu(() => sleep(1000));
      results.push({ k, p50_us: p50, p99_us: p99, cpu_us_per_msg: cpuUs / n, idle_cpu_pct: idlePct });
    }
    process.stdout.write(JSON.stringify({ results }) + '\n');
    for (let i = 0; i < idle.length; i += 64) {
      await Promise.all(idle.slice(i, i + 64).map(async ({ side, it }) => (await it.return!(), await close(side, side.client))));
    }
  }
  await replies.return!();
  await connection.send(QUIT);
  await close(pinger, pinger.client);
} else if (role === 'idle-server') {
  const side = readmeServer(name!);
  process.stdout.write('ready\n');
  const it = side.server.messages();
  void it.next(); // the echo server's for-await, waiting for a message
  while (side.server.connections.length === 0) await sleep(5);
  const pct = await idleCpu(() => sleep(1000));
  process.stdout.write(JSON.stringify({ cpu_pct: pct }) + '\n');
  while (side.server.connections.length > 0) await sleep(5);
  await it.return!();
  await close(side, side.server);
} else if (role === 'idle-client') {
  const side = readmeClient(name!);
  const it = (await side.client.connected({ timeoutMs: 10_000 })).messages();
  void it.next();
  const pct = await idleCpu(() => sleep(1000));
  process.stdout.write(JSON.stringify({ cpu_pct: pct }) + '\n');
  await it.return!();
  await close(side, side.client);
} else {
  throw new Error(`promise-peer: unknown role ${role}`);
}
