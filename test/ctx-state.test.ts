/** The context state machine: every allowed and refused transition, and its callback. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CtxState, ctxStateName } from '../src/core/ctx.js';
import { DocaError } from '../src/core/error.js';
import { ProgressEngine } from '../src/core/pe.js';
import { drain, EchoCtx } from './helpers/echo-ctx.js';
import { code } from './helpers/errors.js';

function setup(configure: (ctx: EchoCtx) => void = () => {}) {
  const pe = ProgressEngine.create();
  const ctx = new EchoCtx();
  configure(ctx);
  const seen: string[] = [];
  ctx.setUserData('ud');
  ctx.setStateChangedCb((ud, c, prev, next) => {
    assert.equal(ud, 'ud');
    assert.equal(c, ctx);
    assert.equal(c.getState(), next, 'the callback runs with the context already in the next state');
    seen.push(`${ctxStateName(prev)}->${ctxStateName(next)}`);
  });
  pe.connectCtx(ctx);
  return { pe, ctx, seen };
}

test('start needs a progress engine (NOT_CONNECTED)', () => {
  const ctx = new EchoCtx();
  assert.throws(() => ctx.start(), code('DOCA_ERROR_NOT_CONNECTED'));
  assert.equal(ctx.state, 'IDLE');
});

test('a synchronous start goes IDLE -> RUNNING in start() and returns DOCA_SUCCESS', () => {
  const { ctx, seen } = setup();
  assert.equal(ctx.start(), 'DOCA_SUCCESS');
  assert.equal(ctx.getState(), CtxState.RUNNING);
  assert.deepEqual(seen, ['IDLE->RUNNING']);
});

test('an asynchronous start returns IN_PROGRESS and reaches RUNNING inside progress()', () => {
  const { pe, ctx, seen } = setup((c) => (c.asyncStart = true));
  assert.equal(ctx.start(), 'DOCA_ERROR_IN_PROGRESS');
  assert.equal(ctx.state, 'STARTING');
  assert.equal(pe.progress(), false, 'nothing happens until the start completes');
  ctx.finishStart();
  assert.equal(ctx.state, 'STARTING', 'the transition waits for progress()');
  assert.equal(pe.progress(), true);
  assert.equal(ctx.state, 'RUNNING');
  assert.deepEqual(seen, ['IDLE->STARTING', 'STARTING->RUNNING']);
});

test('start is refused unless IDLE; stop is refused when IDLE', () => {
  const { ctx } = setup((c) => (c.asyncStart = true));
  assert.throws(() => ctx.stop(), code('DOCA_ERROR_BAD_STATE', /already IDLE/));
  ctx.start();
  assert.throws(() => ctx.start(), code('DOCA_ERROR_BAD_STATE', /is STARTING, not IDLE/));
});

test('stop with nothing in flight goes straight to IDLE and returns DOCA_SUCCESS, from RUNNING or STARTING', () => {
  const running = setup();
  running.ctx.start();
  assert.equal(running.ctx.stop(), 'DOCA_SUCCESS');
  assert.deepEqual(running.seen, ['IDLE->RUNNING', 'RUNNING->IDLE']);
  const starting = setup((c) => (c.asyncStart = true));
  starting.ctx.start();
  assert.equal(starting.ctx.stop(), 'DOCA_SUCCESS');
  assert.deepEqual(starting.seen, ['IDLE->STARTING', 'STARTING->IDLE']);
});

test('an asynchronous teardown stays STOPPING, a second stop says IN_PROGRESS, and IDLE comes in progress()', () => {
  const { pe, ctx, seen } = setup((c) => (c.asyncStop = true));
  ctx.start();
  assert.equal(ctx.stop(), 'DOCA_ERROR_IN_PROGRESS');
  assert.equal(ctx.state, 'STOPPING');
  assert.equal(ctx.stop(), 'DOCA_ERROR_IN_PROGRESS');
  assert.throws(() => ctx.start(), code('DOCA_ERROR_BAD_STATE'));
  assert.equal(drain(pe), 0);
  ctx.stopDone = true;
  assert.equal(pe.progress(), true);
  assert.equal(ctx.state, 'IDLE');
  assert.deepEqual(seen, ['IDLE->RUNNING', 'RUNNING->STOPPING', 'STOPPING->IDLE']);
});

test('a stopped context can be started again', () => {
  const { ctx, seen } = setup();
  ctx.start();
  ctx.stop();
  assert.equal(ctx.start(), 'DOCA_SUCCESS');
  assert.deepEqual(seen, ['IDLE->RUNNING', 'RUNNING->IDLE', 'IDLE->RUNNING']);
});

test('a fatal error moves a RUNNING context to STOPPING inside progress() and fails its tasks with that error', () => {
  const { pe, ctx, seen } = setup((c) => (c.mode = 'hold'));
  const errors: string[] = [];
  ctx.taskEchoSetConf(
    () => assert.fail('no success expected'),
    (task) => {
      errors.push(task.error!.message);
      task.free();
    },
    4,
  );
  ctx.start();
  ctx.taskEchoAllocInit(1).submit();
  ctx.crash(new DocaError('CONNECTION_RESET', 'peer', 'the peer died'));
  assert.equal(ctx.state, 'RUNNING');
  drain(pe);
  assert.equal(ctx.state, 'IDLE');
  assert.deepEqual(seen, ['IDLE->RUNNING', 'RUNNING->STOPPING', 'STOPPING->IDLE']);
  assert.deepEqual(errors, ['peer: the peer died (DOCA_ERROR_CONNECTION_RESET: Connection reset by peer)']);
});

test('connecting: only once; destroy: only while IDLE, and the engine only when empty', () => {
  const pe = ProgressEngine.create();
  const other = ProgressEngine.create();
  const ctx = new EchoCtx();
  pe.connectCtx(ctx);
  assert.throws(() => other.connectCtx(ctx), code('DOCA_ERROR_NOT_PERMITTED'));
  const running = new EchoCtx();
  other.connectCtx(running);
  running.start();
  assert.throws(() => running.destroy(), code('DOCA_ERROR_IN_USE'));
  assert.throws(() => other.destroy(), code('DOCA_ERROR_IN_USE', /1 context\(s\)/));
  running.stop();
  running.destroy();
  other.destroy();
  assert.throws(() => running.start(), code('DOCA_ERROR_BAD_STATE'));
  assert.throws(() => other.requestNotification(), code('DOCA_ERROR_BAD_STATE'));
  assert.throws(() => other.connectCtx(new EchoCtx()), code('DOCA_ERROR_BAD_STATE'));
});

test('waitForState resolves when the state is reached inside progress(), and rejects on timeout', async () => {
  const { pe, ctx } = setup((c) => (c.asyncStart = true));
  ctx.start();
  const running = ctx.waitForState('RUNNING');
  ctx.finishStart();
  pe.progress();
  await running;
  await assert.rejects(ctx.waitForState('STOPPING', { timeoutMs: 10 }), code('DOCA_ERROR_TIME_OUT'));
});
