/**
 * Sides of the sync event benchmark, each in its own process of one fabric (SOFTDPU_FABRIC):
 *   a MODE N FILE                 creates two events, writes their blobs to FILE, then N round trips:
 *                                 set e1 = i, wait for e2 == i; prints {"p50_us","p99_us","cpu_us_per_msg"}
 *   b MODE N FILE                 imports them, sets e2 = N + 1 (hello: a times nothing before it), then
 *                                 waits for e1 == i, sets e2 = i; prints {"cpu_us_per_msg"}
 *                                 MODE: busy, yield (the synchronous waits), async (tasks, a promise per
 *                                 wait, each wait driving its engine with a pe.run() of its own, as DOCA's
 *                                 samples progress until their task completed), promises (the README's
 *                                 promise API: each engine driven by one pe.run() in the background, each
 *                                 wait an awaited submitAsync(), each set a submit its callback frees),
 *                                 tasks (a notify_set and a wait_eq task per trip, progressed
 *                                 synchronously: no promise), spin (busy, 'a' working ~20 us before each
 *                                 set, so that b's wait spins thousands of polls per trip)
 *   idle-a FILE / idle-b FILE     as a and b, each with an async wait pending under pe.run() (a: e2 == 1,
 *                                 b: e1 == 1) for 1 s; print {"cpu_pct"} of that second; then each ends
 *                                 the other's wait: b sets e2 = 1; a, its wait done, sets e1 = 1; b, its
 *                                 wait done, sets e2 = 2, and ends; a ends once it saw e2 == 2 (b's wait
 *                                 completed before a, the exporter, goes: none is left pending or failing)
 *   hold FILE TARGET              creates e1 as 'a' does, and exits once it reaches TARGET (polled)
 *   add N FILE START              imports e1 and does N update_add(1) from wall-clock time START (ms),
 *                                 prints {"start","end"} (epoch ms)
 * With SOFTDPU_BENCH_ALLOC=1 (lib/alloc.ts), a and b also measure their own allocation per round trip (a
 * set and a wait): {"alloc": {...}} in what they print.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { openDeviceByPci } from '../src/core/dev.js';
import { U64_MAX } from '../src/sync-event/condition.js';
import { SyncEvent } from '../src/sync-event/sync-event.js';
import { ALLOC_ENV, allocMeterFromEnv, cpuMeter, idleCpu, printCpu, rttSummary } from './lib.js';
import { ARM, asyncSide, creatorEvent, HOST, SpinGuard, watchdog } from './peer-lib.js';

const args = process.argv.slice(2);
const role = args[0]!;
// 'add' and 'hold' have no mode: add N FILE START, hold FILE TARGET; idle-a/b FILE.
const [mode, count, file, startAt] =
  role === 'add' ? ['busy', ...args.slice(1)] : role === 'hold' ? ['busy', args[2], args[1]] : role.startsWith('idle') ? ['async', '1', args[1]] : args.slice(1);
const n = Number(count);
watchdog(`sync-event-peer ${role}`);

type Side = ReturnType<typeof asyncSide>;

async function waitEq(event: SyncEvent, side: Side | undefined, value: bigint): Promise<void> {
  if (mode === 'promises') {
    const task = side!.ctx.taskWaitEqAllocInit(value, U64_MAX);
    try {
      await task.submitAsync();
    } finally {
      task.free();
    }
  } else if (mode === 'busy') event.waitEq(value);
  else if (mode === 'yield') event.waitEqYield(value);
  else {
    const task = side!.ctx.taskWaitEqAllocInit(value, U64_MAX);
    // The outcome is taken at once (a failure, e.g. the exporter gone, is never an unhandled rejection)
    // and thrown here once the driver returned; the task is freed either way.
    let outcome: { err?: unknown } | undefined;
    task.submitAsync().then(
      () => (outcome = {}),
      (err: unknown) => (outcome = { err }),
    );
    await side!.pe.run({ until: () => outcome !== undefined });
    task.free();
    if (outcome!.err) throw outcome!.err;
  }
}

/**
 * The round trips' values, made before the loop: the BigInt an iteration would make, and the promise of
 * an async function around a synchronous wait, are the benchmark's allocation, not the sync event's.
 */
const values = role === 'a' || role === 'b' ? Array.from({ length: n + 1 }, (_, i) => BigInt(i)) : [];
/**
 * What b sets e2 to once it has imported both events and started its sides, before the first trip: a
 * waits for it untimed, so that its first timed trip is a first message (as the socket's, which connects
 * first), not b's process start (150 ms, which the warm-up row used to show as the first trip).
 */
const HELLO = BigInt(n + 1);

/** Waits for `event` == `value` without a promise (busy, spin, yield, tasks); async mode through waitEq. */
function waitSync(event: SyncEvent, side: Side | undefined, value: bigint): void {
  if (mode === 'tasks') waitTask(side!, value);
  else if (mode === 'yield') event.waitEqYield(value);
  else event.waitEq(value);
}

/** Tasks mode: a wait_eq task, progressed synchronously (no promise) until it completed. */
function waitTask(side: Side, value: bigint): void {
  side.ctx.taskWaitEqAllocInit(value, U64_MAX).submit();
  progressUntilDone(side, 'wait_eq', value);
}

/**
 * Progresses `side` until its `task` of `value` completed. Bounded (a synchronous spin holds off the
 * watchdog's timer: peer-lib.ts SpinGuard). What it says is formatted on failure only.
 */
const untilDone = new SpinGuard(60_000);
function progressUntilDone(side: Side, task: string, value: bigint): void {
  untilDone.reset();
  for (let calls = 1; side.pe.getNumInflightTasks() > 0; calls++) {
    if (untilDone.overdue()) throw new Error(`sync-event-peer: ${task} ${value} did not complete in 60 s (${calls} progress calls)`);
    side.pe.progress();
  }
  if (side.failed) throw new Error(`sync-event-peer: ${task} ${value} failed with ${side.failed}`);
}

/** Spin mode: a's 20 us before each set (its clock reads make garbage on a's side; b's is what is measured). */
function spinWork(): void {
  for (const until = performance.now() + 0.02; performance.now() < until; );
}

/**
 * Sets `event` to `value`: synchronously, or (async mode: the event runs as a context, and DOCA keeps the
 * modes apart) through a notify-set task, whose completion is taken at once so that its task is free.
 */
function updateSet(event: SyncEvent, side: Side | undefined, value: bigint): void {
  if (!side) return event.updateSet(value);
  side.ctx.taskNotifySetAllocInit(value).submit();
  if (mode === 'promises') return; // the driver takes its completion, and the callback frees it
  // The set itself happened at submit; one progress() takes its completion.
  progressUntilDone(side, 'notify_set', value);
}

/** Whether this mode's waits are promises (async, promises) rather than synchronous calls. */
const awaits = mode === 'async' || mode === 'promises';

/** The async sides of both events, or starts them for synchronous waits. */
const sides = (events: SyncEvent[]): Side[] => (awaits || mode === 'tasks' ? events.map(asyncSide) : (events.forEach((e) => e.start()), []));

/** Promises mode: each side's engine runs in the background until `stop()` (the README's pe.run()). */
function drive(sides: Side[]): { stop(): Promise<void> } {
  if (mode !== 'promises') return { stop: async () => {} };
  const ac = new AbortController();
  const runs = sides.map((side) => side.pe.run({ signal: ac.signal, until: () => false }));
  return {
    async stop() {
      ac.abort();
      await Promise.all(runs);
    },
  };
}

/** A wait left pending, as the promise of its failure (undefined once it completed): never a rejection. */
interface Pending {
  failure: Promise<unknown>;
}

/** Sits for 1 s with an async wait on `event` == 1 pending, and prints this process's CPU over it. */
async function idle(event: SyncEvent, side: Side): Promise<Pending> {
  const failure = waitEq(event, side, 1n).then(
    () => undefined,
    (err: unknown) => err,
  );
  process.stdout.write(JSON.stringify({ cpu_pct: await idleCpu(() => sleep(1000)) }) + '\n');
  return { failure };
}

/** Waits for the end of a wait `idle()` left pending (the other side ends it); throws what it failed with. */
async function settle(wait: Pending): Promise<void> {
  const err = await wait.failure;
  if (err) throw err;
}

if (role === 'hold') {
  const dev = openDeviceByPci(ARM);
  const e1 = creatorEvent(dev);
  e1.start();
  writeFileSync(file!, Buffer.from(e1.exportToRemotePci(dev)).toString('hex'));
  process.stdout.write('ready\n');
  // Polled: a sleeping waiter would make every add ring the bell, and the adds are what is measured.
  const timer = setInterval(() => e1.get() >= BigInt(n) && clearInterval(timer), 20);
} else if (role === 'a' || role === 'idle-a') {
  const dev = openDeviceByPci(ARM);
  const [e1, e2] = [creatorEvent(dev), creatorEvent(dev)];
  const s = sides([e1, e2]);
  writeFileSync(file!, [e1, e2].map((e) => Buffer.from(e.exportToRemotePci(dev)).toString('hex')).join('\n'));
  process.stdout.write('ready\n');
  if (role === 'idle-a') {
    await settle(await idle(e2, s[1]!)); // b set e2 = 1
    updateSet(e1, s[0], 1n); // ends b's wait
    await waitEq(e2, s[1], 2n); // b's wait completed: this side, the exporter, may go
  } else {
    const samples = new Float64Array(n); // preallocated: a growing array would allocate as it is measured
    const meter = allocMeterFromEnv(n);
    // Measuring allocation, the round trips are not timed: each read of the clock makes a number (16 B).
    const timed = process.env[ALLOC_ENV] !== '1';
    const driving = drive(s);
    if (awaits) await waitEq(e2, s[1], HELLO);
    else waitSync(e2, s[1], HELLO);
    const cpu = cpuMeter();
    for (let i = 1; i <= n; i++) {
      const t0 = timed ? performance.now() : 0;
      const v = values[i]!;
      if (mode === 'spin') spinWork();
      updateSet(e1, s[0], v);
      if (awaits) await waitEq(e2, s[1], v);
      else waitSync(e2, s[1], v);
      if (timed) samples[i - 1] = (performance.now() - t0) * 1000;
      meter.tick();
    }
    const cpuUs = cpu();
    await driving.stop();
    const alloc = await meter.figures();
    process.stdout.write(JSON.stringify(timed ? rttSummary(Array.from(samples), cpuUs) : { cpu_us_per_msg: cpuUs / n, alloc }) + '\n');
  }
} else {
  const dev = openDeviceByPci(HOST);
  const [b1, b2] = readFileSync(file!, 'utf8').split('\n').map((h) => new Uint8Array(Buffer.from(h, 'hex')));
  const e1 = SyncEvent.createFromExport(dev, b1!);
  if (role === 'add') {
    e1.start();
    while (Date.now() < Number(startAt));
    const start = Date.now();
    for (let i = 0; i < n; i++) e1.updateAdd(1n);
    process.stdout.write(JSON.stringify({ start, end: Date.now() }) + '\n');
  } else {
    const e2 = SyncEvent.createFromExport(dev, b2!);
    const s = sides([e1, e2]);
    if (role === 'idle-b') {
      const wait = await idle(e1, s[0]!);
      updateSet(e2, s[1], 1n); // ends a's wait
      await settle(wait); // a set e1 = 1
      updateSet(e2, s[1], 2n); // lets a end
    } else {
      const driving = drive(s);
      updateSet(e2, s[1], HELLO);
      let cpu = () => 0;
      const meter = allocMeterFromEnv(n);
      for (let i = 1; i <= n; i++) {
        const v = values[i]!;
        if (awaits) await waitEq(e1, s[0], v);
        else waitSync(e1, s[0], v);
        if (i === 1) cpu = cpuMeter();
        updateSet(e2, s[1], v);
        meter.tick();
      }
      const cpuUs = cpu();
      await driving.stop();
      const alloc = await meter.figures();
      if (alloc) process.stdout.write(JSON.stringify({ cpu_us_per_msg: cpuUs / Math.max(1, n), messages: n, alloc }) + '\n');
      else printCpu(cpuUs, n);
    }
  }
}
