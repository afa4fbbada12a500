/**
 * A server and a client in this process, joined over the fabric all the same (real Unix sockets, real
 * shared segments), each with its engine driven by pe.run(): for tests of API semantics. Anything about
 * processes (death, data across processes) has tests with real child processes instead.
 */
import type { TestContext } from 'node:test';
import { ComchClient } from '../../src/comch/client.js';
import type { ComchConnection } from '../../src/comch/connection.js';
import { ComchServer } from '../../src/comch/server.js';
import { BufInventory, type DocaBuf } from '../../src/core/buf.js';
import { type Dev, openDeviceByPci, openRepresentorByPci } from '../../src/core/dev.js';
import { DevinfoRepFilter } from '../../src/core/devinfo.js';
import { allocSharedMemory } from '../../src/core/memory.js';
import { AccessFlag, Mmap } from '../../src/core/mmap.js';
import { ProgressEngine } from '../../src/core/pe.js';
import { until } from './wait.js';
import { useFabric } from '../../src/fabric/fabric.js';
import { tempFabricDir } from './fabric.js';

export interface Pair {
  arm: Dev;
  host: Dev;
  pe: ProgressEngine;
  server: ComchServer;
  client: ComchClient;
  serverConn: ComchConnection;
  clientConn: ComchConnection;
  events: string[];
  /** Drives `pe` (and any extra engines) until the test ends. */
  drive(pe: ProgressEngine): void;
  /** Stops driving every engine (the test then progresses, or disposes, by itself). */
  stopDriving(): Promise<void>;
}

/** What a test may set on the pair before it starts. */
export interface PairOptions {
  /** Each side's receive queue (`doca_comch_server/client_set_recv_queue_size`). */
  recvQueueSize?: number;
  /** Send tasks per side (default 8). */
  sendTasks?: number;
  /** Called once both contexts are configured, before they start: callbacks, more configuration. */
  beforeStart?(server: ComchServer, client: ComchClient): void;
}

export async function comchPair(t: TestContext, name: string, options: PairOptions = {}): Promise<Pair> {
  useFabric({ dir: tempFabricDir(t) });
  const arm = openDeviceByPci('03:00.0');
  const rep = openRepresentorByPci(arm, DevinfoRepFilter.NET, 'b1:00.0');
  const host = openDeviceByPci('b1:00.0');
  const pe = ProgressEngine.create();
  const server = ComchServer.create(arm, rep, name);
  const client = ComchClient.create(host, name);
  const events: string[] = [];
  for (const [label, ctx] of [['server', server], ['client', client]] as const) {
    pe.connectCtx(ctx);
    ctx.taskSendSetConf(() => {}, () => {}, options.sendTasks ?? 8);
    if (options.recvQueueSize !== undefined) ctx.setRecvQueueSize(options.recvQueueSize);
    ctx.eventConsumerRegister(
      (_e, _c, id) => events.push(`${label} new ${id}`),
      (_e, _c, id) => events.push(`${label} expired ${id}`),
    );
  }
  options.beforeStart?.(server, client);
  server.start();
  client.start();
  const ac = new AbortController();
  const drivers: Promise<void>[] = [];
  const drive = (engine: ProgressEngine) => drivers.push(engine.run({ signal: ac.signal, until: () => false }));
  const stopDriving = async () => {
    ac.abort();
    await Promise.all(drivers);
  };
  drive(pe);
  t.after(async () => {
    await client.stopTree().catch(() => {});
    await server.stopTree().catch(() => {});
    await stopDriving();
  });
  const clientConn = await client.connected({ timeoutMs: 10_000 });
  await until(() => server.connections.length > 0, `the server ${name} to see the client's connection`, 10_000);
  return { arm, host, pe, server, client, serverConn: server.connections[0]!, clientConn, events, drive, stopDriving };
}

/** A started map over fresh shared memory with PCI read/write, and an inventory for it. */
export function sharedMap(dev: Dev, size: number, buffers = 16): { mem: Uint8Array; map: Mmap; inv: BufInventory; buf(offset: number, length: number): DocaBuf } {
  const mem = allocSharedMemory(size);
  const map = Mmap.create();
  map.setMemrange(mem);
  map.setPermissions(AccessFlag.LOCAL_READ_WRITE | AccessFlag.PCI_READ_WRITE);
  map.addDev(dev);
  map.start();
  const inv = BufInventory.create(buffers);
  inv.start();
  return { mem, map, inv, buf: (offset, length) => inv.bufGetByAddr(map, mem.subarray(offset, offset + length)) };
}

/** Waits (with a bound) until `cond` holds, letting the drivers run (helpers/wait.ts). */
export { until };
