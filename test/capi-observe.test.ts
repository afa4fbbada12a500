/**
 * The fabric sees C processes (docs/c.md, "softdpu top and view; the fault plan"): the scriptable C peers
 * (test/fixtures/capi/comch-peer, se-peer; library and peers under AddressSanitizer and UBSan) on private fabrics publish the introspection records a
 * TypeScript process publishes (softdpu top --once --json and an in-process observer read them: the
 * objects, their counters moving, a sync event's value), leave an epitaph when they exit and a dead entry
 * when killed; and the fault plan of `softdpu fault add` reaches them: AGAIN on a send the planned number
 * of times, counted where `softdpu fault list` counts; a stalled server that resumes once the plan is
 * cleared; a crash at a send; a lost connection event; the same seeded draws in a C and a TypeScript
 * client; $SOFTDPU_FAULTS, refused naming the field or in force; a driver failure; a crash on the cadence.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { encodeHello } from '../src/comch/wire.js';
import { DocaErrorCode } from '../src/core/error.js';
import { readStats, readTally } from '../src/fabric/faults/files.js';
import { self } from '../src/fabric/liveness.js';
import { type FabricSnapshot, StatsObserver, type ThreadSnapshot } from '../src/fabric/stats-reader.js';
import { type Child, runCli, spawnChild, topJson } from './helpers/child.js';
import { buildPeer, capiFixtures, ccBuild, logged, startProgram, writeSdk } from './helpers/capi.js';
import { knock } from './helpers/comch.js';
import { tempFabricDir } from './helpers/fabric.js';
import { shape } from './helpers/observe.js';
import { until } from './helpers/wait.js';

const RUNNING = 2;
/** The library and the peers run under AddressSanitizer and UBSan, leaks included (as capi-comch-trust does). */
const SANITIZE = '-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all -g';
const ASAN = { ASAN_OPTIONS: 'detect_leaks=1:abort_on_error=0', UBSAN_OPTIONS: 'halt_on_error=1:print_stacktrace=1' };

/** startProgram under the sanitizers; once the test ends (the program killed or exited), nothing was reported. */
function start(t: TestContext, path: string, args: string[], dir: string, env: Record<string, string> = {}): Child {
  const child = startProgram(t, path, args, dir, { ...ASAN, ...env });
  t.after(() => assert.doesNotMatch(child.stderr.join(''), /Sanitizer|runtime error/, `${args.join(' ')}: ${child.stderr.join('').slice(-4000)}`));
  return child;
}

/** The injections of fault `id` every process of the fabric counted (live counts files and the tally). */
function injections(dir: string, id: string): number {
  const live = readStats(dir).flatMap((s) => s.faults.filter((f) => f.id === id && f.source === 'fabric').map((f) => f.injections));
  return live.reduce((a, b) => a + b, readTally(dir)[id] ?? 0);
}

function threadOf(snap: FabricSnapshot, pid: number): ThreadSnapshot | undefined {
  return snap.threads.find((th) => th.pid === pid);
}

/** Adds a fault to the fabric's plan and waits until process `pid` has it in force (its record of it). */
async function faultAdd(t: TestContext, dir: string, fault: object, pid?: number): Promise<void> {
  const r = await runCli(t, ['fault', 'add', '--fabric', dir, JSON.stringify(fault)]);
  assert.equal(r.exit.code, 0, r.stderr);
  if (pid === undefined) return;
  const id = /^added (\S+)/m.exec(r.stdout)?.[1] ?? assert.fail(`no id in ${r.stdout}`);
  const observer = new StatsObserver(dir);
  const has = () => threadOf(observer.snapshot(), pid)?.objects.some((o) => o.kind === 'fault' && !o.ended && o.name.startsWith(`${id} `)) ?? false;
  try {
    await until(has, `process ${pid} to have fault ${id} in force`);
  } finally {
    observer.close();
  }
}

test('softdpu top, view and the fault plan see C processes', { timeout: 240_000 }, async (t) => {
  const tree = await writeSdk(t, { cflags: SANITIZE });
  const peer = await buildPeer(t, tree, 'comch-peer', SANITIZE.split(' '));

  await t.test('a C server and client: their objects and counters, moving; an epitaph at exit, a dead entry after kill -9', async (t) => {
    const dir = tempFabricDir(t);
    const server = start(t, peer, ['server', 'name=seen', 'echo=1'], dir);
    await server.waitFor(/^started DOCA_SUCCESS$/);
    const client = start(t, peer, ['client', 'name=seen'], dir);
    await client.waitFor(/^state STARTING->RUNNING$/);
    await server.waitFor(/^connect 1 1$/);
    client.send('burst 0 5 x'); // x0..x4: 5 messages, 10 bytes; echoes of 15 bytes each way back
    await client.waitFor(/^recv 0 7 echo:x4$/);
    // A peer that claims a function it may not reach is refused, and counted.
    const socket = join(dir, readdirSync(dir).find((n) => n.startsWith('comch-srv.'))!);
    const hello = encodeHello({ pid: self.pid, start: self.start, clientPci: '0000:b1:00.2', armPci: '0000:03:00.0', maxMsgSize: 4080, recvQueueSize: 16, name: new TextEncoder().encode('seen') });
    assert.equal(await knock(socket, hello), DocaErrorCode.DOCA_ERROR_NOT_PERMITTED);

    const snap = await topJson(t, dir);
    assert.deepEqual(snap.threads.map((th) => [th.pid, th.tid, th.alive]).sort(), [[server.pid, server.pid, true], [client.pid, client.pid, true]].sort());
    const s = threadOf(snap, server.pid)!;
    const c = threadOf(snap, client.pid)!;
    assert.equal(s.title, 'comch-peer server name=seen echo=1');
    assert.equal(c.title, 'comch-peer client name=seen');
    assert.deepEqual(shape(s), [
      { kind: 'device', name: '0000:03:00.0 (dpu)', state: 0, parent: null, peer: 0, counters: {} },
      { kind: 'server', name: 'seen for 0000:b1:00.0', state: RUNNING, parent: null, peer: 0, counters: { connections: 1, accepted: 1, refused: 1 } },
      { kind: 'connection', name: 'server connection 1', state: 0, parent: 'server', peer: client.pid, counters: { sent_messages: 5, sent_bytes: 35, recv_messages: 5, recv_bytes: 10 } },
    ]);
    assert.deepEqual(shape(c), [
      { kind: 'device', name: '0000:b1:00.0 (host)', state: 0, parent: null, peer: 0, counters: {} },
      { kind: 'client', name: 'seen from 0000:b1:00.0', state: RUNNING, parent: null, peer: 0, counters: { connections: 1 } },
      { kind: 'connection', name: 'client connection 1', state: 0, parent: 'client', peer: server.pid, counters: { sent_messages: 5, sent_bytes: 10, recv_messages: 5, recv_bytes: 35 } },
    ]);
    assert.deepEqual(s.events.map((e) => [e.kind, e.text]), [['connect', `connection 1 from pid ${client.pid}`]]);
    assert.deepEqual(c.events.map((e) => [e.kind, e.text]), [['connect', `connection 1 to server pid ${server.pid}`]]);

    // The counters move while an observer watches (one mapping, looked at again).
    const observer = new StatsObserver(dir);
    t.after(() => observer.close());
    const sent = () => threadOf(observer.snapshot(), client.pid)?.objects.find((o) => o.kind === 'connection')?.counters.sent_messages;
    assert.equal(sent(), 5);
    client.send('burst 0 3 y');
    await until(() => sent() === 8, () => `the client's sent_messages at 8, not ${sent()}`);

    // A normal exit leaves the epitaph: exited, its objects ended with their final values.
    client.send('exit');
    await client.exited;
    await server.waitFor(/^disconnect 1 1$/);
    const after = await topJson(t, dir);
    const gone = threadOf(after, client.pid)!;
    assert.equal(gone.alive, false);
    assert.ok(gone.exited! > 0, 'an exit time');
    assert.deepEqual(gone.objects.map((o) => [o.kind, o.ended, o.counters.sent_messages ?? null]), [['device', true, null], ['client', true, null], ['connection', true, 8]]);
    const disconnected = threadOf(after, server.pid)!.objects.find((o) => o.kind === 'server')!;
    assert.deepEqual(disconnected.counters, { connections: 0, accepted: 1, refused: 1 });
    assert.match(threadOf(after, server.pid)!.events.at(-1)!.text, new RegExp(`^connection 1 \\(pid ${client.pid}\\) `));

    // kill -9 leaves no epitaph: the entry waits for a sweep, shown dead (a look that never saw it alive
    // has nothing else); an observer that watched it keeps its last copy, marked dead.
    assert.equal(threadOf(observer.snapshot(), server.pid)?.alive, true);
    server.kill('SIGKILL');
    await server.exited;
    const killed = threadOf(await topJson(t, dir), server.pid)!;
    assert.deepEqual([killed.alive, killed.exited, killed.objects.length], [false, undefined, 0]);
    const watched = threadOf(observer.snapshot(), server.pid)!;
    assert.deepEqual([watched.alive, watched.exited, watched.objects.filter((o) => !o.ended).map((o) => o.kind)], [false, undefined, ['device', 'server']]);

    // A C process joining the fabric sweeps the dead entry, and the epitaphs past their retention.
    const names = () => readdirSync(dir).filter((n) => n.startsWith('stats.'));
    const whose = (n: string) => [n.startsWith(`stats.${client.pid}-`) ? 'client' : n.startsWith(`stats.${server.pid}-`) ? 'server' : n, n.endsWith('.exited')];
    assert.deepEqual(names().map(whose).sort(), [['client', true], ['server', false]]);
    const joiner = start(t, peer, ['server', 'name=later'], dir, { SOFTDPU_EPITAPH_MS: '0' });
    await joiner.waitFor(/^started DOCA_SUCCESS$/);
    assert.deepEqual(names().map((n) => [n.startsWith(`stats.${joiner.pid}-`), n.endsWith('.exited')]), [[true, false]]);
  });

  await t.test('a C sync event shows its value, and the importer its own record of it', async (t) => {
    const dir = tempFabricDir(t);
    const sePeer = await ccBuild(t, tree, 'host', join(capiFixtures, 'se-peer', 'se_peer.c'), 'se-peer', SANITIZE.split(' '));
    const exporter = start(t, sePeer, ['export'], dir);
    const blob = (await exporter.waitFor(/^blob ([0-9a-f]+)$/))[1]!;
    await exporter.waitFor(/^ready$/);
    const importer = start(t, sePeer, ['import', `blob=${blob}`], dir);
    await importer.waitFor(/^ready$/);
    exporter.send('set 41');
    await exporter.waitFor(/^set ok$/);
    importer.send('add 1');
    await importer.waitFor(/^add 41$/);
    exporter.send('get');
    await exporter.waitFor(/^get 42$/);

    const snap = await topJson(t, dir);
    const event = (pid: number) => threadOf(snap, pid)!.objects.find((o) => o.kind === 'sync_event')!;
    const mine = event(exporter.pid);
    assert.match(mine.name, new RegExp(`^event ${exporter.pid}:\\d+ remote_pci→cpu$`));
    assert.deepEqual([mine.state, mine.counters], [RUNNING, { value: 42, waiters: 0, updates: 1 }]);
    const theirs = event(importer.pid);
    assert.equal(theirs.name, `${mine.name.split(' ').slice(0, 2).join(' ')} imported (remote_pci)`);
    assert.deepEqual([theirs.peer, theirs.counters], [exporter.pid, { value: 42, waiters: 0, updates: 1 }]);
  });

  await t.test('the fault plan reaches C processes: AGAIN counted, a stall that resumes, a crash, a lost event', async (t) => {
    const dir = tempFabricDir(t);
    await faultAdd(t, dir, { kind: 'again', match: { ctx: 'doca_comch_client', task: 'send' }, count: 2 });
    const server = start(t, peer, ['server', 'name=faulty', 'echo=1'], dir);
    await server.waitFor(/^started DOCA_SUCCESS$/);
    const client = start(t, peer, ['client', 'name=faulty'], dir);
    await client.waitFor(/^state STARTING->RUNNING$/);
    for (const text of ['a', 'b', 'c', 'd']) client.send(`send 0 ${text}`);
    await client.waitFor(/^recv 0 6 echo:d$/);
    assert.deepEqual(client.lines.filter((l) => l.startsWith('error')), ['error submit DOCA_ERROR_AGAIN', 'error submit DOCA_ERROR_AGAIN']);
    assert.deepEqual(client.lines.filter((l) => /^(sent|recv)/.test(l)).sort(), ['recv 0 6 echo:c', 'recv 0 6 echo:d', 'sent 1', 'sent 2']);
    await logged(client, /\[faults\] fault f1 \(again\): AGAIN at a send submit of doca_comch_client \(2 injections so far\)/);
    await until(() => injections(dir, 'f1') === 2, () => `2 injections of f1 counted, not ${injections(dir, 'f1')}`);
    const list = await runCli(t, ['fault', 'list', '--fabric', dir]);
    assert.match(list.stdout, /f1 +again .* injections 2/);
    const faultRecord = threadOf(await topJson(t, dir), client.pid)!.objects.find((o) => o.kind === 'fault')!;
    assert.deepEqual([faultRecord.name, faultRecord.counters], ['f1 again doca_comch_client send (fabric)', { injected: 2 }]);

    // A stall of the server's engine: the client's message gets no echo until the plan is cleared.
    await faultAdd(t, dir, { kind: 'stall', match: { ctx: 'doca_comch_server' } }, server.pid);
    await logged(server, /fault f2 \(stall\): the progress engine of doca_comch_server stops progressing/);
    client.send('send 0 held');
    await client.waitFor(/^sent 3$/);
    const cleared = await runCli(t, ['fault', 'clear', '--fabric', dir, 'f2']);
    assert.equal(cleared.exit.code, 0, cleared.stderr);
    await client.waitFor(/^recv 0 9 echo:held$/);
    assert.equal(server.lines.filter((l) => l.startsWith('recv')).length, 3, 'the held message arrived once the stall was cleared');

    // A connection event lost, then a crash at the server's next send: the client sees its peer go.
    await faultAdd(t, dir, { kind: 'lose-event', match: { ctx: 'doca_comch_server', event: 'connection_established' }, count: 1 }, server.pid);
    const second = start(t, peer, ['client', 'name=faulty'], dir);
    await second.waitFor(/^state STARTING->RUNNING$/);
    await logged(server, /fault f3 \(lose-event\): lost a connection_established event of doca_comch_server/);
    const third = start(t, peer, ['client', 'name=faulty'], dir);
    await third.waitFor(/^state STARTING->RUNNING$/);
    await server.waitFor(/^connect 2 1$/); // the third client's: the second's event never came
    assert.equal(server.lines.filter((l) => l.startsWith('connect')).length, 2);

    await until(() => injections(dir, 'f3') === 1, 'the lost event counted');
    await faultAdd(t, dir, { kind: 'crash', match: { ctx: 'doca_comch_server', task: 'send' } }, server.pid);
    client.send('send 0 last');
    const exit = await server.exited;
    assert.equal(exit.signal, 'SIGKILL');
    await logged(server, /fault f4 \(crash\): process \d+ kills itself with SIGKILL at a send submit of doca_comch_server/);
    await client.waitFor(/^state RUNNING->STOPPING$/);
    await until(() => injections(dir, 'f4') === 1, () => `the crash counted, not ${injections(dir, 'f4')}`);
  });

  await t.test('one plan, one seed: a C and a TypeScript client draw the same AGAINs', async (t) => {
    const dir = tempFabricDir(t);
    await faultAdd(t, dir, { kind: 'again', match: { ctx: 'doca_comch_client', task: 'send' }, probability: 0.5, count: 100, seed: 7 });
    const server = start(t, peer, ['server', 'name=dice'], dir);
    await server.waitFor(/^started DOCA_SUCCESS$/);
    const c = start(t, peer, ['client', 'name=dice'], dir);
    await c.waitFor(/^state STARTING->RUNNING$/);
    await server.waitFor(/^connect 1 1$/);
    const ts = spawnChild(t, 'comch-client', [JSON.stringify({ name: 'dice' })], { env: { SOFTDPU_FABRIC: dir } });
    await ts.waitFor(/^c0 state STARTING->RUNNING/);
    await server.waitFor(/^connect 2 1$/);
    const texts = Array.from({ length: 24 }, (_, i) => `m${i}`);
    for (const text of texts) {
      c.send(`send 0 ${text}`);
      ts.send(`send 0 ${text}`);
    }
    const tsOutcome = (text: string) => ts.lines.find((l) => l === `c0 sent ${text}` || (l.startsWith('c0 error') && l.endsWith(`[${text}]`)));
    await until(() => texts.every(tsOutcome), 'an outcome of every TypeScript send');
    const fromC = () => server.lines.filter((l) => l.startsWith('recv 1 ')).map((l) => l.split(' ')[3]!);
    const againC = () => c.lines.filter((l) => l === 'error submit DOCA_ERROR_AGAIN').length;
    await until(() => fromC().length + againC() === texts.length, () => `every C send received or refused (${fromC().length} + ${againC()})`);
    const passedTs = texts.filter((text) => tsOutcome(text)!.startsWith('c0 sent'));
    assert.ok(passedTs.length > 0 && passedTs.length < texts.length, `a mixed draw (${passedTs.length} of ${texts.length} passed)`);
    assert.deepEqual(fromC(), passedTs, 'the same sends passed in both languages');
    await until(() => injections(dir, 'f1') === 2 * (texts.length - passedTs.length), () => `every injection counted, not ${injections(dir, 'f1')}`);
    // One top shows both clients alike: the same records, names and counts.
    const snap = await topJson(t, dir);
    const view = (pid: number) =>
      shape(threadOf(snap, pid)!)
        .map(({ peer, ...rest }) => ({ ...rest, peer: peer === server.pid ? 'server' : peer }))
        .sort((a, b) => (a.kind + a.name < b.kind + b.name ? -1 : 1)); // the order of the slots is each side's
    assert.deepEqual(view(c.pid), view(ts.pid));
    assert.deepEqual(view(c.pid).find((o) => o.kind === 'fault'), { kind: 'fault', name: 'f1 again doca_comch_client send (fabric)', state: 0, parent: null, peer: 0, counters: { injected: texts.length - passedTs.length } });
  });

  await t.test('$SOFTDPU_FAULTS: a bad plan fails doca_dev_open naming the field; a good one is in force, ids env-N', async (t) => {
    const dir = tempFabricDir(t);
    const bad = start(t, peer, ['client', 'name=env'], dir, { SOFTDPU_FAULTS: '{"faults":[{"kind":"again","probability":1.5}]}' });
    await bad.waitFor(/^error setup DOCA_ERROR_INVALID_VALUE$/);
    await logged(bad, /\$SOFTDPU_FAULTS: faults\[0\]\.probability is 1\.5, not a number in \[0, 1\]/);
    const server = start(t, peer, ['server', 'name=env', 'echo=1'], dir);
    await server.waitFor(/^started DOCA_SUCCESS$/);
    const client = start(t, peer, ['client', 'name=env'], dir, { SOFTDPU_FAULTS: '[{"kind":"again","match":{"task":"send"},"count":1}]' });
    await client.waitFor(/^state STARTING->RUNNING$/);
    client.send('send 0 one');
    client.send('send 0 two');
    await client.waitFor(/^recv 0 8 echo:two$/);
    assert.deepEqual(client.lines.filter((l) => l.startsWith('error')), ['error submit DOCA_ERROR_AGAIN']);
    await logged(client, /fault env-1 \(again\): AGAIN at a send submit of doca_comch_client/);
  });

  await t.test('a driver failure at a C start; a crash on the cadence, for one pid', async (t) => {
    const dir = tempFabricDir(t);
    await faultAdd(t, dir, { kind: 'driver', match: { ctx: 'doca_comch_client' }, count: 1 });
    const refused = start(t, peer, ['client', 'name=driven'], dir);
    await refused.waitFor(/^started DOCA_ERROR_DRIVER$/);
    await logged(refused, /fault f1 \(driver\): DRIVER at the start of doca_comch_client/);
    assert.deepEqual(refused.lines.filter((l) => l.startsWith('state')), [], 'the client stayed IDLE');
    const server = start(t, peer, ['server', 'name=doomed'], dir);
    await server.waitFor(/^started DOCA_SUCCESS$/);
    const bystander = start(t, peer, ['server', 'name=spared'], dir);
    await bystander.waitFor(/^started DOCA_SUCCESS$/);
    await faultAdd(t, dir, { kind: 'crash', match: { pid: server.pid } });
    assert.equal((await server.exited).signal, 'SIGKILL');
    await logged(server, /fault f2 \(crash\): process \d+ kills itself with SIGKILL on the liveness cadence/);
    await until(() => injections(dir, 'f2') === 1, 'the crash counted');
    assert.equal(threadOf(await topJson(t, dir), bystander.pid)?.alive, true, 'the other process lives on');
  });
});
