/**
 * The DPA benchmark's measurements, in one process (the DPA runs on its worker threads):
 *   rtt_poll       CPU -> DPA -> CPU immediate round trips over two MsgQs, the CPU busy-polling its engine
 *                  and the DPA thread polling its completions
 *   rtt_activated  the same, the CPU asleep on its engine and the DPA thread activated by each completion
 *   message_port, sab_spin   threads-peer.ts's baselines with the same count
 *   rate           one-way CPU -> DPA messages per second (credits permitting), the DPA thread activated
 *   launch         kernel launch-to-completion latency (one instance, completion event add, CPU polling it)
 * `dpa-peer N RATE_N LAUNCH_N` prints them as one JSON object. `dpa-peer alloc N RATE_N` measures the CPU
 * side's allocation per message instead (lib/alloc.ts): {"rtt_poll": {...}} (a MsgQ send and a receive
 * per trip) and {"rate": {...}} (a send per message); the DPA side, on its worker threads, is not measured.
 */
import { MsgqPingPong } from '../src/cli/samples/msgq-pingpong.js';
import { ComchMsgq } from '../src/comch/msgq.js';
import { type Dev, openDeviceByPci } from '../src/core/dev.js';
import { DocaError } from '../src/core/error.js';
import { ProgressEngine } from '../src/core/pe.js';
import type { Task } from '../src/core/task.js';
import { DpaApp } from '../src/dpa/app.js';
import { ComchConsumerCompletion } from '../src/dpa/consumer-completion.js';
import { ComchDpaConsumer } from '../src/dpa/comch-consumer.js';
import { Dpa } from '../src/dpa/dpa.js';
import { DpaThread } from '../src/dpa/thread.js';
import { SyncEvent } from '../src/sync-event/sync-event.js';
import { AllocMeter, type AllocFigures, cpuMeter, rttSummary } from './lib.js';
import { HOST, SpinGuard, watchdog } from './peer-lib.js';
import { messagePortRtt, sabSpinRtt, type ThreadRtt } from './threads-peer.js';

const RATE_APP = new URL('./dpa-apps/rate.js', import.meta.url);
const QUEUE = 64;

const result = (samples: number[], cpuUs: number): ThreadRtt => rttSummary(samples, cpuUs);

async function rtt(dev: Dev, n: number, poll: boolean, meter?: AllocMeter): Promise<ThreadRtt> {
  const pp = MsgqPingPong.open({ dev, poll, expected: n + 1, queue: 16 });
  let replies = 0;
  pp.onReply = () => replies++;
  const msg = new Uint8Array(32).fill(0x61);
  const samples = new Array<number>(n);
  const pe = pp.pe;
  const guard = new SpinGuard();
  const cpu = cpuMeter();
  // Measuring allocation, the trips are not timed: performance.now() allocates (32 B a read on Node 20).
  const clock = meter ? () => 0 : () => performance.now();
  for (let i = 0; i < n; i++) {
    const t0 = clock();
    pp.send(msg);
    if (poll) {
      for (guard.reset(); replies <= i; pe.progress()) if (guard.overdue()) throw new Error(`dpa-peer rtt: no reply to trip ${i} within ${guard.ms} ms`);
      meter?.tick();
    } else {
      while (replies <= i) {
        if (pe.progress()) continue;
        pe.requestNotification();
        if (replies <= i && !pe.progress()) await pe.waitNotification({ timeoutMs: 5000 });
        pe.clearNotification();
      }
    }
    samples[i] = (clock() - t0) * 1000;
  }
  const out = result(samples, cpu());
  await pp.close();
  return out;
}

/** One-way CPU -> DPA: sends `n` messages as fast as the DPA's receives allow; messages per second. */
async function rate(dev: Dev, n: number, meter?: AllocMeter): Promise<number> {
  const dpa = Dpa.create(dev);
  dpa.setApp(DpaApp.create(RATE_APP));
  dpa.start();
  const count = SyncEvent.create();
  count.addPublisherLocationDpa(dpa);
  count.addSubscriberLocationCpu(dev);
  count.start();
  const args = dpa.memAlloc(24);
  const thread = DpaThread.create(dpa);
  thread.setFuncArg('sink', args);
  const cc = ComchConsumerCompletion.create(dpa);
  cc.setDpaThread(thread);
  cc.setMaxNumRecv(QUEUE);
  cc.start();
  const msgq = ComchMsgq.create(dev);
  msgq.setDpaConsumer(dpa);
  msgq.start();
  const consumer = ComchDpaConsumer.create(msgq);
  consumer.setDatapathOnDpa(dpa);
  consumer.setCompletion(cc);
  consumer.setDevMaxNumRecv(QUEUE);
  consumer.start();
  const pe = ProgressEngine.create();
  const producer = msgq.producerCreate();
  pe.connectCtx(producer);
  const free = (t: Task) => t.free();
  producer.taskSendSetConf(free, free, QUEUE);
  producer.start();
  const a = new DataView(new ArrayBuffer(24));
  [cc.getDpaHandle(), consumer.getDpaHandle(), count.getDpaHandle(dpa)].forEach((v, i) => a.setBigUint64(i * 8, v, true));
  dpa.h2dMemcpy(args, new Uint8Array(a.buffer));
  thread.start();
  thread.run();
  dpa.rpc('post', consumer.getDpaHandle(), BigInt(QUEUE));
  const msg = new Uint8Array(32).fill(0x62);
  const guard = new SpinGuard();
  const t0 = performance.now();
  for (let sent = 0; sent < n; ) {
    if (guard.overdue()) throw new Error(`dpa-peer rate: message ${sent} of ${n} refused for ${guard.ms} ms (the DPA acks nothing?)`);
    while (pe.progress());
    const task = producer.taskSendAllocInit(undefined, msg, consumer.getId());
    try {
      task.submit();
      sent++;
      guard.reset();
      meter?.tick();
    } catch (err) {
      task.free();
      if (!DocaError.is(err, 'AGAIN')) throw err;
    }
  }
  for (guard.reset(); count.get() < BigInt(n); ) {
    if (guard.overdue()) throw new Error(`dpa-peer rate: the DPA counted ${count.get()} of ${n} messages and no more within ${guard.ms} ms`);
    while (pe.progress());
  }
  const perSecond = n / ((performance.now() - t0) / 1000);
  await producer.stopAndWait();
  producer.destroy();
  pe.destroy();
  thread.stop();
  consumer.stop();
  consumer.destroy();
  msgq.destroy();
  cc.stop();
  cc.destroy();
  thread.destroy();
  count.stop();
  count.destroy();
  dpa.destroy();
  await dpa.exited();
  return perSecond;
}

/**
 * Kernel launch to completion: `n` launches one after the other, the CPU spinning on the completion
 * event as DOCA's kernel launch sample does (doca_sync_event_wait_gt; a poll of get() against a new
 * BigInt each time would measure the garbage it makes).
 */
async function launch(dev: Dev, n: number): Promise<ThreadRtt> {
  const dpa = Dpa.create(dev);
  dpa.setApp(DpaApp.create(RATE_APP));
  dpa.start();
  const comp = SyncEvent.create();
  comp.addPublisherLocationDpa(dpa);
  comp.addSubscriberLocationCpu(dev);
  comp.start();
  const samples = new Array<number>(n);
  const cpu = cpuMeter();
  const bounded = { timeoutMs: 10_000 }; // TIME_OUT names the value it waited for
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    dpa.kernelLaunchUpdateAdd(undefined, 0, comp, 1n, 1, 'empty');
    comp.waitGt(i, undefined, bounded);
    samples[i] = (performance.now() - t0) * 1000;
  }
  const out = result(samples, cpu());
  comp.stop();
  comp.destroy();
  dpa.destroy();
  await dpa.exited();
  return out;
}

watchdog('dpa-peer');
const alloc = process.argv[2] === 'alloc';
const [n, rateN, launchN] = process.argv.slice(alloc ? 3 : 2).map(Number) as [number, number, number];
const dev = openDeviceByPci(HOST);
const measured = async (fn: (m: AllocMeter) => Promise<unknown>, total: number): Promise<AllocFigures> => {
  const m = new AllocMeter(total);
  await fn(m);
  return m.figures();
};
const out = alloc ? { rtt_poll: await measured((m) => rtt(dev, n, true, m), n), rate: await measured((m) => rate(dev, rateN, m), rateN) } : {
  rtt_poll: await rtt(dev, n, true),
  rtt_activated: await rtt(dev, n, false),
  message_port: await messagePortRtt(n),
  sab_spin: await sabSpinRtt(n),
  rate_msgs_per_s: await rate(dev, rateN),
  launch: await launch(dev, launchN),
};
dev.close();
process.stdout.write(JSON.stringify(out) + '\n');
process.exit(0);
