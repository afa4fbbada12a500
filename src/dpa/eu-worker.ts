/**
 * An execution unit: the main loop of one of a DPA's worker threads. It imports the DPA application
 * once, then takes work from the ready bitmaps (layout.ts) and runs it to completion, one unit at a
 * time: an RPC call, a kernel instance, or one activation of a DPA thread. With nothing ready it sleeps
 * on its own doorbell, arming it first and looking at the ready count once more (scheduler.ts explains
 * why no activation is lost), blocked in poll(2) on the bell's pipe: no spinning, no timer.
 *
 * The loop is synchronous: DPA code runs here as on the DPA, to completion, and the worker's event loop
 * turns only once the DPA stops. What the EU tells its owner goes through its port (ready with its OS
 * thread, a load error, device log lines, a fatal error; its exit code from eu-boot.ts) and the owner's
 * bell; eu-pool.ts is where all of it is read.
 */
import type { MessagePort } from 'node:worker_threads';
import { DpaMapReader } from '../core/dpa-maps.js';
import { BellState, Bell, publishBellRef } from '../fabric/doorbell.js';
import { livenessTick, selfThread, type ThreadIdentity } from '../fabric/liveness.js';
import { Segment, type SegmentDescriptor } from '../fabric/segment.js';
import { Counter, counterOffset, STATS_SLOTS } from '../fabric/stats.js';
import { native } from '../native/load.js';
import { WaitResult } from '../native/native.js';
import { setActivationTimer } from './cq.js';
import { closeComch, consumerRang, pollConsumers, sweepImm } from './dev/comch-msgq.js';
import { type Eu, installEu, Unwind, type Work } from './dev/runtime.js';
import { DpaEvents } from './events.js';
import { checkAll } from './gated.js';
import { BIT_CONSUMER, BIT_EVENT, CompOp, DpaState, EU, H, LAUNCH, LaunchState, OBJ, ObjKind, readDpaLayout, RPC, RpcState, WorkKind } from './layout.js';
import { THREAD, ThreadState } from './objects.js';
import { DpaTables } from './tables.js';

/** What the owner passes each EU (eu-pool.ts). */
export interface EuData {
  dpa: SegmentDescriptor;
  heap: SegmentDescriptor;
  maps: SegmentDescriptor;
  eu: number;
  app: string;
  dev: string;
  heapBase: bigint;
  port: MessagePort;
  /** The owner's stats segment (fabric/stats.ts), where this EU counts the activations it runs. */
  stats?: SegmentDescriptor | undefined;
}

/** Messages an EU posts to its owner. */
export type EuMessage =
  | { type: 'ready'; names: string[]; thread: ThreadIdentity }
  | { type: 'exit'; code: number }
  | { type: 'error'; message: string }
  | { type: 'log'; level: number; text: string }
  | { type: 'fatal'; message: string; stack?: string };

/** How long an EU sleeps before it looks at the DPA's state again (a stop rings it anyway). */
const SLEEP_SLICE_MS = 1000;
/**
 * Looks at the ready count an EU makes after a run before it sleeps, LOOKING set, and how often it
 * harvests its bell meanwhile (every LOOK_HARVEST rounds: a bell of a DPA with 4096 objects is 129 words
 * to read). Work made ready in that time (the next launch of a loop, the next activation of a thread that
 * answers messages) is taken without a wake-up: no pipe write by the one who made it ready, no thread for
 * the kernel to schedule (on a loaded machine, what a launch's p99 was: 44x its p50). Rounds, not time: a
 * clock read allocates (32 B on Node 20). A whole look took 130-145 us here.
 */
const LOOK_ROUNDS = 4096;
const LOOK_HARVEST = 32;

const now = () => performance.timeOrigin + performance.now();

class Unit {
  private readonly bell: Bell;
  private readonly me: number;
  private fns: ((...args: bigint[]) => unknown)[] = [];
  private cursor = 0;
  private category = 0;
  private everArmed = false;
  private readonly args: bigint[] = [];

  constructor(
    private readonly eu: Eu,
    private readonly port: MessagePort,
    /** The owner's stats segment as f64s: a DPA thread's record counts its runs (objects.ts THREAD.STATS). */
    private readonly stats: Float64Array | undefined,
  ) {
    this.me = 1 << eu.index;
    // Bits: ready work, events, then one per object (a consumer's queue filled); Bell hands out in order.
    this.bell = new Bell(Math.ceil((BIT_CONSUMER + eu.dpa.layout.dims.objects) / 32) * 32);
    for (let bit = 0; bit < this.bell.capacity; bit++) this.bell.allocate('doca_dpa_start');
    publishBellRef(eu.dpa.segment, eu.dpa.layout.eu(eu.index) + EU.BELL, this.bell.ref(0));
  }

  async load(url: string): Promise<boolean> {
    let app: Record<string, unknown>;
    try {
      app = (await import(url)) as Record<string, unknown>;
    } catch (err) {
      this.port.postMessage({ type: 'error', message: describe(err) } satisfies EuMessage);
      this.eu.dpa.sched.ringOwner();
      return false;
    }
    const names = Object.keys(app).filter((k) => typeof app[k] === 'function').sort();
    this.fns = names.map((k) => app[k] as (...args: bigint[]) => unknown);
    this.port.postMessage({ type: 'ready', names, thread: selfThread } satisfies EuMessage);
    Atomics.add(this.eu.dpa.i32, H.EUS_UP / 4, 1);
    this.eu.dpa.sched.ringOwner();
    return true;
  }

  loop(): void {
    const i32 = this.eu.dpa.i32;
    // Activations a fault plan delays (dpa/cq.ts) wait here: this loop never yields to the event loop's timers.
    setActivationTimer((deliver, ms) => this.later.push({ due: performance.now() + ms, deliver }));
    // STARTING: the other EUs are still loading; there is no work yet, but there will be.
    for (let s = Atomics.load(i32, H.STATE / 4); s === DpaState.RUNNING || s === DpaState.STARTING; s = Atomics.load(i32, H.STATE / 4)) {
      // The thread's cadence (fabric/liveness.ts), which timers would run if this loop yielded: the fault
      // plan is re-read on it, so a `softdpu fault add` reaches running execution units too.
      livenessTick();
      if (this.later.length) this.runDue();
      // The ready count is a hint (the bitmaps are the truth), and other threads write it: the unit scans
      // before every sleep whatever it says, and sleeps unless the count moved since the scan began.
      const ready = Atomics.load(i32, H.READY / 4);
      if (this.takeAndRun()) {
        this.lookAfterWork();
        continue;
      }
      this.sleep(ready);
    }
  }

  /**
   * After a run: LOOK_ROUNDS looks at the ready count with this EU's LOOKING bit set (ringers then wake
   * nobody: scheduler.ts wakeOne), harvesting the bell every LOOK_HARVEST (a filled consumer or a changed
   * event makes a thread ready). Ends at the first ready work (loop() takes it, or sleeps if another EU did)
   * or when the DPA leaves RUNNING. The bit is cleared before the ready count is read again, so work
   * whose maker saw it set is found by that read.
   */
  private lookAfterWork(): void {
    const i32 = this.eu.dpa.i32;
    Atomics.or(i32, H.LOOKING / 4, this.me);
    for (let r = 1; r <= LOOK_ROUNDS; r++) {
      if (Atomics.load(i32, H.READY / 4) !== 0 || Atomics.load(i32, H.STATE / 4) !== DpaState.RUNNING) break;
      if (r % LOOK_HARVEST === 0) this.bell.harvest(this.onBit);
    }
    Atomics.and(i32, H.LOOKING / 4, ~this.me);
  }

  /** Delayed activations, in the order they were delayed. */
  private readonly later: { due: number; deliver: () => void }[] = [];

  private runDue(): void {
    const now = performance.now();
    for (let i = 0; i < this.later.length; ) {
      if (this.later[i]!.due > now) {
        i++;
        continue;
      }
      this.later.splice(i, 1)[0]!.deliver();
    }
  }

  /** How long the EU may sleep: until the next delayed activation is due, at most a slice. */
  private sleepMs(): number {
    let ms = SLEEP_SLICE_MS;
    for (const l of this.later) ms = Math.min(ms, Math.max(0, l.due - performance.now()));
    return ms;
  }

  close(): void {
    closeComch(this.eu);
    this.bell.close();
    this.eu.events.close();
    this.eu.maps.close();
    // The owner terminates only the EUs that have not left: one terminated while it still holds a
    // peer's bell would leak that bell's fd (fds belong to the process, not to the worker).
    const i32 = this.eu.dpa.i32;
    Atomics.store(i32, (this.eu.dpa.layout.eu(this.eu.index) + EU.LEFT) / 4, 1);
    Atomics.sub(i32, H.EUS_UP / 4, 1);
    this.eu.dpa.sched.ringOwner();
    this.eu.dpa.sched.close();
  }

  /**
   * Arms the bell and sleeps unless something is ready (the ready count is neither 0 nor `scanned`, the
   * count a fruitless scan just began with); then handles what rang.
   */
  private sleep(scanned: number): void {
    const i32 = this.eu.dpa.i32;
    Atomics.or(i32, H.IDLE / 4, this.me);
    let rung = this.bell.arm();
    if (!this.everArmed) {
      // Ringers skipped us while the bell was in POLL: look at everything once, now that it is armed.
      this.everArmed = true;
      this.lookEverywhere();
      rung = true;
    }
    const state = Atomics.load(i32, H.STATE / 4);
    let slept = false;
    const ready = Atomics.load(i32, H.READY / 4);
    if (!rung && (ready === 0 || ready === scanned) && (state === DpaState.RUNNING || state === DpaState.STARTING)) {
      slept = native.fdPoll(this.bell.readFd, this.sleepMs()) === WaitResult.TimedOut;
    }
    if (this.bell.disarm() === BellState.RUNG) this.bell.drain();
    Atomics.and(i32, H.IDLE / 4, ~this.me);
    this.bell.harvest(this.onBit);
    // A whole slice with nothing rung: look at the consumers once, for what no bell announces (a receive
    // claimed by a producer that died before it filled it, which only a look finds).
    if (slept) this.sweep(() => pollConsumers(this.eu));
  }

  private readonly onBit = (bit: number): void => {
    if (bit === BIT_EVENT) this.sweep(() => checkAll(this.eu.dpa, this.eu.events));
    else if (bit >= BIT_CONSUMER) this.sweep(() => consumerRang(this.eu, bit - BIT_CONSUMER));
  };

  private lookEverywhere(): void {
    this.sweep(() => checkAll(this.eu.dpa, this.eu.events));
    this.sweep(() => pollConsumers(this.eu));
  }

  /**
   * Runs a look of the EU's own (not DPA code) at the shared tables. Each object it looks at is checked
   * and a bad one is passed over; should anything still throw, it is logged, never the end of the unit.
   */
  private sweep(look: () => void): void {
    try {
      look();
    } catch (err) {
      this.eu.log(30, `execution unit ${this.eu.index}: ${describe(err)}`);
    }
  }

  /** Takes one unit of ready work and runs it; false if none could be taken. */
  private takeAndRun(): boolean {
    const layout = this.eu.dpa.layout;
    this.category = (this.category + 1) % 3;
    for (let k = 0; k < 3; k++) {
      const c = (this.category + k) % 3;
      if (c === 0 && this.scan(layout.rpcBits, layout.dims.rpcs, this.runRpcAt)) return true;
      if (c === 1 && this.scan(layout.launchBits, layout.dims.launches, this.runLaunchAt)) return true;
      if (c === 2 && this.scan(layout.objectBits, layout.dims.objects, this.runThreadAt)) return true;
    }
    return false;
  }

  // Made once: a closure per look would be garbage per activation.
  private readonly runRpcAt = (slot: number): boolean => this.runRpc(slot);
  private readonly runLaunchAt = (slot: number): boolean => this.runLaunch(slot);
  private readonly runThreadAt = (index: number): boolean => this.runThread(index);
  /** The work of a thread's run, reused (one run at a time on a unit); its u64 words as last read, by thread. */
  /** What the last run returned (an RPC's result). */
  private value: unknown;
  private readonly threadWork: Work = { kind: WorkKind.THREAD, index: 0, rank: 0, threads: 1, local: 0n, finished: false };
  private readonly words = new Map<number, { lo: number; hi: number; value: bigint }>();

  /**
   * The u64 at byte `at` of the DPA segment as a bigint, the same object while its value stays (a
   * thread's argument and local storage are read at each activation; a fresh BigInt each time is garbage).
   */
  private u64At(at: number): bigint {
    const v = this.eu.dpa.view;
    const lo = v.getUint32(at, true);
    const hi = v.getUint32(at + 4, true);
    const known = this.words.get(at);
    if (known !== undefined && known.lo === lo && known.hi === hi) return known.value;
    const value = (BigInt(hi) << 32n) | BigInt(lo);
    if (this.words.size >= 4096) this.words.clear();
    this.words.set(at, { lo, hi, value });
    return value;
  }

  /** Finds a set bit of the bitmap at `base` (from a rotating word) and runs it; true if one ran. */
  private scan(base: number, bits: number, run: (index: number) => boolean): boolean {
    const i32 = this.eu.dpa.i32;
    const words = Math.ceil(bits / 32);
    for (let k = 0; k < words; k++) {
      const w = (this.cursor + k) % words;
      let v = Atomics.load(i32, base / 4 + w);
      while (v !== 0) {
        const low = v & -v;
        v ^= low;
        if (run(w * 32 + 31 - Math.clz32(low))) {
          this.cursor = w;
          return true;
        }
      }
    }
    return false;
  }

  private runRpc(slot: number): boolean {
    const dpa = this.eu.dpa;
    if (!dpa.sched.take(dpa.layout.rpcBits, slot)) return false;
    const base = dpa.layout.rpc(slot);
    if (Atomics.compareExchange(dpa.i32, (base + RPC.STATE) / 4, RpcState.READY, RpcState.RUNNING) !== RpcState.READY) return false;
    const fn = this.fn(dpa.view.getUint32(base + RPC.FUNC, true));
    const args = this.readArgs(base + RPC.ARGS, dpa.view.getUint32(base + RPC.NARGS, true));
    if (this.run({ kind: WorkKind.RPC, index: slot, rank: 0, threads: 1, local: 0n, finished: false }, fn, args)) {
      const value = toU64(this.value);
      this.value = undefined;
      if (value === undefined) {
        Atomics.store(dpa.i32, (base + RPC.STATE) / 4, RpcState.FAILED);
      } else {
        dpa.view.setBigUint64(base + RPC.RESULT, value, true);
        Atomics.store(dpa.i32, (base + RPC.STATE) / 4, RpcState.DONE);
      }
      dpa.sched.ringOwner();
    } // else fatal: the owner fails the call
    this.idle();
    return true;
  }

  /**
   * Runs the next instance of the launch in `slot`. The slot's ready bit is a token: the EU that takes
   * it takes the next rank and, if ranks remain, sets the bit again for another EU. Only the bit's taker
   * reads the slot, so a look is never stale: the slot cannot be freed and refilled while its bit is
   * set or taken (its last rank is not taken yet). Clearing the bit after a look instead (as before) could
   * clear the bit of the slot's next launch, published between the look and the clear: that launch was
   * READY with no bit, and never ran.
   */
  private runLaunch(slot: number): boolean {
    const dpa = this.eu.dpa;
    if (!dpa.sched.take(dpa.layout.launchBits, slot)) return false;
    const base = dpa.layout.launch(slot);
    const i32 = dpa.i32;
    const generation = Atomics.load(i32, (base + LAUNCH.GEN) / 4);
    const threads = dpa.view.getUint32(base + LAUNCH.THREADS, true);
    const ticket = Atomics.load(i32, (base + LAUNCH.NEXT_RANK) / 4);
    const rank = ticket & 0xffff;
    // A bit for a slot that is not READY, or whose ranks are all taken, is no work (the words are the
    // owner's, but an EU writes the ticket: checked, never trusted to index anything).
    if (Atomics.load(i32, (base + LAUNCH.STATE) / 4) !== LaunchState.READY || ticket >>> 16 !== (generation & 0xffff) || rank >= threads) return false;
    if (Atomics.compareExchange(i32, (base + LAUNCH.NEXT_RANK) / 4, ticket, ticket + 1) !== ticket) return false; // only the token's holder moves it
    if (rank + 1 < threads) dpa.sched.ready(dpa.layout.launchBits, slot); // run() passes the wake-up on
    const fn = this.fn(dpa.view.getUint32(base + LAUNCH.FUNC, true));
    const args = this.readArgs(base + LAUNCH.ARGS, dpa.view.getUint32(base + LAUNCH.NARGS, true));
    if (this.run({ kind: WorkKind.LAUNCH, index: slot, rank, threads, local: 0n, finished: false }, fn, args) && Atomics.add(i32, (base + LAUNCH.FINISHED) / 4, 1) + 1 === threads) this.finishLaunch(slot);
    this.idle();
    return true;
  }

  /** The last instance of a kernel finished: set or add on the completion event, free the slot. */
  private finishLaunch(slot: number): void {
    const dpa = this.eu.dpa;
    const base = dpa.layout.launch(slot);
    const op = dpa.view.getUint32(base + LAUNCH.COMP_OP, true);
    const event = dpa.view.getInt32(base + LAUNCH.COMP_EVENT, true);
    if (op !== CompOp.NONE && dpa.live(event, dpa.view.getInt32(base + LAUNCH.COMP_GEN, true))) {
      const count = dpa.view.getBigUint64(base + LAUNCH.COMP_COUNT, true);
      try {
        if (op === CompOp.SET) this.eu.events.set(event, count, 'doca_dpa_kernel_launch_update_set');
        else this.eu.events.add(event, count, 'doca_dpa_kernel_launch_update_add');
      } catch (err) {
        this.eu.log(30, `kernel launch ${slot}: cannot update its completion event: ${(err as Error).message}`);
      }
    }
    Atomics.store(dpa.i32, (base + LAUNCH.STATE) / 4, LaunchState.FREE);
  }

  private runThread(index: number): boolean {
    const dpa = this.eu.dpa;
    if (!dpa.sched.take(dpa.layout.objectBits, index)) return false;
    const at = dpa.at(index, OBJ.STATE) / 4;
    if (dpa.u32(index, OBJ.KIND) !== ObjKind.THREAD) return false; // a bit set for what is no thread
    if (Atomics.compareExchange(dpa.i32, at, ThreadState.QUEUED, ThreadState.RUNNING) !== ThreadState.QUEUED) return false;
    // One run of a thread at a time, ordered by its state word: its record has one writer at a time.
    const stat = dpa.u32(index, THREAD.STATS);
    if (stat !== 0 && stat <= STATS_SLOTS && this.stats) this.stats[counterOffset(stat - 1, Counter.DPA_THREAD.ACTIVATIONS) / 8]!++;
    const fn = this.fn(dpa.u32(index, THREAD.FUNC));
    const work = this.threadWork;
    work.index = index;
    work.local = this.u64At(dpa.at(index, THREAD.LOCAL));
    work.finished = false;
    this.args.length = 1;
    this.args[0] = this.u64At(dpa.at(index, THREAD.ARG));
    if (this.run(work, fn, this.args)) this.afterRun(index, work.finished);
    // Only now: the owner keeps a destroyed thread's entry from reuse while a unit still runs it (objects.ts).
    this.idle();
    return true;
  }

  /** A run of thread `index` ended: IDLE (or QUEUED again, FINISHED, STOPPED), by its state word. */
  private afterRun(index: number, finished: boolean): void {
    const dpa = this.eu.dpa;
    const at = dpa.at(index, OBJ.STATE) / 4;
    for (;;) {
      const s = Atomics.load(dpa.i32, at);
      const next =
        s === ThreadState.RUNNING
          ? finished ? ThreadState.FINISHED : ThreadState.IDLE
          : s === ThreadState.RUNNING_AGAIN
            ? finished ? ThreadState.FINISHED : ThreadState.QUEUED
            : s === ThreadState.STOPPING ? ThreadState.STOPPED : -1;
      if (next < 0) return; // destroyed meanwhile (its stop timed out), or a state no run leaves
      if (Atomics.compareExchange(dpa.i32, at, s, next) !== s) continue;
      if (next === ThreadState.QUEUED) dpa.sched.ready(dpa.layout.objectBits, index);
      if (next === ThreadState.STOPPED) dpa.sched.ringOwner();
      return;
    }
  }

  /** The EU runs nothing (the EU table's word, which the watchdog and the owner's object table read). */
  private idle(): void {
    Atomics.store(this.eu.dpa.i32, (this.eu.dpa.layout.eu(this.eu.index) + EU.RUNNING) / 4, 0);
  }

  /**
   * Runs DPA code to completion with the EU table saying what runs since when (the owner's watchdog
   * reads it; the caller clears it with `idle()` once done with the work). Returns true once it ran, or
   * false when the run failed (the DPA then enters its fatal state). What it returned: `this.value`.
   */
  private run(work: Work, fn: ((...args: bigint[]) => unknown) | undefined, args: bigint[]): boolean {
    const dpa = this.eu.dpa;
    const entry = dpa.layout.eu(this.eu.index);
    if (!fn) {
      this.fatal('the owner asked for a function index the application does not have');
      return false;
    }
    dpa.view.setFloat64(entry + EU.RUN_START, now(), true);
    Atomics.store(dpa.i32, (entry + EU.RUNNING) / 4, (work.kind << 24) | work.index);
    this.eu.work = work;
    this.eu.runs++;
    // Work left behind (the other ranks of this kernel, work queued behind this run) must not wait for
    // this run: one activation woke one EU, so this EU passes the wake-up on to an idle one.
    if (Atomics.load(dpa.i32, H.READY / 4) !== 0) dpa.sched.wakeOne();
    dpa.sched.selfServing = false; // work this run makes must wake another EU: this one is busy
    this.value = undefined;
    try {
      this.value = fn(...args);
      return true;
    } catch (err) {
      if (err instanceof Unwind) return true;
      this.fatal(describe(err), (err as Error)?.stack);
      return false;
    } finally {
      this.eu.work = undefined;
      dpa.sched.selfServing = true;
      sweepImm(this.eu);
    }
  }

  private fn(index: number): ((...args: bigint[]) => unknown) | undefined {
    return this.fns[index];
  }

  private readArgs(at: number, n: number): bigint[] {
    const v = this.eu.dpa.view;
    const args = new Array<bigint>(Math.min(n, 16));
    for (let i = 0; i < args.length; i++) args[i] = v.getBigUint64(at + i * 8, true);
    return args;
  }

  /** DPA code failed: the DPA enters its fatal state (as a crash on the DPA does); every EU leaves. */
  private fatal(message: string, stack?: string): void {
    const dpa = this.eu.dpa;
    this.port.postMessage({ type: 'fatal', message, ...(stack ? { stack } : {}) } satisfies EuMessage);
    if (Atomics.compareExchange(dpa.i32, H.STATE / 4, DpaState.RUNNING, DpaState.FATAL) !== DpaState.RUNNING) return;
    for (let e = 0; e < dpa.layout.dims.eus; e++) if (e !== this.eu.index) dpa.sched.ringEu(e, 0);
    dpa.sched.ringOwner();
  }
}

/** An exception in one line: its message and where it was thrown. */
function describe(err: unknown): string {
  const where = (err as Error)?.stack?.split('\n').find((l) => l.trimStart().startsWith('at '))?.trim();
  return `${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}${where ? ` (${where})` : ''}`;
}

/** A return value as a u64, or undefined if it cannot be one. */
function toU64(value: unknown): bigint | undefined {
  if (value === undefined) return 0n;
  if (typeof value === 'bigint') return value >= 0n && value < 1n << 64n ? value : undefined;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return BigInt(value);
  if (typeof value === 'boolean') return value ? 1n : 0n;
  return undefined;
}

/** The owner's stats segment, mapped in this EU; undefined without one (introspection never fails a DPA). */
function openStats(d: SegmentDescriptor | undefined): Segment | undefined {
  if (!d) return undefined;
  try {
    return Segment.open(d, 'doca_dpa_start', ['stats']);
  } catch {
    return undefined;
  }
}

/** Runs execution unit `data.eu` until its DPA stops (eu-boot.ts calls it). */
export async function runEu(data: EuData): Promise<void> {
  const segment = Segment.open(data.dpa, 'doca_dpa_start');
  const read = readDpaLayout(segment);
  if (typeof read === 'string') {
    data.port.postMessage({ type: 'error', message: `the DPA segment is unusable: ${read}` } satisfies EuMessage);
    segment.close();
    return;
  }
  const dpa = new DpaTables(segment, read.layout, read.tag);
  dpa.sched.selfServing = true;
  const port = data.port;
  const logLevel = () => new DataView(segment.u8.buffer).getUint32(H.LOG_LEVEL, true);
  const eu: Eu = {
    dpa,
    events: new DpaEvents(dpa),
    maps: new DpaMapReader(Segment.open(data.maps, 'doca_dpa_start'), data.dev),
    index: data.eu,
    heap: Segment.open(data.heap, 'doca_dpa_start'),
    heapBase: data.heapBase,
    log: (level, text) => {
      if (level > 10 && level <= logLevel()) port.postMessage({ type: 'log', level, text } satisfies EuMessage);
    },
    work: undefined,
    runs: 0,
  };
  dpa.report = (text) => eu.log(30, text);
  installEu(eu);
  const stats = openStats(data.stats);
  const unit = new Unit(eu, port, stats && new Float64Array(stats.u8.buffer));
  if (await unit.load(data.app)) unit.loop();
  unit.close();
  stats?.close();
  eu.heap.close();
  eu.maps.segment.close();
  segment.close();
  port.close();
}
