/**
 * The DPA samples, each one process (the DPA runs on worker threads of the process that starts it):
 *
 * dpa_wait_kernel_launch: NVIDIA's dpa_kernel_launch flow. A wait event (CPU publisher, DPA subscriber)
 * and a completion event (DPA publisher, CPU subscriber); a `hello_world` kernel launched to wait for the
 * wait event to reach 4 and then set the completion event to 10; a separate thread (a worker that
 * imports the wait event) sets it to 5; the host waits for the completion event; all is destroyed.
 *
 * comch_msgq_dpa_pingpong: two MsgQs (CPU -> DPA, DPA -> CPU) and a DPA thread that answers each
 * message with the same bytes and counts them on a sync event; the CPU checks every byte and the order,
 * then waits for the count.
 */
import { Worker } from 'node:worker_threads';
import { Dev, openDeviceByPci } from '../../core/dev.js';
import { devinfoCreateList, devinfoDestroyList } from '../../core/devinfo.js';
import { DocaError } from '../../core/error.js';
import { DpaApp } from '../../dpa/app.js';
import { Dpa, dpaCapIsSupported } from '../../dpa/dpa.js';
import { SyncEvent } from '../../sync-event/sync-event.js';
import { checkTimeout, POSITIVE_INTEGER, type SampleRun, type SampleSpec } from './common.js';
import { MsgqPingPong } from './msgq-pingpong.js';

const KERNEL_APP = new URL('./dpa-apps/kernel-launch.js', import.meta.url);
const WAIT_THRESHOLD = 4;
const COMP_VALUE = 10n;
/** How long the separate thread waits before it sets the wait event (NVIDIA's sample: 5 s). */
const SETTER_DELAY_MS = 500;

const PF_DEV = { alias: 'pf_dev', type: 'string', description: 'PF device (IB device name or PCI address) with a DPA; default: the first one' } as const;

/** The device DPA samples run on: `-pf_dev` (an IB device name or a PCI address), else the first with a DPA. */
export function openDpaDevice(name: string | undefined): Dev {
  if (name && /^[0-9a-f]{0,4}:?[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$/i.test(name)) {
    return openDeviceByPci(name, { check: (d) => {
      if (!dpaCapIsSupported(d)) throw new DocaError('NOT_SUPPORTED', 'open_dpa_device', `${name} has no DPA`);
    } });
  }
  const list = devinfoCreateList();
  try {
    const found = list.find((d) => dpaCapIsSupported(d) && (name === undefined || d.getIbdevName() === name));
    if (!found) throw new DocaError('NOT_FOUND', 'open_dpa_device', name ? `no device named ${name} has a DPA` : 'no device of the topology has a DPA');
    return Dev.open(found);
  } finally {
    devinfoDestroyList(list);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits (letting the event loop turn, so that DPA log lines show) until `done()`, within the run's timeout. */
async function until(run: SampleRun, done: () => boolean, what: string): Promise<void> {
  while (!done()) {
    checkTimeout(run, what);
    await sleep(1);
  }
}

/** The separate thread of NVIDIA's sample: imports the wait event and sets it to 5 after a delay. */
function setterThread(dev: Dev, blob: Uint8Array): Promise<void> {
  const topology = dev.fabric.topology.source === 'default' ? undefined : dev.fabric.topology.source;
  const workerData = { pci: dev.asDevinfo().getPciAddrStr(), blob, delayMs: SETTER_DELAY_MS, fabric: dev.fabric.dir, topology };
  const worker = new Worker(new URL('./wait-event-setter.js', import.meta.url), { workerData });
  return new Promise((resolve, reject) => {
    worker.once('error', reject);
    worker.once('exit', (code) => (code === 0 ? resolve() : reject(new DocaError('OPERATING_SYSTEM', 'wait_event_update_thread', `the thread exited with ${code}`))));
  });
}

async function kernelLaunch(run: SampleRun): Promise<void> {
  const dev = openDpaDevice(run.values['pf-device'] as string | undefined);
  const dpa = Dpa.create(dev);
  const events: SyncEvent[] = [];
  try {
    dpa.setApp(DpaApp.create(KERNEL_APP));
    dpa.start();
    run.log.info(`DPA started on ${dev.asDevinfo().getPciAddrStr()} with ${dpa.getTotalNumEusAvailable()} execution units`);
    const wait = SyncEvent.create();
    events.push(wait);
    wait.addPublisherLocationCpu(dev);
    wait.addSubscriberLocationDpa(dpa);
    wait.start();
    const comp = SyncEvent.create();
    events.push(comp);
    comp.addPublisherLocationDpa(dpa);
    comp.addSubscriberLocationCpu(dev);
    comp.start();
    dpa.kernelLaunchUpdateSet(wait, WAIT_THRESHOLD, comp, COMP_VALUE, 1, 'hello_world');
    run.log.info(`Kernel hello_world launched: it waits for the wait event to reach ${WAIT_THRESHOLD}`);
    let failed: unknown;
    const setter = setterThread(dev, wait.exportToRemotePci(dev)).catch((err: unknown) => (failed = err ?? new Error('the setter thread failed')));
    await until(run, () => failed !== undefined || comp.get() > COMP_VALUE - 1n, 'the completion event');
    await setter;
    if (failed !== undefined) throw failed;
    await sleep(10); // the kernel's log line travels through the event loop
    run.log.info(`The completion event reached ${comp.get()}: the kernel ran after the wait event was set`);
  } finally {
    for (const e of events) {
      e.stop();
      e.destroy();
    }
    dpa.destroy();
    await dpa.exited();
    dev.close();
  }
}

export const dpaWaitKernelLaunch: SampleSpec = {
  name: 'dpa_wait_kernel_launch',
  description: 'a DPA kernel that waits for a sync event set by another thread, then completes another',
  flags: { 'pf-device': PF_DEV },
  run: kernelLaunch,
};

async function pingPong(run: SampleRun): Promise<void> {
  const n = Number(run.values.count); // checked by runSample (POSITIVE_INTEGER)
  const dev = openDpaDevice(run.values['pf-device'] as string | undefined);
  try {
    const pp = MsgqPingPong.open({ dev, poll: run.values.poll === true, expected: n });
    try {
      run.log.info(`Two MsgQs and a DPA thread ready on ${dev.asDevinfo().getPciAddrStr()}; sending ${n} messages`);
      const answers: Uint8Array[] = [];
      let arrived: (() => void) | undefined;
      pp.onReply = (imm) => {
        answers.push(imm.slice());
        arrived?.();
      };
      const stop = new AbortController();
      const driving = pp.pe.run({ mode: run.values.poll ? 'busy' : 'notify', signal: stop.signal });
      try {
        for (let i = 0; i < n; i++) {
          const msg = message(i);
          while (!trySend(pp, msg)) {
            checkTimeout(run, 'a receive posted by the DPA');
            await sleep(0);
          }
          while (answers.length <= i) {
            checkTimeout(run, `the answer to message ${i}`);
            await new Promise<void>((resolve) => {
              arrived = resolve;
              setTimeout(resolve, 100).unref(); // a bound: the timeout is looked at every 100 ms
            });
          }
          const got = answers[i]!;
          if (got.length !== msg.length || got.some((b, k) => b !== msg[k])) throw new DocaError('UNEXPECTED', 'comch_msgq_dpa_pingpong', `answer ${i} is not message ${i}`);
        }
      } finally {
        stop.abort();
        await driving;
      }
      await until(run, () => pp.answered() >= BigInt(n), 'the DPA count event');
      run.log.info(`All ${n} answers came back in order with every byte; the DPA counted ${pp.answered()}`);
    } finally {
      await pp.close();
    }
  } finally {
    dev.close();
  }
}

/** Sends `msg`; false while the DPA has no receive posted (AGAIN). */
function trySend(pp: MsgqPingPong, msg: Uint8Array): boolean {
  try {
    pp.send(msg);
    return true;
  } catch (err) {
    if (DocaError.is(err, 'AGAIN')) return false;
    throw err;
  }
}

/** Message `i`: its number, then bytes that depend on it (32 bytes, the most immediate data holds). */
function message(i: number): Uint8Array {
  const m = new Uint8Array(32);
  new DataView(m.buffer).setUint32(0, i, true);
  for (let k = 4; k < 32; k++) m[k] = (i * 31 + k) & 0xff;
  return m;
}

export const comchMsgqDpaPingpong: SampleSpec = {
  name: 'comch_msgq_dpa_pingpong',
  description: 'CPU -> DPA -> CPU over two comch MsgQs; a DPA thread answers and counts each message',
  flags: {
    'pf-device': PF_DEV,
    count: { short: 'n', type: 'string', description: 'messages to exchange', default: '100', value: POSITIVE_INTEGER },
    poll: { type: 'boolean', description: 'the DPA thread and the CPU poll instead of sleeping between messages' },
  },
  run: pingPong,
};
