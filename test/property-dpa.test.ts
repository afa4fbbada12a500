/**
 * A DPA application driven with a hostile writer beside it (issue 18): each case overwrites a few words
 * at random offsets of the DPA's shared tables (the object entries of the running objects and the whole
 * object table, the arena's rings and lists, the consumer's receive queue) with random values, then
 * drives the application (a ping-pong message, an RPC and a kernel that use every object, or nothing).
 *
 * Zero crashes: the CPU side throws nothing but DocaErrors, no call or wait hangs, no execution unit
 * dies or meets anything but a DocaError (the application, dpa-apps/sturdy.ts, catches those and lets
 * anything else through, which would make the DPA fatal with it). What a write breaks ends objects (or
 * the DPA) with DOCA errors; the world is then torn down, which must succeed, and built again. At the
 * end nothing is left: no unit thread, segment or fd.
 *
 * Replay a failure with SOFTDPU_FC_SEED=<seed> (printed with the property); SOFTDPU_DPA_CASES=<n> runs
 * another number of cases (10 000 by default, about 30 s).
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import fc from 'fast-check';
import { QUEUE_LAYOUT as Q } from '../src/comch/consumer-queue.js';
import { openDeviceByPci } from '../src/core/dev.js';
import { DocaError } from '../src/core/error.js';
import { DpaAsyncOps } from '../src/dpa/async-ops.js';
import { DpaCompletion } from '../src/dpa/completion.js';
import { DpaApp } from '../src/dpa/app.js';
import { Dpa, type DpaRun } from '../src/dpa/dpa.js';
import { OBJ, OBJECT_SIZE } from '../src/dpa/layout.js';
import { ASYNC_OPS, COMPLETION, CONSUMER_COMPLETION, CQE_SIZE, RETURNED_SIZE, WAIT_SIZE } from '../src/dpa/objects.js';
import type { Segment } from '../src/fabric/segment.js';
import type { SyncEvent } from '../src/sync-event/sync-event.js';
import { type ToDpa, toDpaChannel } from './helpers/dpa-channel.js';
import { appPath, dpaEvent, dpaFabric, memfds, openFds, threadCount } from './helpers/dpa.js';
import { checkProperty } from './helpers/property.js';

const CASES = Number(process.env.SOFTDPU_DPA_CASES ?? 10_000);
/** How long a case waits for an answer (a write may stall the ping-pong without an error: its world is built again). */
const ANSWER_MS = 25;
/** Cases a world sees before it is built again (corruption piles up meanwhile). */
const AGE = 100;
/**
 * A fatal reason that is a crash, not a DOCA error: a unit died, or softdpu's own code threw what is not
 * a DocaError (its location is in src/). A write may make a unit run another function of the application
 * with arguments it does not take (a thread's function index): that DPA code's exception makes the DPA
 * fatal with it, as a crash of the program on the DPA does, and is no crash of softdpu.
 */
const CRASH = /failed:|ended without a word|exited with code|error on the DPA: (?!DocaError)\w+: .*\(at [^)]*\/src\//;

/** A range of words the writer may hit: where, how many bytes. */
interface Region {
  name: string;
  i32: Int32Array;
  offset: number;
  bytes: number;
}

interface World {
  dpa: Dpa;
  run: DpaRun;
  channel: ToDpa;
  ops: DpaAsyncOps;
  opsCq: DpaCompletion;
  gate: SyncEvent;
  done: SyncEvent;
  regions: Region[];
  /** The whole object table and the whole arena. */
  tables: Region[];
  /** Object indices of the world (their FAULT words say what a write ended). */
  objects: number[];
  damaged: boolean;
  /** Cases it has seen. */
  age: number;
}

const fakeTest = (t: TestContext): TestContext => ({ ...t, after: () => {}, diagnostic: () => {} }) as unknown as TestContext;

function regionsOf(run: DpaRun, channel: ToDpa, objects: number[], ops: DpaAsyncOps, opsCq: DpaCompletion): Region[] {
  const i32 = run.tables.i32;
  const u32 = (index: number, field: number) => run.tables.u32(index, field);
  const queue = (channel.consumers[0] as unknown as { queue: { segment: Segment } }).queue.segment;
  const sent = channel.sent!.index;
  const cc = channel.cc.index;
  return [
    ...objects.map((index) => ({ name: `object ${index}`, i32, offset: run.layout.object(index), bytes: OBJECT_SIZE })),
    { name: 'consumer list', i32, offset: u32(cc, CONSUMER_COMPLETION.LIST), bytes: 8 },
    { name: 'returned ring', i32, offset: u32(cc, CONSUMER_COMPLETION.RETURNED), bytes: u32(cc, CONSUMER_COMPLETION.MAX_RECV) * RETURNED_SIZE },
    { name: 'sent ring', i32, offset: u32(sent, COMPLETION.RING), bytes: u32(sent, COMPLETION.SIZE) * CQE_SIZE },
    { name: 'async ops ring', i32, offset: u32(opsCq.index, COMPLETION.RING), bytes: 4 * CQE_SIZE },
    { name: 'async ops list', i32, offset: u32(ops.index, ASYNC_OPS.LIST), bytes: 4 * WAIT_SIZE },
    { name: 'receive queue', i32: queue.i32, offset: Q.CLAIM_HEAD - 64, bytes: queue.size - (Q.CLAIM_HEAD - 64) },
  ];
}

test(`a DPA application with a hostile writer beside it: ${CASES} cases, zero crashes`, { timeout: 600_000 }, async (t) => {
  dpaFabric(t, { numEus: 2, maxObjects: 64, kernelMaxRunTimeMs: 1000 });
  const dev = openDeviceByPci('03:00.0');
  const threads = threadCount();
  const fds = openFds();
  const segments = () => ['dpa', 'dpaheap', 'bell', 'consumer', 'conn', 'syncevent'].map((kind) => `${kind} ${memfds(kind)}`);
  const before = segments();
  const foreign: string[] = [];
  /** The teardown steps that failed, with their DOCA errors (allowed: an ended object may refuse a stop). */
  const stepFailures = new Set<string>();
  const stats = { cases: 0, worlds: 0, dpas: 0, fatal: 0, ended: 0, stalled: 0, timeouts: 0 };
  let dpa: Dpa | undefined;
  let current: World | undefined;

  /** Runs `fn`; a DocaError is fine (its code), anything else is a crash of the CPU side. */
  const guard = <T>(what: string, fn: () => T): T | string => {
    try {
      return fn();
    } catch (err) {
      if (err instanceof DocaError) return err.code;
      foreign.push(`${what}: ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`);
      return 'foreign';
    }
  };

  const startDpa = (): Dpa => {
    const target = Dpa.create(dev);
    target.setApp(DpaApp.create(appPath('sturdy')));
    target.start();
    stats.dpas++;
    return target;
  };

  /** A world on `d`; undefined if `d` went fatal while it was built (what was made is gone again). */
  const build = async (target: Dpa): Promise<World | undefined> => {
    const made: (() => unknown)[] = [];
    try {
      return makeWorld(target, made);
    } catch (err) {
      if (!(err instanceof DocaError)) throw err;
      for (const undo of made.reverse()) await guard('undo', undo);
      return undefined;
    }
  };

  const makeWorld = (target: Dpa, made: (() => unknown)[]): World => {
    const channel = toDpaChannel(fakeTest(t), target, dev, { func: 'sturdy_pong', answer: true, words: [0n, 0n, 0n, 0n, 0n] });
    made.push(() => channel.close());
    const gate = dpaEvent(dev, target, 'subscriber');
    made.push(() => (gate.stop(), gate.destroy()));
    const done = dpaEvent(dev, target, 'publisher');
    made.push(() => (done.stop(), done.destroy()));
    const opsCq = DpaCompletion.create(target, 4);
    made.push(() => opsCq.destroy());
    opsCq.start();
    made.push(() => opsCq.stop());
    const ops = DpaAsyncOps.create(target, 4, 9);
    made.push(() => ops.destroy());
    ops.attach(opsCq);
    ops.start();
    made.push(() => ops.stop());
    const run = target._running('test');
    const objects = [channel.thread, channel.cc, ...channel.consumers, channel.dpaProducer!, channel.sent!, ops, opsCq].map((o) => o.index).concat([...run.events.values()].map((e) => e.index), run.self);
    stats.worlds++;
    const tables = [
      { name: 'object table', i32: run.tables.i32, offset: run.layout.objects, bytes: run.layout.dims.objects * OBJECT_SIZE },
      { name: 'arena', i32: run.tables.i32, offset: run.layout.arena, bytes: run.layout.dims.arena },
    ];
    const world: World = { dpa: target, run, channel, ops, opsCq, gate, done, regions: regionsOf(run, channel, objects, ops, opsCq), tables, objects, damaged: false, age: 0 };
    // The first credits; the DPA may have gone fatal meanwhile (its units act on their own): then the
    // world is torn down with it, like any other.
    world.damaged = guard('post', () => target.rpc('post', channel.consumers[0]!.getDpaHandle(), 8n)) !== 0n;
    return world;
  };

  /** Tears a world down (every step may fail with a DocaError, none with anything else). */
  const teardown = async (world: World): Promise<void> => {
    const failures = await world.channel.close().catch((err: unknown) => [`close: ${String(err)}`]);
    for (const f of failures) if (!/DOCA_ERROR_/.test(f)) foreign.push(`teardown ${f}`);
    for (const f of failures) stepFailures.add(f);
    if (failures.some((f) => /TIME_OUT/.test(f))) stats.timeouts++;
    // A stop may be refused (what it stops was ended); the destroy after it must not: every object must
    // go, or the DPA cannot stop.
    for (const o of [world.ops, world.opsCq, world.gate, world.done]) {
      guard('teardown stop', () => o.stop());
      guard('teardown destroy', () => o.destroy());
    }
  };

  const endDpa = async (target: Dpa): Promise<void> => {
    // Whatever the writer did, the DPA comes down (its objects were destroyed): a refusal is a failure.
    try {
      target.destroy();
    } catch (err) {
      foreign.push(`dpa.destroy: ${(err as Error).message} (teardown steps that failed: ${[...stepFailures].join('; ')})`);
      return; // its units still run: waiting for them would hang
    }
    await target.exited();
  };

  /** Ends the fatal DPA and its world (which must succeed); the next case starts a new one. */
  const recycle = async (): Promise<void> => {
    stats.fatal++;
    if (current) await teardown(current);
    if (dpa) await endDpa(dpa);
    dpa = current = undefined;
  };

  const ended = (world: World): boolean => world.objects.some((i) => Atomics.load(world.run.tables.i32, world.run.objects.at(i, OBJ.FAULT) / 4) !== 0);

  /** The arguments of `poke`: cc, consumer, producer, CPU consumer id, async ops, event, completion; undefined if a handle is refused. */
  const pokeArgs = (world: World): bigint[] | undefined => {
    const { cc, consumers } = world.channel;
    const args = [() => cc.getDpaHandle(), () => consumers[0]!.getDpaHandle(), () => 0n, () => 0n, () => world.ops.getDpaHandle(), () => world.gate.getDpaHandle(world.dpa), () => world.opsCq.getDpaHandle()].map((h) => guard('handle', h));
    return args.every((a) => typeof a === 'bigint') ? (args as bigint[]) : undefined;
  };

  const ping = async (world: World): Promise<void> => {
    const answers = world.channel.answers.length;
    const sent = guard('send', () => world.channel.send(new Uint8Array([stats.cases & 0xff])));
    if (sent !== 'ok') return void (world.damaged = true);
    const deadline = performance.now() + ANSWER_MS;
    while (world.channel.answers.length === answers) {
      guard('progress', () => {
        while (world.channel.pe.progress());
      });
      if (ended(world) || world.dpa.peekAtLastError() !== undefined) return void (world.damaged = true); // no answer to wait for
      if (performance.now() > deadline) {
        stats.stalled++;
        return void (world.damaged = true);
      }
      await new Promise((r) => setImmediate(r));
    }
  };

  const op = fc.constantFrom('ping', 'rpc', 'kernel', 'none');
  // A sixth of the writes hit the running objects' entries, rings, lists and queue (most of those end an
  // object); the rest fall anywhere in the tables (the whole object table, the whole arena), mostly on
  // what nothing uses.
  const write = fc.record({
    region: fc.oneof({ weight: 1, arbitrary: fc.nat() }, { weight: 5, arbitrary: fc.constantFrom(-1, -2) }),
    word: fc.nat(),
    value: fc.oneof(fc.integer({ min: -0x80000000, max: 0x7fffffff }), fc.constantFrom(0, 1, -1, 2, 3, 5, 6, 7, 8, 77, 0x7fffffff, -0x80000000, 1 << 30)),
  });

  await checkProperty(
    t,
    fc.asyncProperty(fc.array(write, { maxLength: 3 }), op, async (writes, action) => {
      stats.cases++;
      // A DPA that went fatal after the last case looked (its units act on their own) is replaced.
      if (dpa?.peekAtLastError()) await recycle();
      dpa ??= startDpa();
      current ??= await build(dpa);
      if (!current) return void (await recycle()); // the DPA went fatal under the set-up
      const world = current;
      for (const { region, word, value } of writes) {
        const where = region === -1 ? world.tables[0]! : region === -2 ? world.tables[1]! : world.regions[region % world.regions.length]!;
        const at = where.offset + ((word % Math.max(1, where.bytes >>> 2)) << 2);
        if (at >= 0 && at + 4 <= where.i32.byteLength) Atomics.store(where.i32, at >>> 2, value);
      }
      if (action === 'ping') await ping(world);
      const args = action === 'rpc' || action === 'kernel' ? pokeArgs(world) : undefined;
      if (action === 'rpc' && args) guard('rpc', () => world.dpa.rpc('poke', ...args));
      if (action === 'kernel' && args) {
        const before = world.done.get();
        guard('launch', () => world.dpa.kernelLaunchUpdateAdd(undefined, 0, world.done, 1n, 2, 'poke', ...args));
        const deadline = performance.now() + ANSWER_MS;
        while (world.done.get() === before && world.dpa.peekAtLastError() === undefined && performance.now() < deadline) await new Promise((r) => setImmediate(r));
      }
      assert.deepEqual(foreign, [], 'the CPU side threw only DocaErrors');
      const error = world.dpa.peekAtLastError();
      assert.ok(error === undefined || !CRASH.test(error.message), `a crash, not a DOCA error: ${error?.message}`);
      // An ended object stays in the world (later cases meet it, and pile more writes on it) until the next
      // ping; a world is built again then, after a ping that failed (refused, or unanswered within
      // ANSWER_MS), or after AGE cases.
      if (writes.length > 0 && ended(world)) stats.ended++;
      if (++world.age >= AGE) world.damaged = true;
      if (error) {
        await recycle();
      } else if (world.damaged) {
        await teardown(world);
        current = undefined;
      }
      assert.deepEqual(foreign, [], 'the teardown threw only DocaErrors');
    }),
    CASES,
    540_000,
  );
  if (current) await teardown(current);
  if (dpa) await endDpa(dpa);
  t.diagnostic(JSON.stringify(stats));
  t.diagnostic(`teardown steps that failed with a DOCA error: ${[...stepFailures].join('; ') || 'none'}`);
  assert.deepEqual(foreign, []);
  assert.equal(threadCount(), threads, 'no execution unit thread is left');
  assert.deepEqual(segments(), before, 'no segment is left');
  assert.deepEqual(openFds(), fds, 'no fd is left');
});
