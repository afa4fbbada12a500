/**
 * Faults that cross processes and threads, with real processes: a peer killed by its plan seen as a
 * disconnect, a worker thread that ends without a word, a peer that stops progressing, and the plan
 * changed at run time with `softdpu fault add|clear`, visible in `softdpu devices --json`.
 */
import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { ComchClient } from '../src/comch/client.js';
import type { ComchConnection } from '../src/comch/connection.js';
import { ComchConsumer } from '../src/comch/consumer.js';
import { ComchServer } from '../src/comch/server.js';
import { ctxStateName } from '../src/core/ctx.js';
import { openDeviceByPci, openRepresentorByPci } from '../src/core/dev.js';
import { DevinfoRepFilter } from '../src/core/devinfo.js';
import { ProgressEngine } from '../src/core/pe.js';
import { useFabric } from '../src/fabric/fabric.js';
import { Faults } from '../src/fabric/faults/api.js';
import { StatsObserver } from '../src/fabric/stats-reader.js';
import type { EndpointJob } from './fixtures/fastpath-worker.js';
import { runCli } from './helpers/child.js';
import { startClient, startServer } from './helpers/comch.js';
import { comchPair, sharedMap, until } from './helpers/comch-pair.js';
import { code } from './helpers/errors.js';
import { tempFabricDir } from './helpers/fabric.js';

const bytes = (s: string) => new TextEncoder().encode(s);
const text = (b: Uint8Array | undefined) => new TextDecoder().decode(b);

/** A comch client in this process on b1:00.0, driven until the test ends, once connected. */
async function hostClient(t: TestContext, dir: string, name: string): Promise<{ client: ComchClient; conn: ComchConnection; states: string[] }> {
  useFabric({ dir });
  const host = openDeviceByPci('b1:00.0');
  const pe = ProgressEngine.create();
  const client = ComchClient.create(host, name);
  const states: string[] = [];
  pe.connectCtx(client);
  client.taskSendSetConf(() => {}, () => {}, 16);
  client.setStateChangedCb((_u, _c, _prev, next) => states.push(ctxStateName(next)));
  client.start();
  const ac = new AbortController();
  const driving = pe.run({ signal: ac.signal, until: () => false });
  t.after(async () => {
    if (client.state !== 'IDLE') await client.stopAndWait().catch(() => {});
    ac.abort();
    await driving;
    client.destroy();
    host.close();
  });
  return { client, conn: await client.connected({ timeoutMs: 10_000 }), states };
}

/**
 * Whether fault `id` is in force in the main thread of process `pid`: a thread lists each fault in force
 * in it among its objects (a `fault` record named after it), from the moment it read the plan.
 */
function inForce(t: TestContext, dir: string, pid: number, id: string): () => boolean {
  const observer = new StatsObserver(dir);
  t.after(() => observer.close());
  return () => observer.snapshot().threads.some((th) => th.pid === pid && th.tid === pid && th.objects.some((o) => o.kind === 'fault' && o.name.startsWith(`${id} `)));
}

/** The first fault of the plan, with its injections, as `softdpu devices --json` lists it. */
async function deviceFault(t: TestContext, dir: string): Promise<{ id: string; kind: string; injections: number } | undefined> {
  const devices = JSON.parse(await cli(t, dir, 'devices', '--json')) as { faults: { faults: { id: string; kind: string; injections: number }[] } };
  return devices.faults.faults[0];
}

async function cli(t: TestContext, dir: string, ...args: string[]): Promise<string> {
  const r = await runCli(t, [...args, '--fabric', dir]);
  assert.deepEqual(r.exit, { code: 0, signal: null }, r.stderr);
  return r.stdout;
}

test('a DPU process killed by its plan ($SOFTDPU_FAULTS) is seen by the host as a disconnect', { timeout: 60_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const plan = JSON.stringify({ faults: [{ kind: 'crash', match: { ctx: 'doca_comch_server', task: 'send' }, after: 2 }] });
  const server = startServer(t, dir, { name: 'crash', echo: true }, { SOFTDPU_FAULTS: plan });
  await server.waitFor(/^started/);
  const { client, conn, states } = await hostClient(t, dir, 'crash');
  const replies = conn.messages({ timeoutMs: 5000 });
  for (const word of ['a', 'b', 'c']) await conn.send(bytes(word));
  assert.equal(text((await replies.next()).value), 'echo:a');
  assert.equal(text((await replies.next()).value), 'echo:b');
  assert.deepEqual(await server.exited, { code: null, signal: 'SIGKILL' }, 'the third echo killed it');
  assert.equal((await replies.next()).done, true, 'the connection ended');
  await until(() => client.state === 'IDLE', 'the client to reach IDLE');
  assert.deepEqual(states.slice(-2), ['STOPPING', 'IDLE']);
  assert.match(server.stderr.join(''), /\[WARN\]\[faults\] fault env-1 \(crash\): process \d+ kills itself with SIGKILL at a send submit of doca_comch_server/);
});

test('a worker thread that crashes ends alone; its producer is reaped and the process goes on', { timeout: 60_000 }, async (t) => {
  Faults.clear();
  t.after(() => Faults.clear());
  const p = await comchPair(t, 'thread-crash');
  // `after` counts submit calls, and a send refused with AGAIN is one: with 16 buffers posted up front
  // none of the first eleven can be refused, however slowly this thread reposts under load.
  const { map, buf } = sharedMap(p.arm, 64 * 16, 16);
  const consumer = ComchConsumer.create(p.serverConn, map);
  consumer.setImmDataLen(8);
  let received = 0;
  consumer.taskPostRecvSetConf((task) => (received++, task.submit()), (task) => task.free(), 16);
  const cpe = ProgressEngine.create();
  cpe.connectCtx(consumer);
  p.drive(cpe);
  consumer.start();
  await consumer.waitForState('RUNNING', { timeoutMs: 5000 });
  for (let i = 0; i < 16; i++) consumer.taskPostRecvAllocInit(buf(i * 64, 64)).submit();
  t.after(() => consumer.stopAndWait().then(() => consumer.destroy()));
  // In force in this process, so in the worker created next; only a worker's sends match.
  Faults.add({ kind: 'crash', scope: 'thread', match: { thread: 'worker', ctx: 'doca_comch_producer', task: 'send' }, after: 10 });
  const job: EndpointJob = { role: 'producer', ref: p.clientConn.share(), dev: 'b1:00.0', size: 64, messages: 100, postBufs: 2, peerConsumers: [consumer.getId()], mode: 'busy' };
  const script = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'fastpath-worker.js');
  const worker = new Worker(script, { workerData: { job }, env: { ...process.env, SOFTDPU_FABRIC: p.arm.fabric.dir }, stderr: true });
  const messages: unknown[] = [];
  worker.on('message', (m) => messages.push(m));
  assert.equal(await new Promise((resolve) => worker.once('exit', resolve)), 1, 'the worker ended by process.exit(1)');
  assert.deepEqual(messages, [], 'without a word');
  await until(() => received === 10, 'the ten sends before the crash');
  await until(() => p.clientConn.childCount === 0, "the dead thread's producer to be reaped");
  // Stays: nothing may arrive after the crash, which no event shows; on a slow machine a late 11th
  // would only be missed, never make this fail wrongly.
  await sleep(100);
  assert.equal(received, 10);
  assert.equal(p.clientConn.isConnected, true, 'the connection and the process live on');
});

test('a DPU that stops progressing times out the host\'s waits, and recovers when the plan is cleared (at run time)', { timeout: 60_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const server = startServer(t, dir, { name: 'stall', echo: true });
  await server.waitFor(/^started/);
  const { conn } = await hostClient(t, dir, 'stall');
  let replies = conn.messages({ timeoutMs: 5000 });
  await conn.send(bytes('a'));
  assert.equal(text((await replies.next()).value), 'echo:a');
  assert.match(await cli(t, dir, 'fault', 'add', JSON.stringify({ kind: 'stall', match: { ctx: 'doca_comch_server' } })), /added f1/);
  await until(inForce(t, dir, server.pid, 'f1'), 'the server to read the plan (on its liveness cadence)');
  await replies.return!();
  // A stalled peer never answers: however slow the machine, this wait ends with TIME_OUT.
  replies = conn.messages({ timeoutMs: 1000 });
  await conn.send(bytes('b'));
  await assert.rejects(replies.next(), code('TIME_OUT'), 'no echo from a stalled peer');
  await until(() => server.stderr.join('').includes('(stall): the progress engine of doca_comch_server stops progressing'), 'the stall warning');
  let listed: Awaited<ReturnType<typeof deviceFault>>;
  await until(async () => (listed = await deviceFault(t, dir))?.injections === 1, () => `the injection count in devices --json: ${JSON.stringify(listed)}`);
  assert.equal(listed!.kind, 'stall');
  assert.match(await cli(t, dir, 'fault', 'clear'), /removed f1/);
  replies = conn.messages({ timeoutMs: 15_000 });
  assert.equal(text((await replies.next()).value), 'echo:b', 'the held message is served once the plan is cleared');
});

test('softdpu fault add reaches a running process on its liveness cadence; fault clear removes it; devices --json counts', { timeout: 60_000 }, async (t) => {
  const dir = tempFabricDir(t);
  useFabric({ dir });
  const arm = openDeviceByPci('03:00.0');
  const pe = ProgressEngine.create();
  const server = ComchServer.create(arm, openRepresentorByPci(arm, DevinfoRepFilter.NET, 'b1:00.0'), 'runtime');
  pe.connectCtx(server);
  server.taskSendSetConf(() => {}, () => {}, 4);
  server.eventMsgRecvRegister(() => {});
  server.start();
  const ac = new AbortController();
  const driving = pe.run({ signal: ac.signal, until: () => false });
  t.after(async () => {
    await server.stopAndWait().catch(() => {});
    ac.abort();
    await driving;
    server.destroy();
  });
  const client = startClient(t, dir, { name: 'runtime' });
  await client.waitFor(/^c0 state STARTING->RUNNING/);
  /**
   * Sends one message at a time (the next once the client answered the last) until an answer matches
   * `re`: the client reads the plan on its liveness cadence, so some sends may still go the old way.
   */
  let sends = 0;
  const sendUntil = async (re: RegExp): Promise<void> => {
    await until(async () => {
      const i = sends++;
      client.send(`send 0 m${i}`);
      const answer = (await client.waitFor(new RegExp(`^c0 (?:sent m${i}|send-error \\S+ m${i}|error .* \\[m${i}\\])$`)))[0];
      return re.test(answer);
    }, () => `an answer matching ${re}: ${JSON.stringify(client.lines.slice(-5))}`);
  };
  await sendUntil(/^c0 sent m0$/);
  const fault = { kind: 'again', match: { ctx: 'doca_comch_client', task: 'send' } };
  assert.match(await cli(t, dir, 'fault', 'add', '--seed', '9', JSON.stringify(fault)), /^added f1 to the fault plan of/);
  await sendUntil(/^c0 error DOCA_ERROR_AGAIN .*fault f1 injected AGAIN on a send task of doca_comch_client/);
  const listed = JSON.parse(await cli(t, dir, 'fault', 'list', '--json'));
  assert.deepEqual({ seed: listed.seed, generation: listed.generation, faults: listed.faults.map((f: { id: string; kind: string }) => [f.id, f.kind]) }, { seed: 9, generation: 1, faults: [['f1', 'again']] });
  await until(async () => ((await deviceFault(t, dir))?.injections ?? 0) > 0, 'the client to publish its count');
  assert.match(await cli(t, dir, 'fault', 'clear', 'f1'), /removed f1/);
  await sendUntil(/^c0 sent m\d+$/);
  assert.deepEqual(JSON.parse(await cli(t, dir, 'fault', 'list', '--json')).faults, []);
  assert.deepEqual(Faults.list({ fabric: dir }).faults, [], 'the API reads the same plan');
});
