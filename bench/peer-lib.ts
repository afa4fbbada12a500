/**
 * Shared by the softdpu peer processes (not loaded by the runner): comch endpoints set up as the README
 * shows them, and a sync event shared between two processes.
 */
import { ComchClient } from '../src/comch/client.js';
import type { ComchConnection } from '../src/comch/connection.js';
import { ComchConsumer } from '../src/comch/consumer.js';
import type { ComchConsumerPostRecvTask } from '../src/comch/post-recv-task.js';
import { ComchProducer } from '../src/comch/producer.js';
import type { ComchConnectionRef } from '../src/comch/endpoint-table.js';
import { ComchServer } from '../src/comch/server.js';
import { BufInventory, type DocaBuf } from '../src/core/buf.js';
import { type Dev, openDeviceByPci, openRepresentorByPci } from '../src/core/dev.js';
import { DevinfoRepFilter } from '../src/core/devinfo.js';
import { DocaError } from '../src/core/error.js';
import { allocSharedMemory } from '../src/core/memory.js';
import { AccessFlag, Mmap } from '../src/core/mmap.js';
import { ProgressEngine } from '../src/core/pe.js';
import type { Task } from '../src/core/task.js';
import type { SyncEventContext } from '../src/sync-event/ctx.js';
import { SyncEvent } from '../src/sync-event/sync-event.js';
import { cpuMeter } from './lib.js';

export const ARM = '03:00.0';
export const HOST = 'b1:00.0';

/** An engine driven from the event loop by `pe.run()` until `stop()`; `stop()` resolves once it returned. */
export interface Driven {
  pe: ProgressEngine;
  stop(): Promise<void>;
}

export function drive(pe: ProgressEngine): Driven {
  const ac = new AbortController();
  const driving = pe.run({ signal: ac.signal, until: () => false });
  return {
    pe,
    stop: async () => {
      ac.abort();
      await driving;
    },
  };
}

/** examples/echo-dpu.mjs: a server with its own engine, started and driven by pe.run(). */
export function readmeServer(name: string): Driven & { server: ComchServer } {
  const arm = openDeviceByPci(ARM);
  const pe = ProgressEngine.create();
  const server = ComchServer.create(arm, openRepresentorByPci(arm, DevinfoRepFilter.NET, HOST), name);
  pe.connectCtx(server);
  server.taskSendSetConf(() => {}, () => {}, 16);
  server.start();
  return { ...drive(pe), server };
}

/** examples/echo-host.mjs: a client with its own engine, started and driven by pe.run(). */
export function readmeClient(name: string, dev: Dev = openDeviceByPci(HOST)): Driven & { client: ComchClient } {
  const pe = ProgressEngine.create();
  const client = ComchClient.create(dev, name);
  pe.connectCtx(client);
  client.taskSendSetConf(() => {}, () => {}, 16);
  client.start();
  return { ...drive(pe), client };
}

/**
 * `count` buffers of `size` bytes in one started map of shared memory (faulted in: the exchange is
 * measured, not page faults), with PCI read/write so a peer's producers can fill them.
 */
export function sharedBuffers(dev: Dev, size: number, count: number): { mem: Uint8Array; map: Mmap; empty(i: number): DocaBuf; full(i: number): DocaBuf } {
  const mem = allocSharedMemory(size * count);
  mem.fill(0);
  const map = Mmap.create();
  map.setMemrange(mem);
  map.setPermissions(AccessFlag.LOCAL_READ_WRITE | AccessFlag.PCI_READ_WRITE);
  map.addDev(dev);
  map.start();
  const inv = BufInventory.create(count);
  inv.start();
  const range = (i: number) => mem.subarray(i * size, (i + 1) * size);
  return { mem, map, empty: (i) => inv.bufGetByAddr(map, range(i)), full: (i) => inv.bufGetByData(map, range(i)) };
}

/** What a fast-path side of a ping-pong needs; every endpoint goes on `pe`. */
export interface FastpathSide {
  dev: Dev;
  pe: ProgressEngine;
  conn: ComchConnection | ComchConnectionRef;
  size: number;
  /** Buffers the consumer posts. */
  posted: number;
  /** Filled (by the context's consumer event, or by the caller) with the peer's consumer ids. */
  peerConsumers: number[];
  mode: 'busy' | 'notify';
}

/** A consumer with `posted` buffers posted and a producer that sends to the peer's first consumer. */
async function fastpathEndpoints(o: FastpathSide, onRecv: (task: ComchConsumerPostRecvTask) => void, onSent: () => void) {
  const bufs = sharedBuffers(o.dev, o.size, o.posted);
  const consumer = ComchConsumer.create(o.conn, bufs.map);
  consumer.taskPostRecvSetConf(onRecv, (task) => task.free(), o.posted); // flushed at the end
  const producer = ComchProducer.create(o.conn);
  producer.taskSendSetConf(
    (task) => (task.free(), onSent()),
    (task) => {
      throw new Error(`fast-path ping-pong: send failed: ${task.error?.message}`);
    },
    4,
  );
  o.pe.connectCtx(consumer);
  o.pe.connectCtx(producer);
  consumer.start();
  producer.start();
  await o.pe.run({ mode: o.mode, until: () => consumer.state === 'RUNNING' && producer.state === 'RUNNING' && o.peerConsumers.length > 0 });
  for (let i = 0; i < o.posted; i++) consumer.taskPostRecvAllocInit(bufs.empty(i)).submit();
  const alloc = (buf: DocaBuf) => producer.taskSendAllocInit(buf, undefined, o.peerConsumers[0]!);
  /** Stops and destroys both endpoints (in a worker thread; a context's stopTree() does it otherwise). */
  const close = async () => {
    for (const ctx of [consumer, producer]) {
      await ctx.stopAndWait({ timeoutMs: 5000 });
      ctx.destroy();
    }
  };
  return { consumer, producer, alloc, close };
}

/**
 * The echo side of a fast-path ping-pong: every payload is sent back from the buffer it arrived in, and
 * the buffer is reposted once that send completed. `echoed()` counts payloads received, `reposted()`
 * echoes whose send completed (run until that before `close()`: the repost needs a running consumer);
 * `cpuUs()` is the CPU since the first.
 */
export async function fastpathEcho(o: FastpathSide) {
  let echoed = 0;
  let reposted = 0;
  let repost: ComchConsumerPostRecvTask | undefined;
  let cpu = () => 0;
  const ends = await fastpathEndpoints(
    o,
    (task) => {
      if (echoed++ === 0) cpu = cpuMeter();
      repost = task;
      ends.alloc(task.getBuf()).submit();
    },
    () => (repost!.submit(), reposted++),
  );
  return { ...ends, echoed: () => echoed, reposted: () => reposted, cpuUs: () => cpu() };
}

/**
 * The pinging side: `run(n)` makes n round trips of `size` bytes, each sent from the callback of the
 * previous reply after reading the reply's first and last byte; resolves with the round trips (us) and
 * this process's CPU over them.
 */
export async function fastpathPinger(o: FastpathSide) {
  const src = sharedBuffers(o.dev, o.size, 1);
  src.mem.fill(0x5a);
  const payload = src.full(0);
  const samples: number[] = [];
  let wanted = 0;
  let touched = 0;
  let t0 = 0;
  const ends = await fastpathEndpoints(
    o,
    (task) => {
      samples.push((performance.now() - t0) * 1000);
      const data = task.getBuf().getData();
      touched ^= data[0]! ^ data[data.length - 1]!;
      task.submit();
      if (samples.length < wanted) {
        t0 = performance.now();
        ends.alloc(payload).submit();
      }
    },
    () => {},
  );
  const run = async (n: number) => {
    samples.length = 0;
    wanted = n;
    const cpu = cpuMeter();
    // The peer may post its buffers after it saw this side's consumer: the first send may find none yet.
    const first = ends.alloc(payload);
    for (;;) {
      try {
        t0 = performance.now();
        first.submit();
        break;
      } catch (err) {
        if (!DocaError.is(err, 'AGAIN')) throw err;
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
    }
    await o.pe.run({ mode: o.mode, until: () => samples.length >= n });
    return { samples: [...samples], cpuUs: cpu(), touched };
  };
  return { ...ends, run };
}

/** The sync event of the benchmarks: created on the Arm side, published over PCI, waited on by CPUs. */
export function creatorEvent(dev: Dev): SyncEvent {
  const e = SyncEvent.create();
  e.addPublisherLocationRemotePci();
  e.addSubscriberLocationCpu(dev);
  return e;
}

/**
 * Starts `event` as a context on its own engine, for async waits (tasks freed on completion; `failed`
 * is the status of the last task that failed).
 */
export function asyncSide(event: SyncEvent): { ctx: SyncEventContext; pe: ProgressEngine; failed: string | undefined } {
  const pe = ProgressEngine.create();
  const ctx = event.asCtx();
  pe.connectCtx(ctx);
  const side = { ctx, pe, failed: undefined as string | undefined };
  const free = (t: Task) => t.free();
  const failed = (t: Task) => {
    side.failed = t.getStatus();
    t.free();
  };
  ctx.taskNotifySetSetConf(free, failed, 1);
  ctx.taskWaitEqSetConf(free, failed, 1);
  ctx.start();
  return side;
}

/** A watchdog: exits the process with `what` if it is still running after `ms` (a peer died or hung). */
export function watchdog(what: string, ms = 120_000): void {
  setTimeout(() => {
    process.stderr.write(`${what}: still running after ${ms} ms, giving up\n`);
    process.exit(1);
  }, ms).unref();
}

/**
 * Bounds a loop that never turns the event loop (the watchdog's timer cannot fire inside one): `overdue()`,
 * asked in each round, is true once `ms` have passed since `reset()`; the caller throws, saying what did
 * not come. The clock is read every 65536 rounds only, the first time 65536 rounds after the reset
 * (performance.now() allocates: 32 B a read on Node 20).
 */
export class SpinGuard {
  private rounds = 0;
  private since = -1;

  constructor(readonly ms = 10_000) {}

  reset(): void {
    this.rounds = 0;
    this.since = -1;
  }

  overdue(): boolean {
    if ((++this.rounds & 0xffff) !== 0) return false;
    const now = performance.now();
    if (this.since < 0) this.since = now;
    return now - this.since > this.ms;
  }
}
