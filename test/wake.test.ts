/**
 * The doorbell protocol (fabric/doorbell.ts, docs/wakeup.md): a wake-up is never lost wherever in the
 * arming sequence the ring lands, many sleepers all wake, and the notification handle is a real fd that
 * is readable exactly when the engine has work.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ProgressEngine } from '../src/core/pe.js';
import { Bell } from '../src/fabric/doorbell.js';
import { Segment } from '../src/fabric/segment.js';
import { native } from '../src/native/load.js';
import { WaitResult } from '../src/native/native.js';
import { spawnChild } from './helpers/child.js';
import { linesOf, startClient, startServer, waitCount } from './helpers/comch.js';
import { tempFabricDir } from './helpers/fabric.js';
import { ringer, SourceCtx } from './helpers/source-ctx.js';

const WORD = 64;

function sleeper(t: TestContext) {
  const segment = Segment.create('test', 64);
  const pe = ProgressEngine.create();
  const ctx = new SourceCtx(segment, WORD);
  pe.connectCtx(ctx);
  ctx.start();
  const ring = ringer(segment, WORD, ctx.ref!);
  t.after(() => {
    ring.close();
    void ctx.stopAndWait().then(() => {
      ctx.destroy();
      pe.destroy();
      segment.close();
    });
  });
  return { pe, ctx, ring };
}

/** Runs `hook` once at the named point of the next arming of `pe`, by wrapping the bell's methods. */
function atArmingPoint(point: 'inside-arm' | 'after-arm', hook: () => void): () => void {
  const proto = Bell.prototype as unknown as Record<string, (...args: unknown[]) => unknown>;
  const name = point === 'inside-arm' ? 'anyReady' : 'arm';
  const original = proto[name]!;
  let fired = false;
  proto[name] = function (this: unknown, ...args: unknown[]) {
    if (point === 'inside-arm' && !fired) {
      fired = true;
      hook(); // the state already says ARMED; the check for set bits has not run yet
    }
    const result = original.apply(this, args);
    if (point === 'after-arm' && !fired) {
      fired = true;
      hook(); // the check ran and found nothing: the engine is about to sleep
    }
    return result;
  };
  return () => (proto[name] = original);
}

test('a ring at any point of the arming sequence wakes the driver', { timeout: 60_000 }, async (t) => {
  const { pe, ctx, ring } = sleeper(t);
  let expected = 0;
  const deliver = async (where: string, arrange: () => () => void) => {
    expected++;
    const restore = arrange();
    try {
      await pe.run({ until: () => ctx.values.length >= expected });
    } finally {
      restore();
    }
    assert.equal(ctx.values.at(-1), expected, where);
  };
  await pe.run({ until: () => ctx.getState() === 2 }); // RUNNING; the engine has slept once
  await deliver('before the engine arms (it is awake)', () => (ring.bump(), () => {}));
  await deliver('between ARMED and the check', () => atArmingPoint('inside-arm', ring.bump));
  await deliver('between the check and the sleep', () => atArmingPoint('after-arm', ring.bump));
  // Once the check found nothing, the driver awaits its wake-up: the next turn of the loop finds it asleep.
  await deliver('while it sleeps', () => atArmingPoint('after-arm', () => setImmediate(ring.bump)));
});

test('thousands of sleep/wake cycles in both directions with jitter: every message, in order, nothing left', { timeout: 120_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const env = { env: { SOFTDPU_FABRIC: dir } };
  const echo = spawnChild(t, 'wake-peer', ['echo', '4000', '30'], env);
  await echo.waitFor(/^ready$/);
  const ping = spawnChild(t, 'wake-peer', ['ping', '4000', '30'], env);
  assert.equal((await ping.waitFor(/^done .*$/, 100_000))[0], 'done 4000 bad 0');
  assert.equal((await ping.waitFor(/^pending .*$/))[0], 'pending 0');
  await echo.waitFor(/^echo-done$/);
  assert.deepEqual(await ping.exited, { code: 0, signal: null });
  assert.deepEqual(await echo.exited, { code: 0, signal: null });
});

for (const engines of ['shared', 'own'] as const) {
  test(`512 sleeping connections (${engines === 'shared' ? 'one engine' : 'an engine each'}) each get a message and all wake`, { timeout: 120_000 }, async (t) => {
    const dir = tempFabricDir(t);
    const server = startServer(t, dir, { numTasks: 1024 });
    await server.waitFor(/^started/);
    const clients = startClient(t, dir, { clients: 512, engines, numTasks: 4, startBatch: 64 });
    await waitCount(clients, /^c\d+ state STARTING->RUNNING$/, 512, 90_000);
    await waitCount(server, /^connect /, 512, 30_000);
    // Stays, and only widens what is tested: a client still awake when its message comes gets it all
    // the same, so a slow machine cannot make this fail, only let fewer clients be asleep by then.
    await sleep(200);
    server.send('send * wake');
    await waitCount(clients, /^c\d+ recv 4 wake$/, 512, 30_000);
    const woken = new Set(linesOf(clients, /recv 4 wake$/).map((l) => l.split(' ')[0]));
    assert.equal(woken.size, 512);
    await sleep(200); // likewise: the server asleep again
    clients.send('send * back');
    await waitCount(server, /^recv \d+ 4 back$/, 512, 30_000);
    assert.equal(new Set(linesOf(server, /^recv \d+ 4 back$/).map((l) => l.split(' ')[1])).size, 512);
  });
}

test('the notification handle is a real fd: readable when work arrives after requestNotification, not before', { timeout: 60_000 }, async (t) => {
  const { pe, ctx, ring } = sleeper(t);
  const fd = pe.getNotificationHandle();
  assert.equal(pe.getNotificationHandle(), fd, 'fixed for the engine\'s life');
  const readable = () => native.fdPoll(fd, 0) === WaitResult.Ok;
  while (pe.progress());
  pe.requestNotification();
  assert.equal(readable(), false, 'nothing happened yet');
  assert.equal(native.fdPoll(fd, 50), WaitResult.TimedOut);
  ring.bump();
  assert.equal(native.fdPoll(fd, 5000), WaitResult.Ok, 'the ring made it readable');
  pe.clearNotification();
  assert.equal(readable(), false, 'clearNotification consumed it');
  while (pe.progress());
  assert.deepEqual(ctx.values, [1]);
  // Work already there when arming: readable at once. Rings while awake write nothing.
  ring.bump();
  ring.bump();
  assert.equal(readable(), false, 'an awake engine is not rung');
  pe.requestNotification();
  assert.equal(readable(), true);
  pe.clearNotification();
  while (pe.progress());
  assert.deepEqual(ctx.values, [1, 3]);
  // Local work (a context's own completion) shows on the handle too.
  pe.requestNotification();
  assert.equal(readable(), false);
  ctx.stop();
  assert.equal(readable(), true);
  pe.clearNotification();
});
