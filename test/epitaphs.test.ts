/**
 * What observers see of threads that ended (fabric/epitaphs.ts, fabric/stats.ts): a sample pair that
 * lived and exited before any observer looked is listed, exited, with its final counters and events,
 * titled by its sample; its burst is in the rates of the first look that sees it, 0 after; a process
 * that ends by process.exit while observed counts from its last copy; a worker thread that ends leaves
 * its own; the epitaphs go after the retention (time and count), the sweep of dead owners leaves them,
 * `softdpu fabric clean` removes them.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { type ObjectRow, RateTracker } from '../src/cli/observe.js';
import { sweepFabricDir } from '../src/fabric/dir.js';
import { epitaphsIn, sweepEpitaphs } from '../src/fabric/epitaphs.js';
import { epitaphOwner } from '../src/fabric/names.js';
import { StatsObserver, type ThreadSnapshot } from '../src/fabric/stats-reader.js';
import { runCli, spawnChild, topJson } from './helpers/child.js';
import { tempFabricDir } from './helpers/fabric.js';
import { fixturePair, samplePair, shape } from './helpers/observe.js';

const IDLE = 0;
const epitaphsOf = (dir: string, pids: number[]) => readdirSync(dir).filter((n) => pids.includes(epitaphOwner(n)?.pid ?? -1)).sort();

test('a sample pair that exited before any observer looked: top lists both, exited, with their final counters and events, named by their samples', { timeout: 30_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const { server, client } = await samplePair(t, dir);
  assert.equal(epitaphsOf(dir, [server.pid, client.pid]).length, 2, 'one epitaph each, in the fabric directory');

  const snap = await topJson(t, dir);
  const of = (pid: number) => snap.threads.find((th) => th.pid === pid)!;
  assert.deepEqual(snap.threads.map((th) => [th.pid, th.tid, th.alive, typeof th.exited]).sort(), [[server.pid, server.pid, false, 'number'], [client.pid, client.pid, false, 'number']].sort());
  // The command and its arguments, as far as the title's 63 bytes go (the helper adds --fabric <dir>).
  assert.match(of(server.pid).title, /^softdpu sample comch_ctrl_path_server -p 03:00\.0 -r b1:00\.0 /);
  assert.match(of(client.pid).title, /^softdpu sample comch_ctrl_path_client -p b1:00\.0 --fabric /);
  assert.deepEqual(shape(of(server.pid)), [
    { kind: 'device', name: '0000:03:00.0 (dpu)', state: 0, parent: null, peer: 0, counters: {} },
    { kind: 'server', name: 'comch_ctrl_path_sample_server for 0000:b1:00.0', state: IDLE, parent: null, peer: 0, counters: { connections: 0, accepted: 1, refused: 0 } },
    { kind: 'connection', name: 'server connection 1', state: 0, parent: 'server', peer: client.pid, counters: { sent_messages: 1, sent_bytes: 23, recv_messages: 1, recv_bytes: 23 } },
  ]);
  assert.deepEqual(shape(of(client.pid)), [
    { kind: 'device', name: '0000:b1:00.0 (host)', state: 0, parent: null, peer: 0, counters: {} },
    { kind: 'client', name: 'comch_ctrl_path_sample_server from 0000:b1:00.0', state: IDLE, parent: null, peer: 0, counters: { connections: 0 } },
    { kind: 'connection', name: 'client connection 1', state: 0, parent: 'client', peer: server.pid, counters: { sent_messages: 1, sent_bytes: 23, recv_messages: 1, recv_bytes: 23 } },
  ]);
  assert.ok(snap.threads.every((th) => th.objects.every((o) => o.ended)), 'the samples destroyed everything before they exited');
  assert.deepEqual(of(server.pid).events.map((e) => e.kind), ['connect', 'disconnect']);
  assert.deepEqual(of(client.pid).events.map((e) => e.kind), ['connect', 'disconnect']);

  const text = await runCli(t, ['top', '--once', '--fabric', dir]);
  assert.equal(text.exit.code, 0, text.stderr);
  assert.match(text.stdout.split('\n')[0]!, /^softdpu top {2}\S+ {2}[\d:]{8} {2}2 processes \(2 exited\), 6 objects, 1 connection, /);
  assert.match(text.stdout, new RegExp(`^${server.pid} +process +softdpu sample comch_ctrl_path_server -p 03:00\\.0 .* EXITED +0000:03:00\\.0  exited [\\d:.]{12}$`, 'm'));
  assert.match(text.stdout, new RegExp(`^ +connection +server connection 1 ↔ ${client.pid} comch_ctrl_path_client +ended +0 +0 B +sent 1 \\(23 B\\)  recv 1 \\(23 B\\)$`, 'm'));
  assert.match(text.stdout, new RegExp(`^[\\d:.]{12}  ${client.pid} +disconnect +connection 1 `, 'm'));
});

test('rates: a pair that started and exited between two looks shows its burst in the first look that sees it, then 0', { timeout: 30_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const observer = new StatsObserver(dir);
  t.after(() => observer.close());
  const rates = new RateTracker();
  assert.deepEqual(rates.update(observer.snapshot()).rows, [], 'the look before: nothing yet');
  const { server, client } = await samplePair(t, dir);

  const first = rates.update(observer.snapshot());
  const conn = (pid: number, view = first) => view.rows.find((r): r is ObjectRow => r.type === 'object' && r.kind === 'connection' && r.pid === pid)!;
  assert.deepEqual([first.totals.processes, first.totals.exited, first.totals.dead], [2, 2, 0]);
  // Both started after the look before: every counter counts from 0 over the time between the looks.
  assert.deepEqual(conn(client.pid).rates, { sent_messages: 1 / first.span, sent_bytes: 23 / first.span, recv_messages: 1 / first.span, recv_bytes: 23 / first.span });
  assert.deepEqual(conn(server.pid).rates, { sent_messages: 1 / first.span, sent_bytes: 23 / first.span, recv_messages: 1 / first.span, recv_bytes: 23 / first.span });
  const link = first.links.find((l) => l.key === `${Math.min(server.pid, client.pid)}-${Math.max(server.pid, client.pid)}`)!;
  assert.deepEqual([link.alive, link.connections, link.messages, link.msgRate, link.byteRate], [false, 1, 2, 2 / first.span, 46 / first.span]);
  assert.equal(first.totals.msgRate, 2 / first.span);

  const second = rates.update(observer.snapshot());
  assert.deepEqual(conn(client.pid, second).rates, { sent_messages: 0, sent_bytes: 0, recv_messages: 0, recv_bytes: 0 }, 'its counters are final');
  assert.equal(second.totals.msgRate, 0);
});

test('a process that ends by process.exit while observed: its epitaph replaces its live copy, and its last messages count from that copy', { timeout: 30_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const { server, client } = await fixturePair(t, dir, 'exit');
  client.send('burst 0 3 a');
  await server.waitFor(/^recv 1 2 a2$/);
  const observer = new StatsObserver(dir);
  t.after(() => observer.close());
  const rates = new RateTracker();
  const live = rates.update(observer.snapshot());
  const recv = (view: typeof live) => view.rows.find((r): r is ObjectRow => r.type === 'object' && r.kind === 'connection' && r.pid === server.pid)!;
  assert.deepEqual([recv(live).alive, recv(live).counters.recv_messages], [true, 3]);

  client.send('burst 0 5 b');
  await server.waitFor(/^recv 1 2 b4$/);
  server.send('exit');
  assert.deepEqual(await server.exited, { code: 0, signal: null });
  const after = rates.update(observer.snapshot());
  const row = recv(after);
  assert.deepEqual([row.alive, typeof row.exited, row.ended, row.counters.recv_messages], [false, 'number', false, 8], 'open at exit, with its final counters');
  assert.equal(row.rates.recv_messages, 5 / after.span, 'the 5 messages since the live copy');
  assert.equal(after.rows.find((r) => r.type === 'process' && r.pid === server.pid)?.alive, false);
});

test('rates of an exited thread the last look read: a connection made and ended since counts from 0, one that ended before does not', { timeout: 30_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const env = { SOFTDPU_FABRIC: dir };
  const server = spawnChild(t, 'comch-server', [JSON.stringify({ name: 'late' })], { env });
  await server.waitFor(/^started DOCA_SUCCESS/);
  /** A client that connects, sends `n` messages and disconnects: connection `id` on the server. */
  const visit = async (id: number, n: number) => {
    const client = spawnChild(t, 'comch-client', [JSON.stringify({ name: 'late' })], { env });
    await server.waitFor(new RegExp(`^connect ${id} true`));
    client.send(`burst 0 ${n} v${id}-`);
    await server.waitFor(new RegExp(`^recv ${id} \\d+ v${id}-${n - 1}$`));
    client.send('stop 0');
    await server.waitFor(new RegExp(`^disconnect ${id} `));
  };
  await visit(1, 3);
  const observer = new StatsObserver(dir);
  t.after(() => observer.close());
  const rates = new RateTracker();
  const look = rates.update(observer.snapshot());
  const serverObjects = look.rows.filter((r) => r.type === 'object' && r.pid === server.pid).map((r) => (r as ObjectRow).kind);
  assert.deepEqual(serverObjects, ['device', 'server'], 'a live thread: its ended connection is not shown');
  await visit(2, 5);
  server.send('exit');
  assert.deepEqual(await server.exited, { code: 0, signal: null });
  const after = rates.update(observer.snapshot());
  const conns = after.rows.filter((r): r is ObjectRow => r.type === 'object' && r.kind === 'connection' && r.pid === server.pid).map((r) => [r.name, r.ended, r.counters.recv_messages, r.rates.recv_messages]);
  assert.deepEqual(conns, [
    ['server connection 1', true, 3, 0],
    ['server connection 2', true, 5, 5 / after.span],
  ]);
});

test('rates: a connection one look sees already ended in its live, new thread shows its burst from the epitaph that follows', () => {
  // What the view saw under load: the first look that read the pair found the client's connection
  // ended (hidden: its process was exiting), the next one its epitaph with the same counters. Its
  // message must show in a rate once; before, the hidden copy's counters were taken as the last shown.
  const connection = (ended: boolean) => ({ slot: 1, kind: 'connection', parent: -1, state: 0, id: 1, peer: 20, name: 'client connection 1', counters: { sent_messages: 1, sent_bytes: 23, recv_messages: 0, recv_bytes: 0 }, ended });
  const thread = (alive: boolean, exited?: number) => ({ pid: 10, tid: 10, start: 5, title: 'client', alive, since: 1100, ...(exited ? { exited } : {}), objects: [connection(true)], events: [] });
  const rates = new RateTracker();
  rates.update({ time: 1000, dir: '/f', threads: [] });
  const live = rates.update({ time: 1250, dir: '/f', threads: [thread(true)] });
  assert.equal(live.links.length, 0, 'a live thread\'s ended connection is not shown');
  const epitaph = rates.update({ time: 1500, dir: '/f', threads: [thread(false, 1300)] });
  assert.deepEqual(epitaph.links.map((l) => [l.key, l.messages, l.msgRate]), [['10-20', 1, 1 / 0.25]]);
  const later = rates.update({ time: 1750, dir: '/f', threads: [thread(false, 1300)] });
  assert.deepEqual(later.links.map((l) => [l.key, l.msgRate]), [['10-20', 0]], 'and once');
});

test('a worker thread that ends leaves its epitaph: shown exited while its process lives', { timeout: 30_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const holder = spawnChild(t, 'worker-epitaph', [], { env: { SOFTDPU_FABRIC: dir } });
  const tid = Number((await holder.waitFor(/^worker (\d+) ended 0$/))[1]);
  assert.notEqual(tid, holder.pid);
  const snap = await topJson(t, dir);
  const th = snap.threads.find((x) => x.tid === tid) as ThreadSnapshot;
  assert.deepEqual([th.pid, th.alive, typeof th.exited], [holder.pid, false, 'number']);
  assert.deepEqual(th.objects.map((o) => [o.kind, o.name, o.ended]), [['device', '0000:b1:00.0 (host)', true]]);
});

test('epitaphs go after the retention: the observer stops showing them, joining removes them, the sweep of dead owners does not, fabric clean does', { timeout: 30_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const { server, client } = await samplePair(t, dir);
  const mine = () => epitaphsOf(dir, [server.pid, client.pid]);
  const files = mine();
  assert.equal(files.length, 2);
  assert.deepEqual(sweepFabricDir(dir).removed, [], 'their owners are dead, but the sweep of dead owners leaves epitaphs');
  assert.deepEqual((await topJson(t, dir)).threads.length, 2);

  const hidden = await runCli(t, ['top', '--once', '--json', '--fabric', dir], { SOFTDPU_EPITAPH_MS: '0' });
  assert.deepEqual((JSON.parse(hidden.stdout) as { threads: unknown[] }).threads, [], 'past the retention: no longer shown');
  assert.deepEqual(mine(), files, 'observers only read');

  const join1 = spawnChild(t, 'joiner', [], { env: { SOFTDPU_FABRIC: dir } });
  assert.equal((await join1.exited).code, 0);
  assert.deepEqual(mine(), files, 'joining keeps them within the retention');
  const join2 = spawnChild(t, 'joiner', [], { env: { SOFTDPU_FABRIC: dir, SOFTDPU_EPITAPH_MS: '0' } });
  assert.equal((await join2.exited).code, 0);
  assert.deepEqual(mine(), [], 'joining past the retention removes them');

  const again = await samplePair(t, dir);
  const clean = await runCli(t, ['fabric', 'clean', '--fabric', dir]);
  assert.equal(clean.exit.code, 0, clean.stderr);
  for (const c of [again.server, again.client]) assert.match(clean.stdout, new RegExp(`^removed stats\\.${c.pid}-\\d+\\.${c.pid}\\.exited$`, 'm'));
  assert.deepEqual(epitaphsOf(dir, [again.server.pid, again.client.pid]), [], 'fabric clean removes them at once');
});

test('at most the newest 64 epitaphs are kept, none older than the retention', { timeout: 10_000 }, (t) => {
  const dir = tempFabricDir(t);
  const now = Date.now();
  // 70 epitaphs of pids that are not running, 0.5 s, 1.5 s, ... old (names only: the rule reads names and mtimes).
  const names = Array.from({ length: 70 }, (_, i) => {
    const name = `stats.${4_000_000 + i}-1.${4_000_000 + i}.exited`;
    writeFileSync(join(dir, name), '');
    utimesSync(join(dir, name), (now - i * 1000 - 500) / 1000, (now - i * 1000 - 500) / 1000);
    return name;
  });
  writeFileSync(join(dir, 'stats.1-1.1.sock.exited'), ''); // not an epitaph name: left alone
  const { kept, expired } = epitaphsIn(dir, readdirSync(dir), { ms: 60_000, count: 64 }, now);
  assert.deepEqual(kept.map((e) => e.name), names.slice(0, 60), 'the newest, within 60 s');
  assert.deepEqual(expired.map((e) => e.name), names.slice(60));
  assert.deepEqual(sweepEpitaphs(dir, { ms: 3_600_000, count: 64 }).sort(), names.slice(64).sort(), 'beyond the newest 64');
  assert.deepEqual(readdirSync(dir).filter((n) => epitaphOwner(n)).length, 64);
  assert.ok(existsSync(join(dir, 'stats.1-1.1.sock.exited')));
});
