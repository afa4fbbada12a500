/** Edges of the core machinery: refused stops, double submits, waits on promises, bad timeouts, armed destroys. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { DocaError } from '../src/core/error.js';
import { ProgressEngine } from '../src/core/pe.js';
import { PullIterator } from '../src/core/pull.js';
import { EchoCtx } from './helpers/echo-ctx.js';
import { code } from './helpers/errors.js';


class StubbornCtx extends EchoCtx {
  override stop(): never {
    throw new DocaError('IN_USE', 'echo_stop', 'children still exist');
  }
}

function running<T extends EchoCtx>(ctx: T): { pe: ProgressEngine; ctx: T } {
  const pe = ProgressEngine.create();
  ctx.taskEchoSetConf((t) => t.free(), (t) => t.free(), 4);
  pe.connectCtx(ctx);
  ctx.start();
  return { pe, ctx };
}

test('stopAndWait() whose stop is refused rejects with that error and leaves no timer to fire later', { timeout: 10_000 }, async () => {
  const { ctx } = running(new StubbornCtx());
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  try {
    await assert.rejects(ctx.stopAndWait({ timeoutMs: 30 }), code('IN_USE'));
    // Stays: past the 30 ms a leftover waiter's timer would have had. Timers fire in order of their
    // deadlines, so a late machine delays both, never this one first.
    await sleep(100);
    assert.deepEqual(unhandled, []);
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
});

test('a second submitAsync() of a task in flight is refused and the first promise still settles', { timeout: 10_000 }, async () => {
  const { pe, ctx } = running(new EchoCtx());
  ctx.mode = 'hold';
  const task = ctx.taskEchoAllocInit(7);
  const first = task.submitAsync();
  await assert.rejects(task.submitAsync(), code('BAD_STATE'));
  ctx.release();
  await pe.run({ until: () => ctx.getNumInflightTasks() === 0 });
  assert.equal(await first, task);
  task.free();
});

test('run() sees an until() that waits on a waitForState() continuation', { timeout: 10_000 }, async () => {
  const pe = ProgressEngine.create();
  const ctx = new EchoCtx();
  ctx.asyncStart = true;
  pe.connectCtx(ctx);
  ctx.start();
  let running = false;
  void ctx.waitForState('RUNNING').then(() => (running = true));
  setTimeout(() => ctx.finishStart(), 20);
  await pe.run({ until: () => running });
  assert.equal(running, true);
});

test('wait timeouts: Infinity means none, a negative or NaN timeout is INVALID_VALUE naming it', { timeout: 10_000 }, async () => {
  const { ctx } = running(new EchoCtx());
  await assert.rejects(ctx.waitForState('IDLE', { timeoutMs: -1 }), code('INVALID_VALUE', /timeoutMs -1/));
  await assert.rejects(ctx.waitForState('IDLE', { timeoutMs: Number.NaN }), code('INVALID_VALUE'));
  const ac = new AbortController();
  const forever = ctx.waitForState('IDLE', { timeoutMs: Infinity, signal: ac.signal });
  // Stays: an Infinity that became a timer (setTimeout takes it as 1 ms) would fire within this.
  await sleep(30);
  ac.abort(new Error('done waiting'));
  await assert.rejects(forever, /done waiting/);
});

test('message iterators honour timeoutMs: a next() that waits that long ends the iteration with TIME_OUT', { timeout: 10_000 }, async () => {
  let closed = 0;
  const it = new PullIterator<number>(() => closed++, () => {}, { timeoutMs: 30 }, 'test messages');
  const first = it.next();
  assert.equal(it.deliver(1), true);
  assert.deepEqual(await first, { value: 1, done: false });
  await assert.rejects(it.next(), code('TIME_OUT', /nothing arrived within 30 ms/));
  assert.equal(closed, 1);
  assert.deepEqual(await it.next(), { value: undefined, done: true });
  assert.throws(() => new PullIterator(() => {}, () => {}, { timeoutMs: -5 }), code('INVALID_VALUE', /timeoutMs -5/));
});

test('waitForState refuses a state that does not exist, and a destroyed context, at once', { timeout: 10_000 }, async () => {
  const ctx = new EchoCtx();
  await assert.rejects(ctx.waitForState('Running' as never), code('INVALID_VALUE', /"Running" is not a state/));
  ctx.destroy();
  await assert.rejects(ctx.waitForState('RUNNING'), code('BAD_STATE', /destroyed/));
});

test('messages about a wrong argument say what was passed', () => {
  const ctx = new EchoCtx();
  assert.throws(() => ctx.taskEchoSetConf('cb' as never, () => {}, 1), code('INVALID_VALUE', /got "cb" and a function/));
});
