/**
 * Introspection beyond comch (fabric/stats.ts): `softdpu top --once --json` against a fabric whose sync
 * events, DPA, DPA threads and injected faults the test knows lists exactly them, with their counts; an
 * observer attached throughout a run of the fast path and the control path under load changes no
 * message and no order.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ObjectSnapshot } from '../src/fabric/stats-reader.js';
import { StatsObserver } from '../src/fabric/stats-reader.js';
import type { EndpointReport } from './fixtures/fastpath-worker.js';
import { type Child, cliPath, runCli, spawnChild, topJson } from './helpers/child.js';
import { linesOf } from './helpers/comch.js';
import { tempFabricDir } from './helpers/fabric.js';
import { shape } from './helpers/observe.js';

const RUNNING = 2; // context state (and a sync event started with doca_sync_event_start)
const DPA_STARTED = 1;
const THREAD_RUNNABLE = 2;

test('softdpu top --once --json lists exactly the sync events, the DPA, its threads and the injected fault, with their counts', { timeout: 60_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const env = { SOFTDPU_FABRIC: dir };
  // A sync event on the DPU's Arm side, set to 40 and added 2; a host process imports it and sleeps in
  // an async wait for 100.
  const exporter = spawnChild(t, 'se-exporter', ['03:00.0'], { env });
  const blob = (await exporter.waitFor(/^blob ([0-9a-f]+)$/))[1]!;
  exporter.send('set 40');
  await exporter.waitFor(/^ok set$/);
  exporter.send('add 2');
  await exporter.waitFor(/^ok add$/);
  const waiter = spawnChild(t, 'se-waiter', [blob, 'b1:00.0', 'async', 'eq', '100', '-1', '0'], { env });
  await waiter.waitFor(/^armed$/);
  // A DPA with N threads run K times each, and a fault injected M times.
  const [N, K, M] = [3, 4, 2];
  const holder = spawnChild(t, 'observe-dpa', [String(N), String(K), String(M)], { env });
  assert.equal((await holder.waitFor(/^ready (\d+) (\d+)$/, 40_000))[1], String(N * K));

  const snap = await topJson(t, dir);
  assert.deepEqual(
    snap.threads.map((th) => [th.pid, th.tid, th.alive]).sort(),
    [exporter, waiter, holder].map((c) => [c.pid, c.pid, true]).sort(),
    'one thread per process: execution units and idle threads publish nothing',
  );
  const of = (c: Child) => snap.threads.find((th) => th.pid === c.pid)!;

  const [exported] = of(exporter).objects.filter((o) => o.kind === 'sync_event');
  const fd = /^event \d+:(\d+) /.exec(exported?.name ?? '')?.[1];
  assert.ok(fd, `the event is named after its control segment: ${exported?.name}`);
  assert.deepEqual(shape(of(exporter)), [
    { kind: 'device', name: '0000:03:00.0 (dpu)', state: 0, parent: null, peer: 0, counters: {} },
    { kind: 'sync_event', name: `event ${exporter.pid}:${fd} remote_pci→cpu`, state: RUNNING, parent: 'device', peer: 0, counters: { value: 42, waiters: 0, updates: 2 } },
  ]);
  assert.deepEqual(shape(of(waiter)), [
    { kind: 'device', name: '0000:b1:00.0 (host)', state: 0, parent: null, peer: 0, counters: {} },
    { kind: 'sync_event', name: `event ${exporter.pid}:${fd} imported (remote_pci)`, state: RUNNING, parent: 'device', peer: exporter.pid, counters: { value: 42, waiters: 1, updates: 0 } },
  ]);

  const objects = shape(of(holder));
  const counterName = objects.find((o) => o.kind === 'sync_event')?.name ?? '';
  assert.match(counterName, new RegExp(`^event ${holder.pid}:\\d+ dpa→cpu$`));
  const threadNames = objects.filter((o) => o.kind === 'dpa_thread').map((o) => o.name);
  assert.equal(threadNames.length, N);
  for (const name of threadNames) assert.match(name, /^DPA thread \d+ \(id \d+\)$/);
  const probeName = objects.filter((o) => o.kind === 'sync_event')[1]?.name ?? '';
  assert.match(probeName, new RegExp(`^event ${holder.pid}:\\d+ cpu→cpu$`));
  assert.deepEqual(objects, [
    { kind: 'device', name: '0000:03:00.0 (dpu)', state: 0, parent: null, peer: 0, counters: {} },
    { kind: 'dpa', name: 'DPA of 0000:03:00.0', state: DPA_STARTED, parent: 'device', peer: 0, counters: { threads: N, kernels: 0, rpcs: N * K } },
    // DPA code's updates are the DPA's: this handle made none; its value is its last read.
    { kind: 'sync_event', name: counterName, state: RUNNING, parent: 'device', peer: 0, counters: { value: N * K, waiters: 0, updates: 0 } },
    ...threadNames.map((name) => ({ kind: 'dpa_thread', name, state: THREAD_RUNNABLE, parent: 'dpa', peer: 0, counters: { activations: K } })),
    { kind: 'fault', name: 'api-1 again doca_sync_event get (api)', state: 0, parent: null, peer: 0, counters: { injected: M } },
    { kind: 'sync_event', name: probeName, state: RUNNING, parent: 'device', peer: 0, counters: { value: 0, waiters: 0, updates: 0 } },
  ]);
  const faultEvents = of(holder).events.filter((e) => e.kind === 'fault');
  assert.equal(faultEvents.length, M, 'one event per injection');
  for (const e of faultEvents) assert.match(e.text, /^api-1: AGAIN at a get submit/);

  // The waiter wakes: both handles show the value, the waiter none waiting, the exporter one more update.
  exporter.send('set 100');
  await waiter.waitFor(/^result ok$/);
  const observer = new StatsObserver(dir);
  t.after(() => observer.close());
  const eventOf = (c: Child) => observer.snapshot().threads.find((th) => th.pid === c.pid)!.objects.find((o) => o.kind === 'sync_event')!;
  assert.deepEqual(eventOf(exporter).counters, { value: 100, waiters: 0, updates: 3 });
  assert.deepEqual(eventOf(waiter).counters, { value: 100, waiters: 0, updates: 0 });

  // Rates (RATE/S) over the two looks of --once: nothing moved between them.
  const text = await runCli(t, ['top', '--once', '--fabric', dir]);
  assert.equal(text.exit.code, 0, text.stderr);
  assert.match(text.stdout, /^softdpu top {2}\S+ {2}\d\d:\d\d:\d\d {2}3 processes, 12 objects, 0 connections, 0 msg\/s, 0 B\/s over \d+ ms$/m);
  assert.match(text.stdout, new RegExp(`^ +sync_event +event ${exporter.pid}:${fd} remote_pci→cpu +RUNNING +0 +value 100  waiters 0  updates 3$`, 'm'));
  assert.match(text.stdout, new RegExp(`^ +sync_event +event ${exporter.pid}:${fd} imported \\(remote_pci\\) ↔ ${exporter.pid} se-exporter\\.js +RUNNING +0 +value 100  waiters 0  updates 0$`, 'm'));
  assert.match(text.stdout, /^ +dpa +DPA of 0000:03:00\.0 +STARTED +0 +threads 3  kernels 0  rpcs 12$/m);
  assert.equal(text.stdout.match(/^ +dpa_thread +DPA thread \d+ \(id \d+\) +RUNNABLE +0 +activations 4$/gm)?.length, N);
  assert.match(text.stdout, /^ +fault +api-1 again doca_sync_event get \(api\) +0 +injected 2$/m);
  assert.match(text.stdout, new RegExp(`^\\d\\d:\\d\\d:\\d\\d\\.\\d{3}  ${holder.pid} +fault +api-1: AGAIN at a get submit`, 'm'));
});

test('an observer attached to a fabric under load (fast path and control path) changes no message and no order', { timeout: 120_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const env = { SOFTDPU_FABRIC: dir };
  // Control path: a server and a client; fast path: a producer and a consumer on each side of another pair.
  const server = spawnChild(t, 'comch-server', [JSON.stringify({ name: 'ctl' })], { env });
  await server.waitFor(/^started DOCA_SUCCESS/);
  const client = spawnChild(t, 'comch-client', [JSON.stringify({ name: 'ctl' })], { env });
  await client.waitFor(/^c0 state STARTING->RUNNING/);
  await server.waitFor(/^connect 1 true/);
  // Observers from the start: `softdpu top --json` every 50 ms (its shortest), and one in this process as fast as it goes.
  const top = spawnChild(t, 'top', ['top', '--json', '--interval', '50', '--fabric', dir], { script: cliPath });
  const observer = new StatsObserver(dir);
  t.after(() => observer.close());
  let looking = true;
  t.after(() => (looking = false)); // also when a wait below fails: snapshot() of a closed observer does not throw
  let looks = 0;
  const seen = new Map<string, number[]>();
  const look = () => {
    for (const th of observer.snapshot().threads) {
      for (const o of th.objects as ObjectSnapshot[]) {
        const value = o.kind === 'connection' ? o.counters.recv_messages : o.kind === 'consumer' ? o.counters.received : o.kind === 'producer' ? o.counters.sent : undefined;
        if (value === undefined) continue;
        const key = `${th.pid}/${th.tid}/${o.slot}/${o.kind}/${o.name}`;
        seen.set(key, [...(seen.get(key) ?? []), value]);
      }
    }
    looks++;
    if (looking) setImmediate(look);
  };
  look();

  const FP = 3000;
  const common = { name: 'fp', consumers: 1, producers: 1, peerConsumers: 1, peerProducers: 1, messages: FP, size: 256, postBufs: 16, mode: 'notify', workers: false };
  const fpServer = spawnChild(t, 'fastpath-node', [JSON.stringify({ ...common, side: 'server' })], { env });
  const fpClient = spawnChild(t, 'fastpath-node', [JSON.stringify({ ...common, side: 'client' })], { env });
  const CP = 3000;
  for (let i = 0; i < CP; i += 500) client.send(`burst 0 500 m${i / 500}-`);
  for (let i = 0; i < CP; i += 500) server.send(`burst * 500 s${i / 500}-`);
  await server.waitFor(new RegExp(`^recv 1 \\d+ m${CP / 500 - 1}-499$`), 60_000);
  await client.waitFor(new RegExp(`^c0 recv \\d+ s${CP / 500 - 1}-499$`), 60_000);
  await Promise.all([fpServer.waitFor(/^done$/, 90_000), fpClient.waitFor(/^done$/, 90_000)]);
  await new Promise((resolve) => setTimeout(resolve, 100));
  looking = false;

  const sequence = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${Math.floor(i / 500)}-${i % 500}`);
  assert.deepEqual(server.lines.filter((l) => l.startsWith('recv ')).map((l) => l.split(' ')[3]), sequence('m', CP), 'client to server: every message once, in order');
  assert.deepEqual(client.lines.filter((l) => l.startsWith('c0 recv ')).map((l) => l.split(' ')[3]), sequence('s', CP), 'server to client: every message once, in order');
  for (const [label, child] of [['server', fpServer], ['client', fpClient]] as const) {
    const reports = linesOf(child, /^report /).map((l) => JSON.parse(l.slice(7)) as EndpointReport);
    const consumer = reports.find((r) => r.role === 'consumer')!;
    assert.equal(consumer.count, FP, `${label}: the fast-path consumer received everything`);
    assert.ok(consumer.ordered, `${label}: in the producer's order (sequence numbers)`);
    assert.ok(consumer.bytesOk, `${label}: every byte`);
    assert.equal(reports.find((r) => r.role === 'producer')!.count, FP);
  }
  assert.ok(looks > 20, `the observer looked ${looks} times during the run`);
  for (const [key, values] of seen) {
    const back = values.findIndex((n, i) => i > 0 && n < values[i - 1]!);
    assert.equal(back, -1, `${key}: a counter it read went back, from ${values[back - 1]} to ${values[back]}`);
  }
  const connections = [...seen].filter(([key]) => /\/connection\//.test(key)).map(([key, v]) => [key, v.at(-1)] as const);
  assert.ok(connections.filter(([, n]) => n === CP).length >= 2, `it saw both control-path connections reach every message: ${JSON.stringify(connections)}`);
  const endpoints = [...seen].filter(([key]) => /\/(consumer|producer)\//.test(key));
  t.diagnostic(`${looks} looks; fast-path endpoints seen: ${endpoints.map(([key, v]) => `${key.split('/').slice(3).join(' ')}: ${v.length} looks, last ${v.at(-1)}`).join('; ')}`);
  assert.ok(endpoints.some(([, v]) => v.some((n) => n > 0 && n < FP)), 'it watched the fast-path endpoints while they worked');
  await top.waitFor(new RegExp(`"recv_messages":${CP},`), 30_000);
  assert.ok(top.lines.length > 5, `softdpu top --json printed ${top.lines.length} frames`);
});
