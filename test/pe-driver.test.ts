/** The progress engine's notification model and its driver. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { DocaError } from '../src/core/error.js';
import { PeEventMode, ProgressEngine } from '../src/core/pe.js';
import { spawnChild } from './helpers/child.js';
import { EchoCtx } from './helpers/echo-ctx.js';

function holding() {
  const pe = ProgressEngine.create();
  const ctx = new EchoCtx();
  ctx.mode = 'hold';
  const done: number[] = [];
  ctx.taskEchoSetConf((t) => (done.push(t.value), t.free()), () => {}, 4);
  pe.connectCtx(ctx);
  ctx.start();
  return { pe, ctx, done };
}

test('a notification fires when work arrives, at once if work is already queued, and times out otherwise', async () => {
  const { pe, ctx } = holding();
  await assert.rejects(pe.waitNotification(), (err: unknown) => DocaError.is(err, 'BAD_STATE'));
  pe.requestNotification();
  assert.equal(await pe.waitNotification({ timeoutMs: 20 }), 'timed-out');
  ctx.taskEchoAllocInit(1).submit();
  setTimeout(() => ctx.release(), 20);
  assert.equal(await pe.waitNotification({ timeoutMs: 5000 }), 'notified');
  pe.clearNotification();
  pe.requestNotification();
  assert.equal(await pe.waitNotification({ timeoutMs: 0 }), 'notified', 'the completion is still queued');
  pe.clearNotification();
  assert.equal(pe.progress(), true);
  const ac = new AbortController();
  pe.requestNotification();
  const aborted = pe.waitNotification({ signal: ac.signal });
  ac.abort(new Error('enough'));
  await assert.rejects(aborted, /enough/);
  pe.clearNotification();
});

test('run() in notify mode sleeps until work arrives and returns once every context is IDLE', { timeout: 60_000 }, async () => {
  const { pe, ctx, done } = holding();
  ctx.setStateChangedCb(() => {});
  ctx.taskEchoAllocInit(5).submit();
  setTimeout(() => ctx.release(), 30);
  const running = pe.run({ until: () => done.length === 1 });
  await running;
  assert.deepEqual(done, [5]);
  ctx.stop();
  await pe.run();
  assert.equal(pe.idle(), true);
});

for (const mode of ['notify', 'busy'] as const) {
  test(`run() in ${mode} mode sees an until() that waits on a submitAsync() continuation`, { timeout: 60_000 }, async () => {
    const { pe, ctx } = holding();
    let done = false;
    ctx
      .taskEchoAllocInit(7)
      .submitAsync()
      .then((t) => ((done = true), t.free()));
    setTimeout(() => ctx.release(), 20);
    // Before the fix the notify driver checked until() before the continuation ran, then slept forever.
    await pe.run({ mode, until: () => done });
    assert.equal(done, true);
    ctx.stop();
    await pe.run();
  });
}

test('run() stops on an AbortSignal and refuses to be driven twice', { timeout: 60_000 }, async () => {
  const { pe, ctx } = holding();
  const ac = new AbortController();
  const first = pe.run({ signal: ac.signal });
  await assert.rejects(pe.run(), (err: unknown) => DocaError.is(err, 'BAD_STATE'));
  await sleep(20); // lets the driver go to sleep first; the abort ends it awake or asleep all the same
  ac.abort();
  await first;
  assert.equal(ctx.state, 'RUNNING');
  ctx.stop();
});

test('run() in busy mode progresses until the predicate holds', { timeout: 60_000 }, async () => {
  const { pe, ctx, done } = holding();
  ctx.mode = 'immediate';
  for (let i = 0; i < 4; i++) ctx.taskEchoAllocInit(i).submit();
  await pe.run({ mode: 'busy', until: () => done.length === 4 });
  assert.deepEqual(done.sort(), [0, 1, 2, 3]);
});

test('setEventMode takes DOCA modes only and not from a callback', () => {
  const pe = ProgressEngine.create();
  pe.setEventMode(PeEventMode.PROGRESS_ALL);
  assert.equal(pe.getEventMode(), PeEventMode.PROGRESS_ALL);
  assert.throws(() => pe.setEventMode(7 as never), (err: unknown) => DocaError.is(err, 'INVALID_VALUE'));
});

for (const mode of ['notify', 'busy']) {
  test(`the driver lets the process exit when nothing runs any more (${mode} mode)`, { timeout: 60_000 }, async (t) => {
    const child = spawnChild(t, 'driver-exit', [mode]);
    assert.deepEqual(await child.exited, { code: 0, signal: null });
    assert.deepEqual(child.lines, ['completed 42', 'run returned, IDLE']);
  });
}
