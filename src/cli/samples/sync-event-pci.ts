/**
 * NVIDIA's sync_event_local_pci and sync_event_remote_pci samples (flows D and E of the DOCA reference).
 * The exporter (local_pci) makes the event and sends its blob over comch; the importer (remote_pci)
 * waits for 1, the exporter sets (or adds) 1 and waits for 2, the importer sets 2 (or adds 1). Either
 * side may run on the host or the DPU: the DPU side is the comch server, the host side the client.
 */
import { comchCapGetMaxMsgSize } from '../../comch/caps.js';
import { ComchClient } from '../../comch/client.js';
import type { ComchConnection } from '../../comch/connection.js';
import { ComchServer } from '../../comch/server.js';
import type { Dev, DevRep } from '../../core/dev.js';
import { openDeviceByPci, openRepresentorByPci } from '../../core/dev.js';
import { DevinfoRepFilter } from '../../core/devinfo.js';
import { DocaError } from '../../core/error.js';
import { ProgressEngine } from '../../core/pe.js';
import type { Task } from '../../core/task.js';
import {
  syncEventCapIsCreateFromExportSupported,
  syncEventCapIsExportToRemotePciSupported,
  syncEventCapTaskWaitEqIsSupported,
} from '../../sync-event/caps.js';
import { U64_MAX } from '../../sync-event/condition.js';
import type { SyncEventContext } from '../../sync-event/ctx.js';
import { SyncEvent } from '../../sync-event/sync-event.js';
import { POSITIVE_INTEGER, type SampleRun, type SampleSpec } from './common.js';
import { progressAll, progressUntil } from './loop.js';

const SERVER_NAME = 'sync_event_cc';
const MAX_MSG_SIZE = 1024;
const MAX_QUEUE_SIZE = 8;
const MAX_TASKS = 8;

interface Side {
  dev: Dev;
  rep: DevRep | undefined;
  pe: ProgressEngine;
  comch: ComchServer | ComchClient;
  conn: ComchConnection;
  blob: Uint8Array | undefined;
}

/** Opens the device (and, on the DPU, the representor) and makes the comch connection (flows D.5, E.1). */
async function connect(run: SampleRun, check: (d: Dev) => void): Promise<Side> {
  const dev = openDeviceByPci(run.values['pci-addr'] as string);
  check(dev);
  const onDpu = dev.asDevinfo().side === 'dpu';
  const rep = onDpu ? openRepresentorByPci(dev, DevinfoRepFilter.NET, run.values['rep-pci'] as string) : undefined;
  const pe = ProgressEngine.create();
  const comch = rep ? ComchServer.create(dev, rep, SERVER_NAME) : ComchClient.create(dev, SERVER_NAME);
  pe.connectCtx(comch);
  const side: Partial<Side> = { dev, rep, pe, comch };
  comch.taskSendSetConf((t) => t.free(), (t) => t.free(), MAX_TASKS);
  comch.setMaxMsgSize(Math.min(MAX_MSG_SIZE, comchCapGetMaxMsgSize(dev.asDevinfo())));
  comch.setRecvQueueSize(MAX_QUEUE_SIZE);
  comch.eventMsgRecvRegister((_e, data) => (side.blob = data.slice(0, MAX_MSG_SIZE)));
  comch.start();
  const peerName = onDpu ? 'a comch client on the host' : `the comch server ${SERVER_NAME} on the DPU (is it running?)`;
  await progressUntil(run, [pe], () => comch.connections.length > 0 && comch.state === 'RUNNING', peerName);
  side.conn = comch.connections[0]!;
  run.log.info(`Comch connection established with ${onDpu ? 'the host' : 'the DPU'}`);
  return side as Side;
}

/**
 * Releases everything, step by step, with its own bounds (it also runs after --timeout has passed), and
 * returns the first error instead of throwing it, so that it never hides the error that ended the run.
 */
async function teardown(side: Side, event: SyncEvent, sePe: ProgressEngine | undefined): Promise<unknown> {
  let first: unknown;
  const step = async (fn: () => unknown) => {
    try {
      await fn();
    } catch (err) {
      first ??= err;
    }
  };
  if (side.comch instanceof ComchServer) {
    const deadline = performance.now() + 5000; // the DPU waits for the host to disconnect first
    while (side.comch.connections.length > 0 && performance.now() < deadline) {
      if (!progressAll([side.pe])) await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }
  await step(() => side.comch.stopTree({ timeoutMs: 5000 }));
  await step(() => side.comch.destroy());
  await step(() => side.pe.destroy());
  await step(() => (sePe ? event.asCtx().stopAndWait({ timeoutMs: 1000 }) : event.stop()));
  await step(() => event.destroy());
  await step(() => sePe?.destroy());
  await step(() => side.rep?.close());
  await step(() => side.dev.close());
  return first;
}

/** Runs the sample's body, then its teardown; the body's error wins over the teardown's. */
async function withTeardown(body: () => Promise<void>, side: Side, event: SyncEvent, sePe: ProgressEngine | undefined): Promise<void> {
  let failure: unknown;
  try {
    await body();
  } catch (err) {
    failure = err;
  }
  const teardownError = await teardown(side, event, sePe);
  if (failure !== undefined) throw failure;
  if (teardownError !== undefined) throw teardownError;
}

/** The async mode's context and task pools (flow D.4). */
function asyncContext(run: SampleRun, event: SyncEvent): { ctx: SyncEventContext; pe: ProgressEngine } {
  const pe = ProgressEngine.create();
  const ctx = event.asCtx();
  pe.connectCtx(ctx);
  ctx.setUserData(run);
  const n = Number(run.values['async-num-tasks']); // checked by runSample (POSITIVE_INTEGER)
  const free = (t: Task) => t.free();
  ctx.taskGetSetConf(free, free, n);
  ctx.taskNotifySetSetConf(free, free, n);
  ctx.taskNotifyAddSetConf(free, free, n);
  ctx.taskWaitEqSetConf(free, free, n);
  if (ctx.start() !== 'DOCA_SUCCESS') throw new DocaError('UNEXPECTED', 'sample', 'the sync event context did not start synchronously');
  return { ctx, pe };
}

/** Submits one task and progresses until its callback freed it (the samples bound this by 1 s; here --timeout). */
async function runTask<T extends Task>(run: SampleRun, pe: ProgressEngine, task: T, what: string, onDone: (task: T) => void = () => {}): Promise<void> {
  let error: DocaError | undefined;
  const done = task.submitAsync().then(
    (t) => (onDone(t), t.free()),
    (err: DocaError) => {
      error = err;
      task.free();
    },
  );
  let finished = false;
  void done.then(() => (finished = true));
  await progressUntil(run, [pe], () => finished, what);
  if (error) throw error;
}

function update(run: SampleRun, event: SyncEvent, ctx: SyncEventContext | undefined, pe: ProgressEngine | undefined, value: bigint): Promise<void> | void {
  const atomic = run.values.atomic === true;
  if (!ctx) {
    if (atomic) event.updateAdd(1n);
    else event.updateSet(value);
    return;
  }
  const task = atomic ? ctx.taskNotifyAddAllocInit(1n) : ctx.taskNotifySetAllocInit(value);
  return runTask(run, pe!, task, 'the update task');
}

function remainingMs(run: SampleRun, startedAt: number): number {
  return Math.max(1, run.timeoutMs - (performance.now() - startedAt));
}

async function localMain(run: SampleRun): Promise<void> {
  const startedAt = performance.now();
  const isAsync = run.values.async === true;
  const side = await connect(run, (d) => {
    if (!syncEventCapIsExportToRemotePciSupported(d.asDevinfo())) throw new DocaError('NOT_SUPPORTED', 'sample', `${d.asDevinfo().getPciAddrStr()} cannot export sync events to remote PCI`);
    if (isAsync && !syncEventCapTaskWaitEqIsSupported(d.asDevinfo())) throw new DocaError('NOT_SUPPORTED', 'sample', 'wait_eq tasks are not supported');
  });
  const event = SyncEvent.create();
  event.addPublisherLocationRemotePci();
  event.addSubscriberLocationCpu(side.dev);
  const a = isAsync ? asyncContext(run, event) : undefined;
  if (!a) event.start();
  await withTeardown(async () => {
    side.comch.taskSendAllocInit(side.conn, event.exportToRemotePci(side.dev)).submit();
    run.log.info('Sync event exported to the remote side');
    await update(run, event, a?.ctx, a?.pe, 1n);
    run.log.info(`Signaled the remote side (${run.values.atomic ? 'added 1' : 'set 1'}); waiting for 2`);
    if (a) await runTask(run, a.pe, a.ctx.taskWaitEqAllocInit(2n, U64_MAX), 'the remote side to signal 2');
    else event.waitEqYield(2n, -1n, { timeoutMs: remainingMs(run, startedAt) });
    let value = 0n;
    // A context answers through its tasks only (the synchronous get is refused there, as in DOCA).
    if (a) await runTask(run, a.pe, a.ctx.taskGetAllocInit(), 'reading the value', (t) => (value = t.getRetVal()));
    else value = event.get();
    run.log.info(`The remote side signaled; the event value is ${value}`);
  }, side, event, a?.pe);
}

async function remoteMain(run: SampleRun): Promise<void> {
  const startedAt = performance.now();
  const isAsync = run.values.async === true;
  const side = await connect(run, (d) => {
    if (!syncEventCapIsCreateFromExportSupported(d.asDevinfo())) throw new DocaError('NOT_SUPPORTED', 'sample', `${d.asDevinfo().getPciAddrStr()} cannot create sync events from an export`);
  });
  await progressUntil(run, [side.pe], () => side.blob !== undefined, 'the exported sync event');
  const event = SyncEvent.createFromExport(side.dev, side.blob!);
  run.log.info('Sync event created from the export');
  const a = isAsync ? asyncContext(run, event) : undefined;
  if (!a) event.start();
  await withTeardown(async () => {
    if (a) await runTask(run, a.pe, a.ctx.taskWaitEqAllocInit(1n, U64_MAX), 'the exporter to signal 1');
    else event.waitEq(1n, -1n, { timeoutMs: remainingMs(run, startedAt) });
    run.log.info('The exporter signaled 1');
    await update(run, event, a?.ctx, a?.pe, 2n);
    run.log.info(`Signaled the exporter (${run.values.atomic ? 'added 1' : 'set 2'})`);
  }, side, event, a?.pe);
}

const flags = {
  'pci-addr': { short: 'd', also: ['dev-pci-addr'], type: 'string', description: 'PCI address of the device (host function or DPU Arm device)', default: 'b1:00.0' },
  'rep-pci': { short: 'r', type: 'string', description: 'PCI address of the host function\'s representor (on the DPU only)', default: 'b1:00.0' },
  async: { type: 'boolean', description: 'use the asynchronous mode (the event as a context, tasks on a progress engine)' },
  'async-num-tasks': { also: ['async_num_tasks'], type: 'string', description: 'task pool size in async mode', default: '1', value: POSITIVE_INTEGER },
  atomic: { type: 'boolean', description: 'signal with an atomic add of 1 instead of a set' },
} as const;

export const syncEventLocalPci: SampleSpec = {
  name: 'sync_event_local_pci',
  description: 'DOCA Sync Event exporter: creates the event, sends it over comch, signals 1 and waits for 2.',
  flags,
  run: localMain,
};

export const syncEventRemotePci: SampleSpec = {
  name: 'sync_event_remote_pci',
  description: 'DOCA Sync Event importer: receives the event over comch, waits for 1 and signals 2.',
  flags,
  run: remoteMain,
};
