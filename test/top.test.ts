/**
 * `softdpu top`: what it lists against a fabric whose objects and traffic the test knows; an observer
 * under load (the command and one in this process) changes no message and no order; a process killed
 * while observed is marked dead, then disappears after the sweep.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import type { FabricSnapshot } from '../src/fabric/stats-reader.js';
import { StatsObserver } from '../src/fabric/stats-reader.js';
import { Child, cliPath, runCli, spawnChild } from './helpers/child.js';
import { tempFabricDir } from './helpers/fabric.js';
import { fixturePair as pair, shape } from './helpers/observe.js';

test('softdpu top --once --json lists exactly the fabric\'s objects, with their counts; --once prints them as lines', { timeout: 90_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const { server, client } = await pair(t, dir, 'top');
  client.send('burst 0 5 x'); // x0..x4: 5 messages, 10 bytes
  server.send('burst * 3 yy'); // yy0..yy2: 3 messages, 9 bytes
  await server.waitFor(/^recv 1 2 x4$/);
  await client.waitFor(/^c0 recv 3 yy2$/);

  const { exit, stdout, stderr } = await runCli(t, ['top', '--once', '--json', '--fabric', dir]);
  assert.equal(exit.code, 0, stderr);
  const snap = JSON.parse(stdout) as FabricSnapshot;
  assert.deepEqual(snap.threads.map((th) => [th.pid, th.tid, th.alive]).sort(), [[server.pid, server.pid, true], [client.pid, client.pid, true]].sort());
  const of = (pid: number) => snap.threads.find((th) => th.pid === pid)!;
  const RUNNING = 2;
  assert.deepEqual(shape(of(server.pid)), [
    { kind: 'device', name: '0000:03:00.0 (dpu)', state: 0, parent: null, peer: 0, counters: {} },
    { kind: 'server', name: 'top for 0000:b1:00.0', state: RUNNING, parent: null, peer: 0, counters: { connections: 1, accepted: 1, refused: 0 } },
    { kind: 'connection', name: 'server connection 1', state: 0, parent: 'server', peer: client.pid, counters: { sent_messages: 3, sent_bytes: 9, recv_messages: 5, recv_bytes: 10 } },
  ]);
  assert.deepEqual(shape(of(client.pid)), [
    { kind: 'device', name: '0000:b1:00.0 (host)', state: 0, parent: null, peer: 0, counters: {} },
    { kind: 'client', name: 'top from 0000:b1:00.0', state: RUNNING, parent: null, peer: 0, counters: { connections: 1 } },
    { kind: 'connection', name: 'client connection 1', state: 0, parent: 'client', peer: server.pid, counters: { sent_messages: 5, sent_bytes: 10, recv_messages: 3, recv_bytes: 9 } },
  ]);
  assert.deepEqual(of(server.pid).events.map((e) => [e.kind, e.text]), [['connect', `connection 1 from pid ${client.pid}`]]);
  assert.deepEqual(of(client.pid).events.map((e) => [e.kind, e.text]), [['connect', `connection 1 to server pid ${server.pid}`]]);

  const text = await runCli(t, ['top', '--once', '--fabric', dir]);
  assert.equal(text.exit.code, 0, text.stderr);
  const lines = text.stdout.split('\n');
  assert.match(lines[0]!, /^softdpu top {2}\S+ {2}\d\d:\d\d:\d\d {2}2 processes, 6 objects, 1 connection, 0 msg\/s, 0 B\/s over \d+ ms$/);
  assert.match(text.stdout, new RegExp(`^${server.pid} +process +comch-server\\.js .* alive +0000:03:00\\.0$`, 'm'));
  // Rates over the two looks of --once: nothing moved between them.
  assert.match(text.stdout, new RegExp(`^ +server +top for 0000:b1:00\\.0 +RUNNING +0 +connections 1  accepted 1  refused 0$`, 'm'));
  assert.match(text.stdout, new RegExp(`^ +connection +server connection 1 ↔ ${client.pid} comch-client\\.js +0 +0 B +sent 3 \\(9 B\\)  recv 5 \\(10 B\\)$`, 'm'));
  assert.match(text.stdout, new RegExp(`^ +connection +client connection 1 ↔ ${server.pid} comch-server\\.js +0 +0 B +sent 5 \\(10 B\\)  recv 3 \\(9 B\\)$`, 'm'));
  assert.match(text.stdout, new RegExp(`^\\d\\d:\\d\\d:\\d\\d\\.\\d{3}  ${server.pid} +connect +connection 1 from pid ${client.pid}$`, 'm'));
});

test('an observer on a fabric under load changes no message and no order', { timeout: 90_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const { server, client } = await pair(t, dir, 'load');
  // Two observers as fast as they go: `softdpu top --json` every 50 ms, and one in this process.
  const top = spawnChild(t, 'top', ['top', '--json', '--interval', '50', '--fabric', dir], { script: cliPath });
  const observer = new StatsObserver(dir);
  t.after(() => observer.close());
  let looking = true;
  const seen: number[] = [];
  const look = () => {
    const conn = observer.snapshot().threads.find((th) => th.pid === server.pid)?.objects.find((o) => o.kind === 'connection');
    if (conn) seen.push(conn.counters.recv_messages!);
    if (looking) setImmediate(look);
  };
  look();
  const N = 3000;
  for (let i = 0; i < N; i += 500) client.send(`burst 0 500 m${i / 500}-`);
  await server.waitFor(new RegExp(`^recv 1 \\d+ m${N / 500 - 1}-499$`), 20_000);
  await new Promise((resolve) => setTimeout(resolve, 100));
  looking = false;
  const received = server.lines.filter((l) => l.startsWith('recv ')).map((l) => l.split(' ')[3]);
  const sent = Array.from({ length: N }, (_, i) => `m${Math.floor(i / 500)}-${i % 500}`);
  assert.deepEqual(received, sent, 'every message once, in order');
  assert.ok(seen.length > 10, `the observer looked ${seen.length} times during the run`);
  assert.ok(seen.every((n, i) => i === 0 || n >= seen[i - 1]!), 'the counter it read never went back');
  assert.equal(seen.at(-1), N);
  await top.waitFor(new RegExp(`"recv_messages":${N},`), 30_000);
});

test('a process killed while observed is marked dead, then gone after softdpu fabric clean', { timeout: 90_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const { server, client } = await pair(t, dir, 'kill');
  const top = spawnChild(t, 'top', ['top', '--json', '--interval', '100', '--fabric', dir], { script: cliPath });
  const frames = () => top.lines.map((l) => JSON.parse(l) as FabricSnapshot);
  const clientIn = (f: FabricSnapshot) => f.threads.find((th) => th.pid === client.pid);
  await top.waitFor(new RegExp(`"pid":${client.pid},`));
  client.kill('SIGKILL');
  await client.exited;
  await server.waitFor(/^disconnect 1 true/);
  const dead = await top.waitFor(new RegExp(`"pid":${client.pid},"tid":${client.pid},"start":\\d+,"title":"(?:[^"\\\\]|\\\\.)*","alive":false`), 30_000);
  const frame = JSON.parse(dead.input!) as FabricSnapshot;
  assert.deepEqual(clientIn(frame)!.objects.map((o) => o.kind), ['device', 'client', 'connection'], 'its last copy, kept while dead');
  const clean = await runCli(t, ['fabric', 'clean', '--fabric', dir]);
  assert.equal(clean.exit.code, 0, clean.stderr);
  assert.match(clean.stdout, new RegExp(`removed stats\\.${client.pid}-`));
  const seenAt = top.lines.length;
  const deadline = Date.now() + 5_000;
  while (frames().slice(seenAt).every((f) => clientIn(f)) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  const after = frames().slice(seenAt).find((f) => !clientIn(f));
  assert.ok(after, 'a frame after the sweep without the killed process');
  assert.deepEqual(after.threads.map((th) => [th.pid, th.alive]), [[server.pid, true]]);
});

test('softdpu top --once looks twice: a pair under traffic has rates', { timeout: 90_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const { client } = await pair(t, dir, 'rates');
  const pump = setInterval(() => client.send('burst 0 20 p'), 5);
  const rates: string[] = [];
  try {
    // Traffic flows throughout, but a loaded machine may stall a pair for a moment: a few frames at most.
    for (let frame = 0; frame < 5; frame++) {
      const { exit, stdout, stderr } = await runCli(t, ['top', '--once', '--fabric', dir]);
      assert.equal(exit.code, 0, stderr);
      const m = new RegExp(`^ +connection +client connection 1 ↔ \\d+ comch-server\\.js +(\\S+) +\\S+ \\S*B +sent `, 'm').exec(stdout);
      assert.ok(m, stdout);
      assert.match(stdout.split('\n')[0]!, /, [\d.]+[kMG]? msg\/s, \S+ \S*B\/s over \d+ ms$/);
      rates.push(m[1]!);
      if (m[1] !== '0') break;
    }
  } finally {
    clearInterval(pump);
  }
  assert.ok(rates.at(-1) !== '0', `RATE/S of the client's connection, frame after frame: ${rates.join(', ')}`);
});

test('a terminal that reports 0 columns gets frames of a default width, not blank lines', { timeout: 90_000 }, async (t) => {
  if (!existsSync('/usr/bin/script')) return t.skip('script(1) (util-linux) makes the pty this test needs: apt-get install util-linux');
  const dir = tempFabricDir(t);
  await pair(t, dir, 'cols');
  const command = `stty cols 0 rows 0 && exec '${process.execPath}' '${cliPath}' top --interval 100 --fabric '${dir}'`;
  const top = new Child(spawn('/usr/bin/script', ['-qfec', command, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'] }));
  t.after(async () => {
    top.kill();
    await top.exited;
  });
  await top.waitFor(/softdpu top {2}\S+ {2}[\d:]{8} {2}2 processes, 6 objects, 1 connection, /);
  await top.waitFor(/PID +KIND +NAME +STATE +RATE\/S +BYTES\/S +COUNTERS/);
  await top.waitFor(/ connection +server connection 1 ↔ \d+ comch-client\.js /);
  top.send('q');
  top.proc.stdin!.end(); // script(1) itself ends once its input does
  assert.deepEqual(await top.exited, { code: 0, signal: null }, top.stderr.join(''));
});

test('top and view refuse bad options (exit 2)', { timeout: 10_000 }, async (t) => {
  for (const args of [['top', '--interval', '5'], ['top', 'extra'], ['view', '--port', '70000'], ['view', '--port', 'x']]) {
    const { exit, stderr } = await runCli(t, args);
    assert.equal(exit.code, 2, args.join(' '));
    assert.match(stderr, /^softdpu (top|view): [^\n]*\n$/);
  }
});
