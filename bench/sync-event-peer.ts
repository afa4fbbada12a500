/**
 * Sides of the sync event benchmark, each in its own process of one fabric (SOFTDPU_FABRIC):
 *   a <busy|yield|async> N FILE   creates two events, writes their blobs to FILE, then N round trips:
 *                                 set e1 = i, wait for e2 == i; prints {"p50_us","p99_us"} of the RTT
 *   b <busy|yield|async> N FILE   imports them: waits for e1 == i, sets e2 = i
 *   hold FILE TARGET              creates e1 as 'a' does, and exits once it reaches TARGET (polled)
 *   add N FILE START              imports e1 and does N update_add(1) from wall-clock time START (ms),
 *                                 prints {"start","end"} (epoch ms)
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { type Dev, openDeviceByPci } from '../src/core/dev.js';
import { ProgressEngine } from '../src/core/pe.js';
import type { Task } from '../src/core/task.js';
import { U64_MAX } from '../src/sync-event/condition.js';
import type { SyncEventContext } from '../src/sync-event/ctx.js';
import { SyncEvent } from '../src/sync-event/sync-event.js';
import { percentiles } from './lib.js';

const args = process.argv.slice(2);
const role = args[0];
// 'add' and 'hold' have no mode: add N FILE START, hold FILE TARGET.
const [mode, count, file, startAt] = role === 'add' ? ['busy', ...args.slice(1)] : role === 'hold' ? ['busy', args[2], args[1]] : args.slice(1);
const n = Number(count);

function asyncSide(event: SyncEvent): { ctx: SyncEventContext; pe: ProgressEngine } {
  const pe = ProgressEngine.create();
  const ctx = event.asCtx();
  pe.connectCtx(ctx);
  const free = (t: Task) => t.free();
  ctx.taskNotifySetSetConf(free, free, 1);
  ctx.taskWaitEqSetConf(free, free, 1);
  ctx.start();
  return { ctx, pe };
}

async function waitEq(event: SyncEvent, side: ReturnType<typeof asyncSide> | undefined, value: bigint): Promise<void> {
  if (mode === 'busy') event.waitEq(value);
  else if (mode === 'yield') event.waitEqYield(value);
  else {
    let done = false;
    const task = side!.ctx.taskWaitEqAllocInit(value, U64_MAX);
    task.submitAsync().then((t) => ((done = true), t.free()));
    await side!.pe.run({ until: () => done });
  }
}

function set(event: SyncEvent, value: bigint): void {
  event.updateSet(value);
}

function creatorEvent(dev: Dev): SyncEvent {
  const e = SyncEvent.create();
  e.addPublisherLocationRemotePci();
  e.addSubscriberLocationCpu(dev);
  return e;
}

if (role === 'hold') {
  const dev = openDeviceByPci('03:00.0');
  const e1 = creatorEvent(dev);
  e1.start();
  writeFileSync(file!, Buffer.from(e1.exportToRemotePci(dev)).toString('hex'));
  process.stdout.write('ready\n');
  // Polled: a sleeping waiter would make every add ring the bell, and the adds are what is measured.
  const timer = setInterval(() => e1.get() >= BigInt(n) && clearInterval(timer), 20);
} else if (role === 'a') {
  const dev = openDeviceByPci('03:00.0');
  const [e1, e2] = [creatorEvent(dev), creatorEvent(dev)];
  const sides = mode === 'async' ? [asyncSide(e1), asyncSide(e2)] : (e1.start(), e2.start(), []);
  writeFileSync(file!, [e1, e2].map((e) => Buffer.from(e.exportToRemotePci(dev)).toString('hex')).join('\n'));
  process.stdout.write('ready\n');
  const samples: number[] = [];
  for (let i = 1; i <= n; i++) {
    const t0 = performance.now();
    set(e1, BigInt(i));
    await waitEq(e2, sides[1], BigInt(i));
    samples.push((performance.now() - t0) * 1000);
  }
  const { p50, p99 } = percentiles(samples);
  process.stdout.write(JSON.stringify({ p50_us: p50, p99_us: p99 }) + '\n');
} else {
  const dev = openDeviceByPci('b1:00.0');
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
    const sides = mode === 'async' ? [asyncSide(e1), asyncSide(e2)] : (e1.start(), e2.start(), []);
    for (let i = 1; i <= n; i++) {
      await waitEq(e1, sides[0], BigInt(i));
      set(e2, BigInt(i));
    }
  }
}
