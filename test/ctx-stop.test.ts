/** Stopping with tasks in flight: flushed through the error callback, STOPPING until every task is freed. */
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { ctxStateName } from '../src/core/ctx.js';
import { DocaError } from '../src/core/error.js';
import { logBackendCreateWithBuf } from '../src/core/log.js';
import { ProgressEngine } from '../src/core/pe.js';
import { drain, EchoCtx, type EchoTask } from './helpers/echo-ctx.js';

test('stop flushes in-flight tasks with DOCA_ERROR_SHUTDOWN and reaches IDLE once every task is freed', () => {
  const pe = ProgressEngine.create();
  const ctx = new EchoCtx();
  ctx.mode = 'hold';
  const flushed: EchoTask[] = [];
  const states: string[] = [];
  ctx.setStateChangedCb((_u, _c, prev, next) => states.push(`${ctxStateName(prev)}->${ctxStateName(next)}`));
  ctx.taskEchoSetConf(() => assert.fail('nothing succeeds'), (task) => flushed.push(task), 8);
  pe.connectCtx(ctx);
  ctx.start();
  const tasks = [1, 2, 3].map((v) => ctx.taskEchoAllocInit(v));
  tasks.forEach((t) => t.submit());
  const idle = ctx.taskEchoAllocInit(4); // allocated, never submitted
  assert.equal(ctx.stop(), 'DOCA_ERROR_IN_PROGRESS');
  assert.equal(ctx.state, 'STOPPING');
  assert.throws(() => idle.submit(), (err: unknown) => DocaError.is(err, 'BAD_STATE'));
  assert.throws(() => ctx.taskEchoAllocInit(5), (err: unknown) => DocaError.is(err, 'BAD_STATE'));
  assert.equal(drain(pe), 3, 'one progress() per flushed task');
  assert.deepEqual(flushed.map((t) => t.getStatus()), Array(3).fill('DOCA_ERROR_SHUTDOWN'));
  assert.deepEqual(new Set(flushed.map((t) => t.value)), new Set([1, 2, 3]));
  assert.equal(ctx.getNumInflightTasks(), 0);
  for (const t of flushed) t.free();
  assert.equal(ctx.state, 'STOPPING', 'one allocated task is still out');
  assert.equal(pe.progress(), false);
  idle.free();
  assert.equal(pe.progress(), true);
  assert.equal(ctx.state, 'IDLE');
  assert.deepEqual(states, ['IDLE->RUNNING', 'RUNNING->STOPPING', 'STOPPING->IDLE']);
});

test('progress() called from inside a callback is refused with NOT_PERMITTED', () => {
  const pe = ProgressEngine.create();
  const ctx = new EchoCtx();
  let nested: unknown;
  ctx.taskEchoSetConf(
    (task) => {
      try {
        pe.progress();
      } catch (err) {
        nested = err;
      }
      task.free();
    },
    () => {},
    1,
  );
  pe.connectCtx(ctx);
  ctx.start();
  ctx.taskEchoAllocInit(1).submit();
  assert.equal(pe.progress(), true);
  assert.ok(DocaError.is(nested, 'NOT_PERMITTED'), String(nested));
  assert.match((nested as Error).message, /inside a callback/);
  assert.equal(pe.progress(), false, 'the engine works normally afterwards');
});

test('an exception from a callback leaves progress() usable', () => {
  const pe = ProgressEngine.create();
  const ctx = new EchoCtx();
  ctx.taskEchoSetConf(() => {
    throw new Error('user bug');
  }, () => {}, 2);
  pe.connectCtx(ctx);
  ctx.start();
  ctx.taskEchoAllocInit(1).submit();
  assert.throws(() => pe.progress(), /user bug/);
  assert.equal(pe.progress(), false);
  assert.equal(ctx.getNumInflightTasks(), 0);
});

/** The SDK log's lines while test `t` runs. */
function sdkLines(t: TestContext): string[] {
  const lines: string[] = [];
  const log = logBackendCreateWithBuf((line) => lines.push(line), { sdk: true });
  t.after(() => log.destroy());
  return lines;
}

test('a stop that cannot finish names the tasks never freed: a WARNING at the stop, and in the timeout', { timeout: 10_000 }, async (t) => {
  const lines = sdkLines(t);
  const pe = ProgressEngine.create();
  const ctx = new EchoCtx();
  ctx.taskEchoSetConf((task) => task.free(), (task) => task.free(), 8);
  pe.connectCtx(ctx);
  ctx.start();
  const kept = [ctx.taskEchoAllocInit(1), ctx.taskEchoAllocInit(2)]; // allocated, never freed
  await assert.rejects(ctx.stopAndWait({ timeoutMs: 100 }), (err: unknown) => DocaError.is(err, 'TIME_OUT') && /2 echo task\(s\) allocated and never freed/.test((err as Error).message));
  assert.equal(lines.filter((l) => /WARN.*stays STOPPING: 2 echo task\(s\) allocated and never freed/.test(l)).length, 1, 'one warning per stop');
  kept.forEach((task) => task.free());
  drain(pe);
  assert.equal(ctx.state, 'IDLE');
});

test('a task a promise got back while the context stops is freed by its continuation: no warning of a task never freed', { timeout: 10_000 }, async (t) => {
  const lines = sdkLines(t);
  const pe = ProgressEngine.create();
  const ctx = new EchoCtx();
  ctx.mode = 'hold'; // in flight until the stop flushes it
  ctx.taskEchoSetConf(() => assert.fail('no callback: the promise gets it'), () => assert.fail('no callback: the promise gets it'), 4);
  pe.connectCtx(ctx);
  ctx.start();
  const task = ctx.taskEchoAllocInit(1);
  // As a promise adapter does (connection.send): await the task, free it in `finally`.
  const sent = (async () => {
    try {
      await task.submitAsync();
    } finally {
      task.free();
    }
  })().then(
    () => undefined,
    (err: unknown) => err,
  );
  await ctx.stopAndWait({ timeoutMs: 5000 }); // the flush settles the promise inside a burst of progress
  assert.ok(DocaError.is(await sent, 'SHUTDOWN'), 'the flush rejected the promise');
  assert.equal(ctx.state, 'IDLE');
  assert.deepEqual(lines.filter((l) => /stays STOPPING/.test(l)), [], 'no warning: the task was freed');
});
