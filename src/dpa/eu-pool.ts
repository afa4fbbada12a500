/**
 * A started DPA's execution units: worker threads of the owner's process (eu-worker.ts), started with
 * the DPA and ended with it (or with the process). This file is the one owner of their lifecycle; every
 * channel through which a unit can tell its fate arrives here and nowhere else:
 *
 *                 ┌──── port: ready (names, its OS thread) · error · fatal · log · exit (code)
 *   unit e ───────┼──── worker events: 'error', 'exit' (code)        ──►  check() / ended(unit, cause)
 *   (worker)      ├──── shared state word: FATAL (its DPA code threw)          │
 *                 └──── its OS thread in /proc (gone: it died, told or not)    ▼
 *                                                                   fatal(reason): FATAL, stop(), onFatal
 *
 * Starting waits, bounded, until every EU has loaded the application; stopping rings every EU, waits
 * (bounded) until each has left its loop, then terminates the workers that did not (which interrupts one
 * stuck in DPA code, spinning or not); the others exit by themselves. A unit that ends while the DPA runs
 * is a crash of the DPA: its fatal state, with a reason that names the unit, what ended it (the exit
 * code, the worker's error, the exception its code threw) and what it was running.
 *
 * The watchdog: a kernel instance or RPC call that runs past the kernel max run time makes the DPA
 * fatal. It is checked from an unreferenced timer and from every blocking wait of the owner, so that
 * it fires even while the owner's thread waits for that very call. It takes a unit's word for when a run
 * started only if that word is a time in the past: otherwise (NaN, the future) it counts from when it
 * first saw the run itself.
 */
import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from 'node:worker_threads';
import { DocaError } from '../core/error.js';
import { isAlive, type ThreadIdentity } from '../fabric/liveness.js';
import type { SegmentDescriptor } from '../fabric/segment.js';
import type { EuData, EuMessage } from './eu-worker.js';
import { BIT_READY, type DpaLayout, DpaState, EU, H, OBJ, WorkKind } from './layout.js';
import { ObjState } from './objects.js';
import type { OwnerBell } from './owner-bell.js';
import type { Scheduler } from './scheduler.js';

const WORKER = new URL('./eu-boot.js', import.meta.url);
/**
 * How long `start` waits for the execution units to load the application: 30 s, or
 * `$SOFTDPU_DPA_START_MS` (milliseconds; benchmarks under valgrind on a loaded machine need longer).
 */
function startTimeoutMs(): number {
  const text = process.env.SOFTDPU_DPA_START_MS;
  if (text === undefined || text === '') return 30_000;
  const value = Number(text);
  if (!Number.isInteger(value) || value <= 0) throw new DocaError('INVALID_VALUE', 'doca_dpa_start', `SOFTDPU_DPA_START_MS ${JSON.stringify(text)} is not a positive integer`);
  return value;
}
/** How long `stop` waits for execution units to leave their loops before it terminates them. */
const STOP_GRACE_MS = 2000;
/** How long an EU that left its loop gets to exit by itself before it is terminated anyway. */
const EXIT_GRACE_MS = 2000;
/** How long a fatal DPA's healthy units get to leave before all are terminated. */
const FATAL_GRACE_MS = 100;
/** Longest sleep of a blocking wait between two looks at the watchdog. */
const SLICE_MS = 50;
/** How often the units' threads are looked up in /proc (every call needing the DPA looks, at most this often). */
const LIVENESS_MS = 20;

/**
 * The pools running in this thread. When the thread exits, Node terminates their workers and waits for
 * each, but a worker asleep in poll(2) on its bell cannot be interrupted until the poll returns (up to an
 * EU's sleep slice, one after the other): so at exit every running pool is told to stop and its units are
 * rung, and the exit takes no longer than with `destroy()`.
 */
const running = new Set<EuPool>();
let exitHook = false;

function stopAllAtExit(): void {
  for (const pool of running) pool.abandon();
}

export interface EuPoolOptions {
  segment: { descriptor: SegmentDescriptor; i32: Int32Array; u8: Uint8Array };
  layout: DpaLayout;
  heap: SegmentDescriptor;
  maps: SegmentDescriptor;
  heapBase: bigint;
  app: string;
  dev: string;
  bell: OwnerBell;
  sched: Scheduler;
  maxRunMs: number;
  /** The owner's stats segment on the DPA's fabric, where EUs count DPA thread activations. */
  stats?: SegmentDescriptor | undefined;
  onLog(level: number, text: string): void;
  /** The DPA entered its fatal state (`reason` says why); the pool has already stopped the workers. */
  onFatal(reason: string): void;
}

/** One execution unit as its owner knows it. */
interface Unit {
  readonly index: number;
  readonly worker: Worker;
  readonly port: MessagePort;
  readonly exited: Promise<unknown>;
  /** Its OS thread, from its ready message: a unit whose exit was not told is found gone in /proc. */
  thread: ThreadIdentity | undefined;
  /** Why it ended, once it did (its exit code, its worker's error, what its DPA code threw). */
  ended: string | undefined;
  /** The run the watchdog last saw on it: its work word and declared start, and when the owner first saw it. */
  seen: { work: number; start: number; at: number } | undefined;
}

export class EuPool {
  readonly names: string[] = [];
  private readonly units: Unit[] = [];
  private readonly view: DataView;
  private watchdog: NodeJS.Timeout | undefined;
  private fatalReason: string | undefined;
  /** The first failure a unit reported (its DPA code threw, its application did not load). */
  private reported: string | undefined;
  private stopped = false;
  private nextLiveness = 0;

  constructor(private readonly options: EuPoolOptions) {
    this.view = new DataView(options.segment.u8.buffer);
  }

  /** Starts every EU and waits until each has loaded the application; throws (and cleans up) otherwise. */
  start(call: string): void {
    const eus = this.options.layout.dims.eus;
    const limit = startTimeoutMs();
    for (let index = 0; index < eus; index++) {
      const { port1, port2 } = new MessageChannel();
      const data: EuData = { dpa: this.options.segment.descriptor, heap: this.options.heap, maps: this.options.maps, stats: this.options.stats, eu: index, app: this.options.app, dev: this.options.dev, heapBase: this.options.heapBase, port: port2 };
      const worker = new Worker(WORKER, { workerData: { softdpuEu: data }, transferList: [port2] });
      worker.unref();
      const unit: Unit = { index, worker, port: port1, exited: new Promise((resolve) => worker.once('exit', resolve)), thread: undefined, ended: undefined, seen: undefined };
      worker.on('error', (err) => this.ended(unit, `failed: ${err.message}`));
      worker.once('exit', (code) => this.ended(unit, `exited with code ${code}`));
      this.units.push(unit);
    }
    const up = () => {
      this.drain();
      return this.reported !== undefined || Atomics.load(this.options.segment.i32, H.EUS_UP / 4) === eus;
    };
    const loaded = this.options.bell.waitSync(up, limit, SLICE_MS, () => {});
    // An EU posts its 'ready' (with the function names) before it counts itself up: the last count may
    // have been seen after the last look at the ports, so look once more.
    this.drain();
    const failure = loaded ? this.reported : `the execution units did not load ${this.options.app} within ${limit} ms`;
    if (failure !== undefined) {
      this.stop();
      throw new DocaError('INITIALIZATION', call, `cannot run the DPA application: ${failure}`);
    }
    Atomics.store(this.options.segment.i32, H.STATE / 4, DpaState.RUNNING);
    for (const unit of this.units) {
      unit.port.on('message', (m: EuMessage) => {
        this.take(unit, m);
        this.check();
      });
      unit.port.unref();
    }
    const cadence = Math.min(1000, Math.max(10, this.options.maxRunMs / 4));
    this.watchdog = setInterval(() => this.check(), cadence);
    this.watchdog.unref();
    running.add(this);
    if (!exitHook) {
      exitHook = true;
      process.once('exit', stopAllAtExit);
    }
  }

  /** The thread is exiting with this pool running: asks every EU to leave at once, waiting for nothing. */
  abandon(): void {
    if (this.stopped) return;
    const i32 = this.options.segment.i32;
    if (Atomics.load(i32, H.STATE / 4) !== DpaState.FATAL) Atomics.store(i32, H.STATE / 4, DpaState.STOPPING);
    this.ringAll();
  }

  /**
   * Why the DPA is fatal, if it is. Looks at everything a unit can tell (its port, the state word, its
   * thread), and runs the watchdog: for blocking waits and for every call that needs the DPA.
   */
  check(): string | undefined {
    if (this.fatalReason !== undefined || this.stopped) return this.fatalReason;
    // The ports and the units' threads are looked at every LIVENESS_MS (the loop's message events
    // deliver in between), and at once when a unit says the DPA is fatal.
    const fatalWord = Atomics.load(this.options.segment.i32, H.STATE / 4) === DpaState.FATAL;
    const now = performance.now();
    if (fatalWord || now >= this.nextLiveness) {
      this.nextLiveness = now + LIVENESS_MS;
      this.drain();
      for (const unit of this.units) if (unit.ended === undefined && unit.thread && !isAlive(unit.thread)) unit.ended = 'ended without a word (its thread is gone)';
    }
    if (this.reported !== undefined || fatalWord) {
      this.fatal(this.reported ?? 'DPA code failed (see the log)');
      return this.fatalReason;
    }
    const dead = this.units.find((unit) => unit.ended !== undefined);
    return dead ? this.crash(dead) : this.overrun();
  }

  /** The DPA failed in a way its owner found (its shared tables say what cannot be): it enters its fatal state. */
  fail(reason: string): void {
    this.fatal(reason);
  }

  /** Blocks (bounded) until `done()`, the watchdog running between slices; the fatal reason if the DPA died. */
  waitSync(done: () => boolean, timeoutMs: number): boolean {
    return this.options.bell.waitSync(() => done() || this.check() !== undefined, timeoutMs, SLICE_MS, () => this.check());
  }

  /** Asks every EU to leave (the caller set the state), waits a bounded time, then terminates the workers. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    running.delete(this);
    clearInterval(this.watchdog);
    const i32 = this.options.segment.i32;
    if (Atomics.load(i32, H.STATE / 4) !== DpaState.FATAL) Atomics.store(i32, H.STATE / 4, DpaState.STOPPING);
    this.ringAll();
    // A fatal DPA's stuck units never leave by themselves: terminating them is what stops them. Nor do
    // units that are gone, or that run a thread destroyed after its stop timed out: no wait for those.
    const grace = this.fatalReason === undefined ? STOP_GRACE_MS : FATAL_GRACE_MS;
    const done = () => {
      this.drain();
      return Atomics.load(i32, H.EUS_UP / 4) <= 0 || this.units.every((unit) => this.left(unit) || unit.ended !== undefined || (unit.thread !== undefined && !isAlive(unit.thread)) || this.stuck(unit));
    };
    this.options.bell.waitSync(done, grace, SLICE_MS, () => this.ringAll());
    for (const unit of this.units) {
      // An EU that left closes its segments and exits by itself; one that did not is stuck (in DPA code
      // that never returns), dead, or never came up: terminating it is what stops it. A terminated worker
      // leaks nothing: the addon closes the fds and unmaps the segments its thread still held.
      if (!this.left(unit)) void unit.worker.terminate();
      else setTimeout(() => void unit.worker.terminate(), EXIT_GRACE_MS).unref();
      unit.port.close();
    }
  }

  /** Resolves once every worker thread has exited (keeping the event loop alive until then). */
  exited(): Promise<void> {
    for (const unit of this.units) unit.worker.ref(); // unreferenced while running; waiting for the exit must hold the loop
    return Promise.all(this.units.map((unit) => unit.exited)).then(() => {});
  }

  /** Whether unit `unit` runs a DPA thread that was destroyed (its stop timed out): it does not come back. */
  private stuck(unit: Unit): boolean {
    const work = Atomics.load(this.options.segment.i32, (this.options.layout.eu(unit.index) + EU.RUNNING) / 4);
    const index = work & 0xffffff;
    return work >>> 24 === WorkKind.THREAD && index < this.options.layout.dims.objects && Atomics.load(this.options.segment.i32, (this.options.layout.object(index) + OBJ.STATE) / 4) === ObjState.FREE;
  }

  /** Whether unit `unit` said it let go of everything (its word; a wrong one only delays its termination). */
  private left(unit: Unit): boolean {
    return Atomics.load(this.options.segment.i32, (this.options.layout.eu(unit.index) + EU.LEFT) / 4) === 1;
  }

  private ringAll(): void {
    for (let e = 0; e < this.options.layout.dims.eus; e++) this.options.sched.ringEu(e, BIT_READY);
  }

  /** A worker event said unit `unit` ended: while the DPA runs, that is a crash of the DPA. */
  private ended(unit: Unit, cause: string): void {
    unit.ended ??= cause;
    this.check();
  }

  /** Unit `unit` ended while the DPA ran: the DPA is fatal, naming it, why and what it ran. */
  private crash(unit: Unit): string | undefined {
    const i32 = this.options.segment.i32;
    // Nobody is to ring a unit that is gone as if it slept, nor count on it as looking for work.
    Atomics.and(i32, H.IDLE / 4, ~(1 << unit.index));
    Atomics.and(i32, H.LOOKING / 4, ~(1 << unit.index));
    const work = Atomics.load(i32, (this.options.layout.eu(unit.index) + EU.RUNNING) / 4);
    this.fatal(`worker of execution unit ${unit.index} ${unit.ended}${describeWork(work)}`);
    return this.fatalReason;
  }

  /** The watchdog: the first kernel instance or RPC call past the kernel max run time makes the DPA fatal. */
  private overrun(): string | undefined {
    const i32 = this.options.segment.i32;
    const now = performance.timeOrigin + performance.now();
    for (const unit of this.units) {
      const at = this.options.layout.eu(unit.index);
      const work = Atomics.load(i32, (at + EU.RUNNING) / 4);
      const kind = work >>> 24;
      if (kind !== WorkKind.LAUNCH && kind !== WorkKind.RPC) {
        unit.seen = undefined;
        continue;
      }
      const start = this.view.getFloat64(at + EU.RUN_START, true);
      if (!unit.seen || unit.seen.work !== work || !Object.is(unit.seen.start, start)) unit.seen = { work, start, at: now };
      // The unit's word for when the run began, if it can be true; else when the owner first saw the run.
      const began = Number.isFinite(start) && start <= now ? Math.min(start, unit.seen.at) : unit.seen.at;
      const ms = now - began;
      if (ms > this.options.maxRunMs) {
        this.fatal(`${kind === WorkKind.LAUNCH ? 'a kernel' : 'an RPC'} ran ${Math.round(ms)} ms on execution unit ${unit.index}, past the kernel max run time of ${this.options.maxRunMs} ms`);
        break;
      }
    }
    return this.fatalReason;
  }

  private fatal(reason: string): void {
    // After a stop the segment is gone, and a worker failing as it is terminated is no news.
    if (this.fatalReason !== undefined || this.stopped) return;
    this.fatalReason = reason;
    Atomics.store(this.options.segment.i32, H.STATE / 4, DpaState.FATAL);
    this.stop();
    this.options.onFatal(reason);
  }

  /** Takes the messages waiting on the ports (read here while the owner's thread blocks, from its loop otherwise). */
  private drain(): void {
    for (const unit of this.units) {
      for (let m = receiveMessageOnPort(unit.port); m; m = receiveMessageOnPort(unit.port)) this.take(unit, m.message as EuMessage);
    }
  }

  /** One message of unit `unit`: what it reports is kept (the first failure is the DPA's reason). */
  private take(unit: Unit, msg: EuMessage): void {
    switch (msg.type) {
      case 'ready':
        if (this.names.length === 0) this.names.push(...msg.names);
        unit.thread = msg.thread;
        return;
      case 'log':
        return this.options.onLog(msg.level, msg.text);
      case 'exit':
        unit.ended ??= `exited with code ${msg.code}`;
        return;
      case 'fatal':
        if (msg.stack) this.options.onLog(30, `DPA code failed: ${msg.stack}`);
        this.reported ??= msg.message;
        return;
      case 'error':
        this.reported ??= msg.message;
        return;
    }
  }
}

/** " while running ..." for a unit's work word (the EU table's RUNNING; only ever part of a message). */
function describeWork(work: number): string {
  const index = work & 0xffffff;
  switch (work >>> 24) {
    case WorkKind.THREAD:
      return ` while running DPA thread ${index}`;
    case WorkKind.LAUNCH:
      return ` while running a kernel (launch slot ${index})`;
    case WorkKind.RPC:
      return ' while running an RPC';
    default:
      return '';
  }
}
