/**
 * The DPA kill and hostility matrix (issue 18), as test/kill-matrix.test.ts is comch's: a ping-pong over
 * two MsgQs (the CPU sends numbered messages, a DPA thread answers each with the same bytes), a posted
 * async wait and a gated kernel, and then one thing goes wrong per cell:
 *
 * - kill cells: an execution unit's worker ends (exit: process.exit(1), throw, spin: a loop without a
 *   device call) at the DPA thread's activation, right after it posted an answer (a completion post),
 *   right after its completion ack, in a kernel, in an RPC, or in the middle of the DPA's teardown (a
 *   kernel that catches the unwinding and then ends its unit);
 * - corruption cells: one word that an execution unit or a peer writes is overwritten with a value it
 *   cannot hold: in the DPA segment (header, EU table, bitmaps, slots, object entries), the completion
 *   queue, the async ops list, the consumer completion's returned ring, the consumer's receive queue.
 *   (A value that keeps every invariant, a position moved a little within its window, is what can't be
 *   told from the truth: protocol.md's known gaps; the property test writes those too, for crashes.)
 *
 * What every cell checks: the CPU side never hangs (every wait is bounded) and never throws anything but
 * a DocaError; every message whose send completed is answered, in order and once, or an error says why
 * (the DPA's last error, an object ended for what it found, an ERR line in the DOCA log, a teardown
 * step's DOCA error); the teardown then succeeds (dpa.destroy() returns, every unit thread exits) and
 * leaves no worker, segment or fd.
 */
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { openDeviceByPci } from '../src/core/dev.js';
import { DocaError } from '../src/core/error.js';
import { logBackendCreateWithBuf } from '../src/core/log.js';
import { DpaAsyncOps } from '../src/dpa/async-ops.js';
import { DpaCompletion } from '../src/dpa/completion.js';
import type { DpaRun } from '../src/dpa/dpa.js';
import { EU, H, OBJ, ObjKind } from '../src/dpa/layout.js';
import { ASYNC_OPS, ATTACHED, COMPLETION, CONSUMER, CONSUMER_COMPLETION, ObjState, ThreadState } from '../src/dpa/objects.js';
import { QUEUE_LAYOUT as Q } from '../src/comch/consumer-queue.js';
import type { Segment } from '../src/fabric/segment.js';
import { type ToDpa, toDpaChannel } from './helpers/dpa-channel.js';
import { dpaEvent, dpaFabric, eventually, memfds, openFds, startDpa, threadCount } from './helpers/dpa.js';

/** Bound on every wait of a cell: far beyond what one needs on a busy machine. */
const WAIT_MS = 20_000;
const MESSAGES = 16;
const HOW = { exit: 1n, throw: 2n, spin: 3n } as const;
type How = keyof typeof HOW;
const POINTS = { activation: 1n, post: 2n, ack: 3n } as const;

/** A cell's world: a DPA running the ping-pong, an async wait posted, a kernel gated, what it holds before. */
interface World {
  t: TestContext;
  dpa: ReturnType<typeof startDpa>;
  run: DpaRun;
  channel: ToDpa;
  /** ERR lines of the DOCA log (the DPA's own and its units'). */
  errors: string[];
  /** Exceptions of the CPU side that were not DocaErrors (none allowed). */
  foreign: string[];
  sent: number;
  ops: DpaAsyncOps;
  /** The cell's thread is to spin for ever at its kill point. */
  spins: boolean;
  clean(): void;
}

/** What this process holds now: threads, fds, softdpu segments by kind. */
function holdings(): () => void {
  const threads = threadCount();
  const fds = openFds();
  const segments = () => ['dpa', 'dpaheap', 'bell', 'consumer', 'conn', 'syncevent', 'mem'].map((kind) => `${kind} ${memfds(kind)}`);
  const before = segments();
  return () => {
    assert.equal(threadCount(), threads, 'no execution unit thread is left');
    assert.deepEqual(segments(), before, 'no segment is left');
    assert.deepEqual(openFds(), fds, 'no fd is left');
  };
}

async function makeWorld(t: TestContext, point: bigint = 0n, how: bigint = 0n, after = 4n): Promise<World> {
  dpaFabric(t, { numEus: 2, kernelMaxRunTimeMs: 1000 });
  const dev = openDeviceByPci('03:00.0');
  const errors: string[] = [];
  const backend = logBackendCreateWithBuf((line) => void (/\[ERR\]/.test(line) && errors.push(line)), { sdk: true });
  const apps = logBackendCreateWithBuf((line) => void (/\[ERR\]/.test(line) && errors.push(line)));
  t.after(() => (backend.destroy(), apps.destroy()));
  const clean = holdings();
  const dpa = startDpa(t, dev, 'crash');
  const run = dpa._running('test');
  const channel = toDpaChannel(t, dpa, dev, { func: 'pong', answer: true, words: [point, how, after, 0n, 0n] });
  dpa.rpc('post', channel.consumers[0]!.getDpaHandle(), 8n);
  // An async wait that stays posted (gate > 5), and a kernel gated on the same event: their words live.
  const gate = dpaEvent(dev, dpa, 'subscriber');
  const cq = DpaCompletion.create(dpa, 4);
  cq.start();
  const ops = DpaAsyncOps.create(dpa, 4, 7);
  ops.attach(cq);
  ops.start();
  dpa.rpc('post_wait_gt', ops.getDpaHandle(), gate.getDpaHandle(dpa), 5n);
  dpa.kernelLaunchUpdateAdd(gate, 9, undefined, 0n, 1, 'count', channel.counter.getDpaHandle(dpa));
  const cell: World = { t, dpa, run, channel, errors, foreign: [], sent: 0, ops, clean, spins: point !== 0n && how === HOW.spin };
  t.after(async () => {
    for (const undo of [() => (ops.stop(), ops.destroy()), () => (cq.stop(), cq.destroy()), () => (gate.stop(), gate.destroy())]) guard(cell, undo);
  });
  (cell as World & { teardown: () => Promise<string[]> }).teardown = async () => {
    const failures = await channel.close();
    for (const [what, undo] of [['async ops', () => (ops.stop(), ops.destroy())], ['completion', () => (cq.stop(), cq.destroy())], ['gate', () => (gate.stop(), gate.destroy())]] as const) {
      const error = guard(cell, undo);
      if (error && !/BAD_STATE/.test(error)) failures.push(`${what}: ${error}`);
    }
    return failures;
  };
  return cell;
}

/** Runs `fn`; a DocaError is returned as its code, anything else is recorded as foreign. */
function guard(cell: World, fn: () => unknown): string | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    if (err instanceof DocaError) return err.code;
    cell.foreign.push(err instanceof Error ? `${err.name}: ${err.message}` : String(err));
    return 'foreign';
  }
}

/**
 * Whether the cell's DPA thread spins for ever (a `spin` kill at one of its points): it reached its kill
 * point and runs still. What it holds is not answered, and only its stop says so (TIME_OUT).
 */
function spinning(cell: World): boolean {
  if (!cell.spins || cell.dpa.peekAtLastError() !== undefined) return false;
  const dying = new Uint8Array(1);
  cell.dpa.d2hMemcpy(dying, cell.channel.args + 88n); // pong sets it as it ends its unit
  const state = cell.run.objects.state(cell.channel.thread.index);
  return dying[0] === 1 && (state === ThreadState.RUNNING || state === ThreadState.RUNNING_AGAIN);
}

/** Sends `n` more numbered messages, retrying AGAIN (no credit) while the DPA lives, bounded. */
async function traffic(cell: World, n: number): Promise<void> {
  const deadline = performance.now() + WAIT_MS;
  for (let i = 0; i < n; ) {
    const imm = new Uint8Array(4);
    new DataView(imm.buffer).setUint32(0, cell.sent, true);
    let result = 'ok';
    const error = guard(cell, () => (result = cell.channel.send(imm)));
    if (error === undefined && result === 'ok') {
      cell.sent++;
      i++;
      continue;
    }
    if (result !== 'DOCA_ERROR_AGAIN' || cell.dpa.peekAtLastError() !== undefined || spinning(cell) || performance.now() > deadline) return; // refused for good
    guard(cell, () => {
      while (cell.channel.pe.progress());
    });
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/** Whether some error was reported: the DPA's, an ended object's, an ERR log line, a failed send. */
function errorShown(cell: World): boolean {
  if (cell.dpa.peekAtLastError() !== undefined || cell.errors.length > 0 || cell.channel.failed.length > 0) return true;
  for (let i = 0; i < cell.run.layout.dims.objects; i++) if (Atomics.load(cell.run.tables.i32, cell.run.objects.at(i, OBJ.FAULT) / 4) !== 0) return true;
  return false;
}

/** The words that say where the ping-pong stands (for a wait that timed out). */
function snapshot(cell: World): string {
  const run = cell.run;
  const i32 = run.tables.i32;
  const receives = queue(cell);
  const channel = cell.channel;
  const words = {
    state: Atomics.load(i32, H.STATE / 4),
    ready: Atomics.load(i32, H.READY / 4),
    idle: Atomics.load(i32, H.IDLE / 4),
    work: [0, 1].map((e) => Atomics.load(i32, (run.layout.eu(e) + EU.RUNNING) / 4).toString(16)),
    bits: Atomics.load(i32, run.layout.objectBits / 4).toString(16),
    thread: run.objects.state(channel.thread.index),
    armed: run.objects.load(channel.cc.index, ATTACHED.ARMED),
    ret: [run.objects.load(channel.cc.index, CONSUMER_COMPLETION.RET_HEAD), run.objects.load(channel.cc.index, CONSUMER_COMPLETION.RET_TAIL)],
    consumer: [run.objects.load(channel.consumers[0]!.index, CONSUMER.RELEASED), run.objects.load(channel.consumers[0]!.index, CONSUMER.HEAD), Atomics.load(receives.i32, Q.CLAIM_HEAD / 4), Atomics.load(receives.i32, Q.POST_TAIL / 4)],
    answers: channel.answers.length,
    completed: channel.completed,
  };
  return JSON.stringify(words);
}

/** Waits until every completed send is answered or an error is shown (bounded), then checks the answers. */
async function settle(cell: World): Promise<void> {
  const answered = () => (guard(cell, () => {
    while (cell.channel.pe.progress());
  }), cell.channel.answers.length >= cell.channel.completed);
  await eventually(() => answered() || errorShown(cell) || spinning(cell), () => `every completed message answered, or an error (${snapshot(cell)})`, WAIT_MS);
  // Answers are the messages sent, in order, each once (those after an error may be missing).
  cell.channel.answers.forEach((imm, i) => assert.equal(new DataView(imm.buffer, imm.byteOffset).getUint32(0, true), i, `answer ${i} out of order or twice`));
}

/** The end of every cell: no message lost without an error, a teardown that succeeds, nothing left. */
async function finish(cell: World): Promise<void> {
  await settle(cell);
  const shown = errorShown(cell);
  const lost = cell.channel.completed - cell.channel.answers.length;
  const failures = await (cell as World & { teardown: () => Promise<string[]> }).teardown();
  cell.t.diagnostic(`sent ${cell.sent}, completed ${cell.channel.completed}, answered ${cell.channel.answers.length}; ${cell.dpa.peekAtLastError()?.message ?? 'not fatal'}; ${cell.errors.length} ERR lines; teardown: ${failures.join(', ') || 'clean'}`);
  assert.ok(lost === 0 || shown || failures.length > 0, `${lost} completed messages were lost without an error`);
  assert.doesNotThrow(() => cell.dpa.destroy(), 'dpa.destroy() succeeds');
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([cell.dpa.exited(), new Promise((_, reject) => (timer = setTimeout(() => reject(new Error('the units did not exit')), WAIT_MS)))]);
  clearTimeout(timer);
  assert.deepEqual(cell.foreign, [], 'the CPU side threw only DocaErrors');
  cell.clean();
}

describe('DPA kill matrix: a unit ends at each point, each way', () => {
  for (const how of Object.keys(HOW) as How[]) {
    for (const point of Object.keys(POINTS) as (keyof typeof POINTS)[]) {
      it(`${how} at the thread's ${point}`, { timeout: 60_000 }, async (t) => {
        const cell = await makeWorld(t, POINTS[point], HOW[how]);
        await traffic(cell, MESSAGES);
        await finish(cell);
      });
    }
    it(`${how} in a kernel`, { timeout: 60_000 }, async (t) => {
      const cell = await makeWorld(t);
      await traffic(cell, MESSAGES / 2);
      guard(cell, () => cell.dpa.kernelLaunchUpdateSet(undefined, 0, undefined, 0n, 1, 'die_kernel', HOW[how]));
      await eventually(() => cell.dpa.peekAtLastError() !== undefined, 'the DPA to go fatal', WAIT_MS);
      await traffic(cell, MESSAGES / 2);
      await finish(cell);
    });
    it(`${how} in an RPC`, { timeout: 60_000 }, async (t) => {
      const cell = await makeWorld(t);
      await traffic(cell, MESSAGES / 2);
      const call = cell.dpa.rpcAsync('die', HOW[how]).then(
        () => 'returned',
        (err: unknown) => (err instanceof DocaError ? err.code : `foreign ${String(err)}`),
      );
      assert.equal(await call, 'DOCA_ERROR_DRIVER', 'the call fails with the DPA');
      await traffic(cell, MESSAGES / 2);
      await finish(cell);
    });
    it(`${how} during the teardown`, { timeout: 60_000 }, async (t) => {
      const cell = await makeWorld(t);
      const started = cell.dpa.memAlloc(8);
      cell.dpa.memset(started, 0, 8);
      cell.dpa.kernelLaunchUpdateSet(undefined, 0, undefined, 0n, 1, 'die_at_stop', started, HOW[how]);
      const mark = new Uint8Array(1);
      await eventually(() => (cell.dpa.d2hMemcpy(mark, started), mark[0] === 1), 'the kernel to wait for the stop');
      await traffic(cell, MESSAGES);
      await finish(cell);
    });
  }
});

/** A word to corrupt: where it is in which segment, and the values it cannot hold (from what it holds). */
interface Word {
  name: string;
  at(cell: World): { i32: Int32Array; offset: number };
  values: ((old: number) => number)[];
}

const FAR = 1 << 30;
const dpaWord = (name: string, offset: (run: DpaRun, cell: World) => number, ...values: ((old: number) => number)[]): Word => ({ name, at: (cell) => ({ i32: cell.run.tables.i32, offset: offset(cell.run, cell) }), values });
const queue = (cell: World): Segment => (cell.channel.consumers[0] as unknown as { queue: { segment: Segment } }).queue.segment;
const cc = (cell: World) => cell.channel.cc.index;
const consumer = (cell: World) => cell.channel.consumers[0]!.index;
const thread = (cell: World) => cell.channel.thread.index;
const sentCq = (run: DpaRun, _cell: World) => {
  for (let i = 0; i < run.layout.dims.objects; i++) if (run.tables.u32(i, OBJ.KIND) === ObjKind.COMPLETION && run.objects.state(i) === ObjState.STARTED && run.tables.u32(i, COMPLETION.SIZE) === 8) return i;
  throw new Error('no sent completion');
};
const returned = (run: DpaRun, cell: World) => run.tables.u32(cc(cell), CONSUMER_COMPLETION.RETURNED);
const waits = (run: DpaRun, cell: World) => run.tables.u32(cell.ops.index, ASYNC_OPS.LIST);

const WORDS: Word[] = [
  dpaWord('header state', () => H.STATE, () => 77),
  dpaWord('header ready count', () => H.READY, () => 0x7fffffff, () => -5),
  dpaWord('header idle mask', () => H.IDLE, () => -1),
  dpaWord('header units up', () => H.EUS_UP, () => -7),
  dpaWord('header wake cursor', () => H.WAKE_CURSOR, () => 0x7fffffff),
  dpaWord('header gated count', () => H.GATED, () => -1),
  dpaWord('unit 0 work word', (run) => run.layout.eu(0) + EU.RUNNING, () => (3 << 24) | 63, () => (1 << 24) | 0xffff),
  dpaWord('unit 0 left word', (run) => run.layout.eu(0) + EU.LEFT, () => 1),
  dpaWord('unit 1 bell reference', (run) => run.layout.eu(1) + EU.BELL, () => 0, () => 77),
  dpaWord('thread ready bitmap', (run) => run.layout.objectBits, () => -1),
  dpaWord('wait bitmap', (run) => run.layout.waitBits, () => -1),
  dpaWord('launch slot state', (run) => run.layout.launch(0), () => 77, () => 3),
  dpaWord('RPC slot state', (run) => run.layout.rpc(1), () => 2, () => 77),
  dpaWord('thread state', (run, cell) => run.objects.at(thread(cell), OBJ.STATE), () => 77, () => 5),
  dpaWord('thread fault', (run, cell) => run.objects.at(thread(cell), OBJ.FAULT), () => 77),
  dpaWord('cc armed', (run, cell) => run.objects.at(cc(cell), ATTACHED.ARMED), () => 77),
  dpaWord('cc returned head', (run, cell) => run.objects.at(cc(cell), CONSUMER_COMPLETION.RET_HEAD), (v) => v + FAR, (v) => v - FAR),
  dpaWord('cc returned tail', (run, cell) => run.objects.at(cc(cell), CONSUMER_COMPLETION.RET_TAIL), (v) => v + FAR),
  dpaWord('cc cursor', (run, cell) => run.objects.at(cc(cell), CONSUMER_COMPLETION.CURSOR), () => -1),
  dpaWord('consumer head', (run, cell) => run.objects.at(consumer(cell), CONSUMER.HEAD), (v) => v + FAR, (v) => v - FAR),
  dpaWord('consumer released', (run, cell) => run.objects.at(consumer(cell), CONSUMER.RELEASED), (v) => v - FAR, (v) => v + FAR),
  dpaWord('sent completion reserve', (run, cell) => run.objects.at(sentCq(run, cell), COMPLETION.RESERVE), (v) => v + FAR),
  dpaWord('sent completion read', (run, cell) => run.objects.at(sentCq(run, cell), COMPLETION.READ), (v) => v + FAR, (v) => v - FAR),
  dpaWord('sent completion ack', (run, cell) => run.objects.at(sentCq(run, cell), COMPLETION.ACK), (v) => v - FAR),
  dpaWord('sent completion armed', (run, cell) => run.objects.at(sentCq(run, cell), ATTACHED.ARMED), () => 77),
  dpaWord('completion element sequence', (run, cell) => run.tables.u32(sentCq(run, cell), COMPLETION.RING), () => -1, (v) => v + 8),
  dpaWord('async ops wait state', waits, () => 77, () => 0),
  dpaWord('async ops wait event', (run, cell) => waits(run, cell) + 8, () => 0xffff, () => 1),
  dpaWord('returned ring consumer', returned, () => 0x7fffffff, (_v) => 0),
  dpaWord('returned ring position', (run, cell) => returned(run, cell) + 4, (v) => v + FAR),
  { name: 'receive queue claim head', at: (cell) => ({ i32: queue(cell).i32, offset: Q.CLAIM_HEAD }), values: [(v) => v + FAR, (v) => v - FAR] },
  { name: 'receive queue post tail', at: (cell) => ({ i32: queue(cell).i32, offset: Q.POST_TAIL }), values: [(v) => v + FAR] },
  { name: 'receive slot state', at: (cell) => ({ i32: queue(cell).i32, offset: Q.SLOTS }), values: [() => 77, () => Q.FILLED] },
  { name: 'receive slot claimer', at: (cell) => ({ i32: queue(cell).i32, offset: Q.SLOTS + Q.SLOT.CLAIMER }), values: [() => -1] },
];

describe('DPA hostility matrix: a word a unit or a peer writes is overwritten', () => {
  for (const word of WORDS) {
    word.values.forEach((value, k) => {
      it(`${word.name} (${k === 0 ? 'first' : 'second'} bad value)`, { timeout: 60_000 }, async (t) => {
        const cell = await makeWorld(t);
        await traffic(cell, MESSAGES / 2);
        await settle(cell);
        const { i32, offset } = word.at(cell);
        const old = Atomics.load(i32, offset / 4);
        Atomics.store(i32, offset / 4, value(old));
        t.diagnostic(`overwrote ${old} with ${value(old)} at ${snapshot(cell)}`);
        await traffic(cell, MESSAGES / 2);
        guard(cell, () => cell.dpa.rpc('add', 1n, 2n)); // any call: it may fail, with a DocaError
        await finish(cell);
      });
    });
  }
});
