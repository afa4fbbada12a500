/**
 * A started DPA's execution units: worker threads of the owner's process (eu-worker.ts), started with
 * the DPA and ended with it (or with the process). Starting waits, bounded, until every EU has loaded
 * the application; stopping rings every EU, waits (bounded) until each has left its loop, then
 * terminates the workers that did not (which interrupts one stuck in DPA code); the others exit by
 * themselves.
 *
 * The watchdog: a kernel instance or RPC call that runs past the kernel max run time makes the DPA
 * fatal. It is checked from an unreferenced timer and from every blocking wait of the owner, so that
 * it fires even while the owner's thread waits for that very call.
 */
import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from 'node:worker_threads';
import { DocaError } from '../core/error.js';
import type { SegmentDescriptor } from '../fabric/segment.js';
import type { EuData, EuMessage } from './eu-worker.js';
import { BIT_READY, type DpaLayout, DpaState, EU, H, WorkKind } from './layout.js';
import type { OwnerBell } from './owner-bell.js';
import type { Scheduler } from './scheduler.js';

const WORKER = new URL('./eu-boot.js', import.meta.url);
/** How long `start` waits for the execution units to load the application. */
const START_TIMEOUT_MS = 30_000;
/** How long `stop` waits for execution units to leave their loops before it terminates them. */
const STOP_GRACE_MS = 2000;
/** How long an EU that left its loop gets to exit by itself before it is terminated anyway. */
const EXIT_GRACE_MS = 2000;
/** How long a fatal DPA's healthy units get to leave before all are terminated. */
const FATAL_GRACE_MS = 100;
/** Longest sleep of a blocking wait between two looks at the watchdog. */
const SLICE_MS = 50;

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

export class EuPool {
  readonly names: string[] = [];
  private readonly workers: Worker[] = [];
  private readonly ports: MessagePort[] = [];
  private readonly exits: Promise<unknown>[] = [];
  private readonly view: DataView;
  private watchdog: NodeJS.Timeout | undefined;
  private fatalReason: string | undefined;
  private stopped = false;

  constructor(private readonly o: EuPoolOptions) {
    this.view = new DataView(o.segment.u8.buffer);
  }

  /** Starts every EU and waits until each has loaded the application; throws (and cleans up) otherwise. */
  start(call: string): void {
    const eus = this.o.layout.dims.eus;
    for (let eu = 0; eu < eus; eu++) {
      const { port1, port2 } = new MessageChannel();
      const data: EuData = { dpa: this.o.segment.descriptor, heap: this.o.heap, maps: this.o.maps, stats: this.o.stats, eu, app: this.o.app, dev: this.o.dev, heapBase: this.o.heapBase, port: port2 };
      const worker = new Worker(WORKER, { workerData: { softdpuEu: data }, transferList: [port2] });
      worker.unref();
      worker.on('error', (err) => this.fatal(`execution unit ${eu} failed: ${err.message}`));
      this.exits.push(new Promise((resolve) => worker.once('exit', resolve)));
      this.workers.push(worker);
      this.ports.push(port1);
    }
    let failure: string | undefined;
    const up = () => {
      failure ??= this.drain();
      return failure !== undefined || Atomics.load(this.o.segment.i32, H.EUS_UP / 4) === eus;
    };
    if (!this.o.bell.waitSync(up, START_TIMEOUT_MS, SLICE_MS, () => {})) failure = `the execution units did not load ${this.o.app} within ${START_TIMEOUT_MS} ms`;
    // An EU posts its 'ready' (with the function names) before it counts itself up: the last count may
    // have been seen after the last look at the ports, so look once more.
    failure ??= this.drain();
    if (failure !== undefined) {
      this.stop();
      throw new DocaError('INITIALIZATION', call, `cannot run the DPA application: ${failure}`);
    }
    Atomics.store(this.o.segment.i32, H.STATE / 4, DpaState.RUNNING);
    for (const port of this.ports) {
      port.on('message', (m: EuMessage) => this.onMessage(m));
      port.unref();
    }
    const cadence = Math.min(1000, Math.max(10, this.o.maxRunMs / 4));
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
    const i32 = this.o.segment.i32;
    if (Atomics.load(i32, H.STATE / 4) !== DpaState.FATAL) Atomics.store(i32, H.STATE / 4, DpaState.STOPPING);
    this.ringAll();
  }

  /** Why the DPA is fatal, if it is; also runs the watchdog (for blocking waits). */
  check(): string | undefined {
    if (this.fatalReason !== undefined || this.stopped) return this.fatalReason;
    const i32 = this.o.segment.i32;
    if (Atomics.load(i32, H.STATE / 4) === DpaState.FATAL) {
      this.fatal(this.drain() ?? 'DPA code failed (see the log)');
      return this.fatalReason;
    }
    const now = performance.timeOrigin + performance.now();
    for (let eu = 0; eu < this.o.layout.dims.eus; eu++) {
      const at = this.o.layout.eu(eu);
      const running = Atomics.load(i32, (at + EU.RUNNING) / 4);
      const kind = running >>> 24;
      if (kind !== WorkKind.LAUNCH && kind !== WorkKind.RPC) continue;
      const ms = now - this.view.getFloat64(at + EU.RUN_START, true);
      if (ms > this.o.maxRunMs) {
        this.fatal(`${kind === WorkKind.LAUNCH ? 'a kernel' : 'an RPC'} ran ${Math.round(ms)} ms on execution unit ${eu}, past the kernel max run time of ${this.o.maxRunMs} ms`);
        break;
      }
    }
    return this.fatalReason;
  }

  /** Blocks (bounded) until `done()`, the watchdog running between slices; the fatal reason if the DPA died. */
  waitSync(done: () => boolean, timeoutMs: number): boolean {
    return this.o.bell.waitSync(() => done() || this.check() !== undefined, timeoutMs, SLICE_MS, () => this.check());
  }

  /** Asks every EU to leave (the caller set the state), waits a bounded time, then terminates the workers. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    running.delete(this);
    clearInterval(this.watchdog);
    const i32 = this.o.segment.i32;
    if (Atomics.load(i32, H.STATE / 4) !== DpaState.FATAL) Atomics.store(i32, H.STATE / 4, DpaState.STOPPING);
    this.ringAll();
    // A fatal DPA's stuck units never leave by themselves: terminating them is what stops them.
    const grace = this.fatalReason === undefined ? STOP_GRACE_MS : FATAL_GRACE_MS;
    this.o.bell.waitSync(() => Atomics.load(i32, H.EUS_UP / 4) <= 0, grace, SLICE_MS, () => this.ringAll());
    this.workers.forEach((w, eu) => {
      // An EU that left closes its segments and exits by itself (terminated, it would leak what it still
      // holds); one that did not is stuck, or never came up: terminating it is what stops it.
      if (Atomics.load(i32, (this.o.layout.eu(eu) + EU.LEFT) / 4) !== 1) void w.terminate();
      else setTimeout(() => void w.terminate(), EXIT_GRACE_MS).unref();
    });
    for (const p of this.ports) p.close();
  }

  /** Resolves once every worker thread has exited (keeping the event loop alive until then). */
  exited(): Promise<void> {
    for (const w of this.workers) w.ref(); // unreferenced while running; waiting for the exit must hold the loop
    return Promise.all(this.exits).then(() => {});
  }

  private ringAll(): void {
    for (let e = 0; e < this.o.layout.dims.eus; e++) this.o.sched.ringEu(e, BIT_READY);
  }

  private fatal(reason: string): void {
    // After a stop the segment is gone, and a worker failing as it is terminated is no news.
    if (this.fatalReason !== undefined || this.stopped) return;
    this.fatalReason = reason;
    Atomics.store(this.o.segment.i32, H.STATE / 4, DpaState.FATAL);
    this.stop();
    this.o.onFatal(reason);
  }

  /** Takes the messages waiting on the ports: the names of the functions, and any failure. */
  private drain(): string | undefined {
    let failure: string | undefined;
    for (const port of this.ports) {
      for (let m = receiveMessageOnPort(port); m; m = receiveMessageOnPort(port)) {
        const msg = m.message as EuMessage;
        if (msg.type === 'ready' && this.names.length === 0) this.names.push(...msg.names);
        else if (msg.type === 'error' || msg.type === 'fatal') {
          if (msg.type === 'fatal' && msg.stack) this.o.onLog(30, `DPA code failed: ${msg.stack}`);
          failure ??= msg.message;
        }
        else if (msg.type === 'log') this.o.onLog(msg.level, msg.text);
      }
    }
    return failure;
  }

  private onMessage(m: EuMessage): void {
    if (m.type === 'log') this.o.onLog(m.level, m.text);
    else if (m.type === 'fatal') {
      if (m.stack) this.o.onLog(30, `DPA code failed: ${m.stack}`);
      this.fatal(m.message);
    }
  }
}
