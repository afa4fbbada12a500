/**
 * NVIDIA's comch_ctrl_path_server and comch_ctrl_path_client samples (flows A and B of the DOCA
 * reference): the client sends its text once connected, the server prints it and answers with its own,
 * both stop cleanly.
 */
import { comchCapGetMaxMsgSize, comchCapServerIsSupported, comchCapClientIsSupported } from '../../comch/caps.js';
import { ComchClient } from '../../comch/client.js';
import type { ComchConnection } from '../../comch/connection.js';
import { ComchServer } from '../../comch/server.js';
import { CtxState, ctxStateName } from '../../core/ctx.js';
import { openDeviceByPci, openRepresentorByPci } from '../../core/dev.js';
import { DevinfoRepFilter } from '../../core/devinfo.js';
import { DocaError } from '../../core/error.js';
import { ProgressEngine } from '../../core/pe.js';
import { checkTimeout, type SampleRun, type SampleSpec, withTeardown } from './common.js';

export const SERVER_NAME = 'comch_ctrl_path_sample_server';
const CC_REC_QUEUE_SIZE = 10;
const CC_SEND_TASK_NUM = 1024;

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

function checkText(text: Uint8Array, max: number): void {
  if (text.length > max) throw new DocaError('INVALID_VALUE', 'sample', `the text is ${text.length} bytes; the maximal message size is ${max}`);
}

async function serverMain(run: SampleRun): Promise<void> {
  const { values, log } = run;
  const text = enc(values.text as string);
  const dev = openDeviceByPci(values['pci-addr'] as string, {
    check: (d) => {
      if (!comchCapServerIsSupported(d)) throw new DocaError('NOT_SUPPORTED', 'sample', `${d.getPciAddrStr()} cannot host a comch server (run the server on the DPU)`);
    },
  });
  const rep = openRepresentorByPci(dev, DevinfoRepFilter.NET, values['rep-pci'] as string);
  const pe = ProgressEngine.create();
  const server = ComchServer.create(dev, rep, SERVER_NAME);
  pe.connectCtx(server);
  let finish = false;
  let sendStatus: DocaError | undefined;
  server.setStateChangedCb((_u, _c, prev, next) => {
    if (next === CtxState.IDLE) {
      log.info('Server context has been stopped');
      finish = true;
    } else if (next === CtxState.RUNNING) log.info('Server context is running');
    else log.dbg(`server state ${ctxStateName(prev)} -> ${ctxStateName(next)}`);
  });
  const done = (task: { free(): void; error: DocaError | undefined }) => {
    sendStatus = task.error;
    task.free();
    if (server.state === 'RUNNING') server.stop();
  };
  server.taskSendSetConf(done, done, CC_SEND_TASK_NUM);
  server.eventMsgRecvRegister((_e, buffer, _len, conn: ComchConnection) => {
    log.info(`Message received: '${dec(buffer)}'`);
    const task = server.taskSendAllocInit(conn, text);
    task.submit();
  });
  server.eventConnectionStatusChangedRegister(
    (_e, conn, ok) => log.info(`Client connected (connection ${conn.id}, success ${ok})`),
    (_e, conn) => log.info(`Client disconnected (connection ${conn.id})`),
  );
  const max = comchCapGetMaxMsgSize(dev.asDevinfo());
  server.setMaxMsgSize(max);
  server.setRecvQueueSize(CC_REC_QUEUE_SIZE);
  checkText(text, max);
  if (server.start() !== 'DOCA_SUCCESS') throw new DocaError('UNEXPECTED', 'sample', 'the server did not start synchronously');
  await withTeardown(
    async () => {
      await pe.run({ signal: run.signal, until: () => finish });
      checkTimeout(run, 'a client message and the server to stop');
      if (sendStatus) throw sendStatus;
    },
    [() => server.state !== 'IDLE' && server.stopAndWait({ timeoutMs: 2000 }).catch(() => {}), () => server.destroy(), () => pe.destroy(), () => rep.close(), () => dev.close()],
  );
}

async function clientMain(run: SampleRun): Promise<void> {
  const { values, log } = run;
  const text = enc(values.text as string);
  const dev = openDeviceByPci(values['pci-addr'] as string, {
    check: (d) => {
      if (!comchCapClientIsSupported(d)) throw new DocaError('NOT_SUPPORTED', 'sample', `${d.getPciAddrStr()} cannot host a comch client (run the client on the host)`);
    },
  });
  const pe = ProgressEngine.create();
  const client = ComchClient.create(dev, SERVER_NAME);
  pe.connectCtx(client);
  let finish = false;
  let failure: DocaError | undefined;
  client.setStateChangedCb((_u, _c, prev, next) => {
    if (next === CtxState.STARTING) log.info('Client context entered starting state. Waiting for connection');
    else if (next === CtxState.STOPPING) log.info('Client context entered stopping state. Waiting for connection termination');
    else if (next === CtxState.IDLE) {
      if (prev === CtxState.STARTING) failure ??= new DocaError('CONNECTION_ABORTED', 'sample', 'the client never connected');
      finish = true;
    } else if (next === CtxState.RUNNING) {
      log.info('Client context is running. Sending message');
      const conn = client.getConnection();
      conn.setUserData(run);
      client.taskSendAllocInit(conn, text).submit();
    }
  });
  client.taskSendSetConf(
    (task) => task.free(),
    (task) => {
      failure = task.error;
      task.free();
      client.stop();
    },
    CC_SEND_TASK_NUM,
  );
  client.eventMsgRecvRegister((_e, buffer) => {
    log.info(`Message received: '${dec(buffer)}'`);
    client.stop();
  });
  const max = comchCapGetMaxMsgSize(dev.asDevinfo());
  client.setMaxMsgSize(max);
  client.setRecvQueueSize(CC_REC_QUEUE_SIZE);
  checkText(text, max);
  if (client.start() !== 'DOCA_ERROR_IN_PROGRESS') throw new DocaError('UNEXPECTED', 'sample', 'the client start did not return DOCA_ERROR_IN_PROGRESS');
  await withTeardown(
    async () => {
      await pe.run({ signal: run.signal, until: () => finish });
      checkTimeout(run, client.state === 'STARTING' ? `the server ${SERVER_NAME} (is it running?)` : "the server's answer");
      if (failure) throw failure;
    },
    [() => client.state !== 'IDLE' && client.stopAndWait({ timeoutMs: 2000 }).catch(() => {}), () => client.destroy(), () => pe.destroy(), () => dev.close()],
  );
}

export const comchCtrlPathServer: SampleSpec = {
  name: 'comch_ctrl_path_server',
  description: 'DOCA Comch control path server (runs on the DPU): prints the client\'s message and answers with its own text.',
  flags: {
    'pci-addr': { short: 'p', type: 'string', description: 'DOCA Comch device PCI address', default: '03:00.0' },
    'rep-pci': { short: 'r', type: 'string', description: 'DOCA Comch device representor PCI address', default: 'b1:00.0' },
    text: { short: 't', type: 'string', description: 'text to send to the client', default: 'Message from the server' },
  },
  run: serverMain,
};

export const comchCtrlPathClient: SampleSpec = {
  name: 'comch_ctrl_path_client',
  description: 'DOCA Comch control path client (runs on the host): sends its text, prints the server\'s answer.',
  flags: {
    'pci-addr': { short: 'p', type: 'string', description: 'DOCA Comch device PCI address', default: 'b1:00.0' },
    text: { short: 't', type: 'string', description: 'text to send to the server', default: 'Message from the client' },
  },
  run: clientMain,
};
