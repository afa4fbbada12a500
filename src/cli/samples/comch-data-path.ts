/**
 * NVIDIA's comch_data_path_high_speed_server and _client samples (flow C of the DOCA reference): a
 * start/stop handshake over the control path, then each side sends its text to the other's consumer
 * (a 1 MiB buffer) through a producer, each fast-path context on its own progress engine.
 */
import { comchCapGetMaxMsgSize } from '../../comch/caps.js';
import { ComchClient } from '../../comch/client.js';
import type { ComchConnection } from '../../comch/connection.js';
import { ComchConsumer } from '../../comch/consumer.js';
import { ComchProducer } from '../../comch/producer.js';
import { ComchServer } from '../../comch/server.js';
import { BufInventory } from '../../core/buf.js';
import type { Dev } from '../../core/dev.js';
import { openDeviceByPci, openRepresentorByPci } from '../../core/dev.js';
import { DevinfoRepFilter } from '../../core/devinfo.js';
import { DocaError } from '../../core/error.js';
import { allocSharedMemory, freeSharedMemory } from '../../core/memory.js';
import { AccessFlag, Mmap } from '../../core/mmap.js';
import { ProgressEngine } from '../../core/pe.js';
import { checkTimeout, type SampleRun, type SampleSpec, withTeardown } from './common.js';
import { progressAll, progressUntil } from './loop.js';

export const DATA_PATH_SERVER_NAME = 'comch_data_path_sample_server';
const START = 'start_data_path_test';
const STOP = 'stop_data_path_test';
const MAX_MSG_SIZE = 1024 * 1024;
const INVALID_CONSUMER_ID = 0xffff;
const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

/** Shared state of the control path, as the samples keep it. */
interface Control {
  conn: ComchConnection | undefined;
  remoteConsumerId: number;
  started: boolean;
  stopped: boolean;
}

interface Mapped {
  mem: Uint8Array;
  mmap: Mmap;
  inv: BufInventory;
  release(): void;
}

/** Mapped memory for a sample buffer (PCI read/write, as the samples set it), with a one-element inventory. */
function mapped(dev: Dev, size: number): Mapped {
  const mem = allocSharedMemory(size);
  const mmap = Mmap.create();
  mmap.setMemrange(mem);
  mmap.setPermissions(AccessFlag.PCI_READ_WRITE);
  mmap.addDev(dev);
  mmap.start();
  const inv = BufInventory.create(1);
  inv.start();
  return {
    mem,
    mmap,
    inv,
    release: () => {
      mmap.destroy();
      inv.destroy();
      freeSharedMemory(mem);
    },
  };
}

/** Receives one message with a consumer on its own engine (comch_data_path_recv_msg). */
async function recvMsg(run: SampleRun, dev: Dev, control: Control, ctlPe: ProgressEngine): Promise<void> {
  const m = mapped(dev, MAX_MSG_SIZE);
  const pe = ProgressEngine.create();
  const consumer = ComchConsumer.create(control.conn!, m.mmap);
  pe.connectCtx(consumer);
  let done = false;
  let failure: DocaError | undefined;
  consumer.taskPostRecvSetConf(
    (task) => {
      run.log.info(`Message received: '${dec(task.getBuf().getData())}'`);
      task.getBuf().decRefcount();
      task.free();
      done = true;
    },
    (task) => {
      failure = task.error;
      task.getBuf().decRefcount();
      task.free();
      done = true;
    },
    2,
  );
  if (consumer.start() !== 'DOCA_ERROR_IN_PROGRESS') throw new DocaError('UNEXPECTED', 'sample', 'the consumer start did not return DOCA_ERROR_IN_PROGRESS');
  await progressUntil(run, [ctlPe, pe], () => consumer.state === 'RUNNING', 'the consumer to register with the peer');
  consumer.taskPostRecvAllocInit(m.inv.bufGetByAddr(m.mmap, m.mem)).submit();
  await progressUntil(run, [ctlPe, pe], () => done, 'a message from the peer producer');
  await retire(run, ctlPe, pe, consumer, m);
  if (failure) throw failure;
}

/**
 * Stops a fast-path endpoint, and once IDLE destroys it with its engine and memory. It may be IDLE
 * already: a peer that got what it wanted stops the test and disconnects at once, and the connection's
 * end stops this side's endpoints (NVIDIA's samples ignore what their doca_ctx_stop returns).
 */
async function retire(run: SampleRun, ctlPe: ProgressEngine, pe: ProgressEngine, endpoint: ComchConsumer | ComchProducer, m: Mapped): Promise<void> {
  if (endpoint.state !== 'IDLE') endpoint.stop();
  await progressUntil(run, [ctlPe, pe], () => endpoint.state === 'IDLE', `the ${endpoint instanceof ComchConsumer ? 'consumer' : 'producer'} to stop`);
  endpoint.destroy();
  pe.destroy();
  m.release();
}

/** Sends the text with a producer on its own engine (comch_data_path_send_msg). */
async function sendMsg(run: SampleRun, dev: Dev, control: Control, ctlPe: ProgressEngine, text: Uint8Array): Promise<void> {
  await progressUntil(run, [ctlPe], () => control.remoteConsumerId !== 0, "the peer's consumer");
  if (control.remoteConsumerId === INVALID_CONSUMER_ID) throw new DocaError('NOT_CONNECTED', 'sample', 'the test was stopped before the peer created its consumer');
  const m = mapped(dev, Math.max(1, text.length));
  m.mem.set(text);
  const pe = ProgressEngine.create();
  const producer = ComchProducer.create(control.conn!);
  pe.connectCtx(producer);
  let done = false;
  let failure: DocaError | undefined;
  const finish = (task: { getBuf(): { decRefcount(): number }; free(): void; error: DocaError | undefined }) => {
    failure = task.error;
    task.getBuf().decRefcount();
    task.free();
    done = true;
  };
  producer.taskSendSetConf(finish, finish, 2);
  if (producer.start() !== 'DOCA_SUCCESS') throw new DocaError('UNEXPECTED', 'sample', 'the producer did not start synchronously');
  const task = producer.taskSendAllocInit(m.inv.bufGetByData(m.mmap, m.mem.subarray(0, text.length)), undefined, control.remoteConsumerId);
  for (;;) {
    try {
      task.submit();
      break;
    } catch (err) {
      if (!DocaError.is(err, 'AGAIN')) throw err;
      // The peer has not posted a buffer yet: let both engines and the event loop run, then retry.
      progressAll([ctlPe, pe]);
      await new Promise<void>((resolve) => setImmediate(resolve));
      checkTimeout(run, "the peer consumer's buffer");
    }
  }
  await progressUntil(run, [ctlPe, pe], () => done, 'the send to complete');
  await retire(run, ctlPe, pe, producer, m);
  if (failure) throw failure;
}

function registerControl(ctx: ComchServer | ComchClient, control: Control, onMessage: (text: string, conn: ComchConnection) => void): void {
  ctx.taskSendSetConf((t) => t.free(), (t) => t.free(), 8);
  ctx.eventMsgRecvRegister((_e, data, _len, conn) => onMessage(dec(data), conn));
  ctx.eventConsumerRegister(
    (_e, _c, id) => (control.remoteConsumerId = id),
    () => {},
  );
  ctx.setMaxMsgSize(comchCapGetMaxMsgSize(ctx.devinfo));
}

async function serverMain(run: SampleRun): Promise<void> {
  const dev = openDeviceByPci(run.values['pci-addr'] as string);
  const rep = openRepresentorByPci(dev, DevinfoRepFilter.NET, run.values['rep-pci'] as string);
  const pe = ProgressEngine.create();
  const server = ComchServer.create(dev, rep, DATA_PATH_SERVER_NAME);
  pe.connectCtx(server);
  const control: Control = { conn: undefined, remoteConsumerId: 0, started: false, stopped: false };
  registerControl(server, control, (text, conn) => {
    server.taskSendAllocInit(conn, enc(text)).submit(); // echo the handshake
    if (text === START) control.started = true;
    if (text === STOP) {
      control.stopped = true;
      control.remoteConsumerId = INVALID_CONSUMER_ID;
    }
  });
  server.eventConnectionStatusChangedRegister(
    (_e, conn) => (control.conn = conn),
    () => {},
  );
  server.start();
  await withTeardown(
    async () => {
      await progressUntil(run, [pe], () => control.conn !== undefined && control.started, 'a client to connect and start the test');
      await recvMsg(run, dev, control, pe);
      await sendMsg(run, dev, control, pe, enc(run.values.text as string));
      await progressUntil(run, [pe], () => control.stopped, 'the client to stop the test');
      await progressUntil(run, [pe], () => server.connections.length === 0, 'the client to disconnect');
    },
    [() => server.stopTree({ timeoutMs: 2000 }).catch(() => {}), () => server.destroy(), () => pe.destroy(), () => rep.close(), () => dev.close()],
  );
}

async function clientMain(run: SampleRun): Promise<void> {
  const dev = openDeviceByPci(run.values['pci-addr'] as string);
  const pe = ProgressEngine.create();
  const client = ComchClient.create(dev, DATA_PATH_SERVER_NAME);
  pe.connectCtx(client);
  const control: Control = { conn: undefined, remoteConsumerId: 0, started: false, stopped: false };
  registerControl(client, control, (text) => {
    if (text === START) control.started = true;
    if (text === STOP) control.stopped = true;
  });
  if (client.start() !== 'DOCA_ERROR_IN_PROGRESS') throw new DocaError('UNEXPECTED', 'sample', 'the client start did not return DOCA_ERROR_IN_PROGRESS');
  await withTeardown(
    async () => {
      await progressUntil(run, [pe], () => client.state === 'RUNNING', `the server ${DATA_PATH_SERVER_NAME} (is it running?)`);
      control.conn = client.getConnection();
      client.taskSendAllocInit(control.conn, enc(START)).submit();
      await progressUntil(run, [pe], () => control.started, 'the server to start the test');
      await sendMsg(run, dev, control, pe, enc(run.values.text as string));
      await recvMsg(run, dev, control, pe);
      client.taskSendAllocInit(control.conn, enc(STOP)).submit();
      await progressUntil(run, [pe], () => control.stopped, 'the server to stop the test');
    },
    [() => client.stopTree({ timeoutMs: 2000 }).catch(() => {}), () => client.destroy(), () => pe.destroy(), () => dev.close()],
  );
}

export const comchDataPathServer: SampleSpec = {
  name: 'comch_data_path_high_speed_server',
  description: 'DOCA Comch fast-path server (DPU): receives the client text through a consumer, sends its own through a producer.',
  flags: {
    'pci-addr': { short: 'p', type: 'string', description: 'DOCA Comch device PCI address', default: '03:00.0' },
    'rep-pci': { short: 'r', type: 'string', description: 'DOCA Comch device representor PCI address', default: 'b1:00.0' },
    text: { short: 't', type: 'string', description: 'text to send to the client', default: 'Message from the server' },
  },
  run: serverMain,
};

export const comchDataPathClient: SampleSpec = {
  name: 'comch_data_path_high_speed_client',
  description: 'DOCA Comch fast-path client (host): sends its text through a producer, receives the server text through a consumer.',
  flags: {
    'pci-addr': { short: 'p', type: 'string', description: 'DOCA Comch device PCI address', default: 'b1:00.0' },
    text: { short: 't', type: 'string', description: 'text to send to the server', default: 'Message from the client' },
  },
  run: clientMain,
};
