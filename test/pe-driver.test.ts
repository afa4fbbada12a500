/** The progress engine's notification model and its driver. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DocaError } from '../src/core/error.js';
import { PeEventMode, ProgressEngine } from '../src/core/pe.js';
import { spawnChild } from './helpers/child.js';
import { EchoCtx, type EchoTask } from './helpers/echo-ctx.js';
import { until } from './helpers/wait.js';

/** An engine with an echo context holding its tasks; `complete` replaces the default completion (record, free). */
function holding(complete?: (t: EchoTask, ctx: EchoCtx) => void) {
  const pe = ProgressEngine.create();
  const ctx = new EchoCtx();
  ctx.mode = 'hold';
  const done: number[] = [];
  ctx.taskEchoSetConf(complete ? (t) => complete(t, ctx) : (t) => (done.push(t.value), t.free()), () => {}, 4);
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

test('run() with until() sees a continuation several awaits deep; without until(), it sleeps at once after work and still ends when idle', { timeout: 60_000 }, async () => {
  const { pe, ctx } = holding();
  let done = false;
  const deep = async () => {
    const t = await ctx.taskEchoAllocInit(1).submitAsync();
    t.free();
    for (let i = 0; i < 5; i++) await Promise.resolve();
    done = true;
  };
  void deep();
  setTimeout(() => ctx.release(), 20);
  await pe.run({ until: () => done });
  assert.equal(done, true, 'the turn of the event loop after work let the whole chain run');
  ctx.setStateChangedCb(() => {});
  ctx.stop();
  await pe.run(); // IDLE: a stop the engine sees, not a continuation, is what ends it
  assert.equal(pe.idle(), true);
});

test('work submitted from user code while run() sleeps is progressed after that code, never inside its call', { timeout: 60_000 }, async () => {
  let inside = false;
  const seenInside: boolean[] = [];
  const done: number[] = [];
  let delivered = () => {};
  const completed = new Promise<void>((resolve) => (delivered = resolve));
  const { pe, ctx } = holding((t) => (seenInside.push(inside), done.push(t.value), t.free(), delivered()));
  ctx.mode = 'immediate';
  const ac = new AbortController();
  // Its first burst finds nothing, so run() has armed the engine and sleeps on the doorbell when it returns.
  const running = pe.run({ signal: ac.signal });
  inside = true;
  ctx.taskEchoAllocInit(9).submit();
  inside = false;
  await completed; // the test's timeout bounds it
  assert.deepEqual(done, [9]);
  assert.deepEqual(seenInside, [false], 'the completion callback ran after submit() returned');
  ac.abort();
  await running;
  ctx.stop();
});

test('a steady stream of work does not starve the event loop: timers fire while run() always finds more', { timeout: 20_000 }, async () => {
  let completions = 0;
  let more = true;
  // Each completion submits the next task: there is always work the moment the driver arms.
  const { pe, ctx } = holding((t, c) => (completions++, t.free(), more && c.taskEchoAllocInit(completions).submit()));
  ctx.mode = 'immediate';
  ctx.taskEchoAllocInit(0).submit();
  const ac = new AbortController();
  let timerFired = 0;
  const timer = setInterval(() => {
    if (++timerFired === 3) ac.abort();
  }, 1);
  try {
    await pe.run({ signal: ac.signal }); // would never return if the timers never ran
  } finally {
    clearInterval(timer);
  }
  assert.equal(timerFired, 3);
  assert.ok(completions > 0);
  more = false;
  for (let i = 0; pe.getNumInflightTasks() > 0 && i < 1000; i++) pe.progress();
  assert.equal(pe.getNumInflightTasks(), 0);
  ctx.stop();
});

test('a callback that throws rejects run(), and the engine can be driven again', { timeout: 60_000 }, async () => {
  let throwIt = true;
  let ok = false;
  const { pe, ctx } = holding((t) => {
    t.free();
    if (throwIt) throw new Error('from the callback');
    ok = true;
  });
  ctx.mode = 'immediate';
  ctx.taskEchoAllocInit(1).submit();
  await assert.rejects(pe.run({ until: () => false }), /from the callback/);
  throwIt = false;
  ctx.taskEchoAllocInit(2).submit();
  await pe.run({ until: () => ok });
  assert.equal(ok, true);
  ctx.stop();
});

/** Whether `pe`'s run() sleeps on its doorbell now (the driver is internal: this test looks inside). */
const driverAsleep = (pe: ProgressEngine): boolean => (pe as unknown as { driver?: { asleep: boolean } }).driver?.asleep === true;

test('run() stops on an AbortSignal while it sleeps on the doorbell, and refuses to be driven twice', { timeout: 60_000 }, async () => {
  const { pe, ctx } = holding();
  const ac = new AbortController();
  const first = pe.run({ signal: ac.signal });
  try {
    await assert.rejects(pe.run(), (err: unknown) => DocaError.is(err, 'BAD_STATE'));
    await until(() => driverAsleep(pe), 'the driver to sleep on the doorbell');
  } finally {
    ac.abort(); // a failed assertion must not leave the driver asleep, holding the test's event loop
  }
  await first;
  assert.equal(driverAsleep(pe), false);
  assert.equal(ctx.state, 'RUNNING');
  ctx.stop();
});

/**
 * An echo context whose held tasks complete `lag` polls after they were submitted, as a peer's answers
 * come a few idle polls apart: a wake source (polled on every progress() of a busy engine) counts.
 */
class LaggingEcho extends EchoCtx {
  private polls = 0;
  private readonly source = {
    _bit: -1,
    _ready: false,
    _pollSource: (): boolean => {
      if (this.held.length > 0 && ++this.polls >= this.lag) {
        this.polls = 0;
        this.release();
      }
      return false;
    },
  };

  constructor(private readonly lag: number) {
    super();
    this.mode = 'hold';
  }

  protected override _doStart(): boolean {
    this.addSource(this.source, 'lagging_echo_start');
    return super._doStart();
  }
}

/** An engine with a LaggingEcho of 20 polls, started; `complete` is its tasks' completion. */
function lagging(complete: (t: EchoTask) => void) {
  const pe = ProgressEngine.create();
  const ctx = new LaggingEcho(20);
  ctx.taskEchoSetConf(complete, () => {}, 1);
  pe.connectCtx(ctx);
  ctx.start();
  return { pe, ctx };
}

/** A busy run() that stops at `until`, or after 30 s (the assertions after it then say how far it got). */
const runBusy = (pe: ProgressEngine, until: () => boolean) => pe.run({ mode: 'busy', until, signal: AbortSignal.timeout(30_000) });

/** Counts the event loop's turns (check phases) until stopped. */
function turnCounter(): { turns: () => number; stop: () => void } {
  let turns = 0;
  let on = true;
  const tick = () => {
    turns++;
    if (on) setImmediate(tick);
  };
  setImmediate(tick);
  return { turns: () => turns, stop: () => (on = false) };
}

test('busy run(): a callback stream whose answers come polls apart turns the event loop once per budget, not every few dozen answers', { timeout: 60_000 }, async () => {
  const N = 20_000;
  let done = 0;
  const { pe, ctx } = lagging((t) => (++done < N ? t.submit() : t.free()));
  ctx.taskEchoAllocInit(1).submit();
  const counter = turnCounter();
  await runBusy(pe, () => done >= N);
  counter.stop();
  assert.equal(done, N);
  // 20 idle polls per answer: counting idle polls from a burst's start, 256 of them came every 13
  // answers (some 1500 turns); a turn per budget of 4096 answers is 5, and the run's own few.
  assert.ok(counter.turns() <= 20, `${counter.turns()} turns of the event loop for ${N} answers`);
  ctx.stop();
});

test('busy run(): a promise chain (submitAsync) goes on at the first idle poll after each completion, not after an idle stretch', { timeout: 60_000 }, async () => {
  const { pe, ctx } = lagging(() => {});
  let calls = 0;
  const progress = pe.progress.bind(pe);
  pe.progress = () => (calls++, progress());
  const STEPS = 500;
  let steps = 0;
  const chain = (async () => {
    const task = ctx.taskEchoAllocInit(1);
    for (; steps < STEPS; steps++) await task.submitAsync();
    task.free();
  })();
  await runBusy(pe, () => steps >= STEPS);
  assert.equal(steps, STEPS);
  await chain;
  // Each step: 20 polls to its answer and one to see it done, then the turn. Waiting for 256 idle polls
  // in a row instead would be some 280 a step.
  assert.ok(calls / STEPS < 100, `${(calls / STEPS).toFixed(1)} progress() calls per step`);
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

for (const mode of ['notify', 'busy'] as const) {
  test(`run() in ${mode} mode ends after the burst in which until() held, though it no longer holds`, { timeout: 60_000 }, async () => {
    // until() was asked only between bursts: a condition that holds only for a while ("a connection is
    // open") was run past by a burst of up to `budget` units, and the run never ended (a benchmark echo
    // whose whole session fit in one burst hung). Four completions wait; until() holds after the second
    // only. The burst still finishes the work already there, as code that stops a context next relies on.
    const { pe, ctx, done } = holding();
    for (let i = 0; i < 4; i++) ctx.taskEchoAllocInit(i).submit();
    ctx.release();
    const watchdog = AbortSignal.timeout(10_000);
    await pe.run({ mode, signal: watchdog, until: () => done.length === 2 });
    assert.equal(watchdog.aborted, false, 'the run missed until() and went on until the watchdog');
    assert.deepEqual(done, [0, 1, 2, 3]);
    ctx.stop();
    await pe.run({ signal: watchdog });
  });
}
