/**
 * The DPA side of the soak (bench/soak.ts), in a process of its own, busy-polling: a MsgQ ping-pong with
 * a DPA thread (the comch_msgq_dpa_pingpong sample's, src/cli/samples/msgq-pingpong.ts), numbered
 * messages whose answers must come back in order, once each, and kernel launches on a second DPA
 * (bench/dpa-apps rate.ts `empty`, 4 instances each) completing on a sync event.
 *
 * The soak's fault plan crashes their execution units now and then (a `crash` of a worker thread of this
 * process, on the liveness cadence the units run). That DPA then goes fatal naming the unit; it is torn
 * down (which must succeed) and started again, and what it held when it died is done again by its
 * successor, as an application that sees the error would: the messages not answered are sent again
 * from the first of them, the launches not completed are launched again. Nothing is lost: at the end
 * every message sent was answered and every launch completed.
 *
 * On `finish` (stdin) it stops, and prints as JSON: messages sent and answered (distinct numbers), out
 * of order or twice, messages sent again; kernels launched and completed, launched again; the crashes
 * and their reasons; the DPAs started.
 */
import { MsgqPingPong } from '../src/cli/samples/msgq-pingpong.js';
import { openDeviceByPci } from '../src/core/dev.js';
import { DocaError } from '../src/core/error.js';
import { DpaApp } from '../src/dpa/app.js';
import { Dpa } from '../src/dpa/dpa.js';
import { SyncEvent } from '../src/sync-event/sync-event.js';
import { HOST } from './peer-lib.js';

const KERNEL_APP = new URL('./dpa-apps/rate.js', import.meta.url);
/** Messages (and launches) in flight at once (the ping-pong posts 16 receives a side). */
const WINDOW = 12;
/** How long a stopping side waits for what is in flight. */
const DRAIN_MS = 5000;
const totals = { sent: 0, answered: 0, outOfOrder: 0, resent: 0, launched: 0, completed: 0, relaunched: 0, crashes: [] as string[], dpas: 0 };
let finishing = false;
process.stdin.on('data', (d) => {
  if (String(d).includes('finish')) finishing = true;
});

const dev = openDeviceByPci(HOST);
const tick = () => new Promise((r) => setImmediate(r));

/** Counts a DPA started; `ready` once both of the first two are (the soak measures the footprint from then). */
function started(): void {
  if (++totals.dpas === 2) process.stdout.write('ready\n');
}

/** One life of the ping-pong's DPA: until it goes fatal (crashed by the plan), or the soak ends and nothing is owed. */
async function pingPongLife(): Promise<void> {
  const pp = MsgqPingPong.open({ dev, poll: false, expected: Number.MAX_SAFE_INTEGER, queue: 16 });
  started();
  // A successor sends again from the first message its predecessor did not answer.
  let next = totals.answered;
  pp.onReply = (imm) => {
    if (new DataView(imm.buffer, imm.byteOffset, 4).getUint32(0, true) === totals.answered) totals.answered++;
    else totals.outOfOrder++;
  };
  const message = new Uint8Array(4);
  const deadline = () => (finishing ? (stopBy ??= performance.now() + DRAIN_MS) : Infinity);
  let stopBy: number | undefined;
  let error: DocaError | undefined;
  while (!(error = pp.dpa.peekAtLastError()) && (finishing ? totals.answered < totals.sent && performance.now() < deadline() : true)) {
    // New messages while the soak runs; when it finishes, only those a dead DPA did not answer.
    for (let i = 0; i < 64 && next - totals.answered < WINDOW && (!finishing || next < totals.sent); i++) {
      new DataView(message.buffer).setUint32(0, next, true);
      try {
        pp.send(message);
      } catch (err) {
        if (!(err instanceof DocaError)) throw err;
        break; // AGAIN (no credit yet), or the DPA failed (its consumers are expired): looked at above
      }
      if (next < totals.sent) totals.resent++;
      next++;
      totals.sent = Math.max(totals.sent, next);
    }
    for (let i = 0; i < 256; i++) pp.pe.progress();
    await tick();
  }
  if (error) totals.crashes.push(error.message);
  await pp.close(); // answers of the dead DPA still in the CPU consumer's queue are taken as it stops
}

/** Launches a crashed DPA did not complete, for its successor. */
let owedLaunches = 0;

/** One life of the kernel DPA: until it goes fatal, or the soak ends and nothing is owed. */
async function kernelLife(): Promise<void> {
  const dpa = Dpa.create(dev);
  dpa.setApp(DpaApp.create(KERNEL_APP));
  dpa.start();
  started();
  const done = SyncEvent.create();
  done.addPublisherLocationDpa(dpa);
  done.addSubscriberLocationCpu(dev);
  done.start();
  let launched = 0;
  const inFlight = () => launched - Number(done.get());
  let stopBy: number | undefined;
  let error: DocaError | undefined;
  while (!(error = dpa.peekAtLastError()) && (!finishing || ((owedLaunches > 0 || inFlight() > 0) && performance.now() < (stopBy ??= performance.now() + DRAIN_MS)))) {
    if (inFlight() < WINDOW && (!finishing || owedLaunches > 0)) {
      try {
        dpa.kernelLaunchUpdateAdd(undefined, 0, done, 1n, 4, 'empty');
        launched++;
        if (owedLaunches > 0) (owedLaunches--, totals.relaunched++);
        else totals.launched++;
      } catch (err) {
        if (!(err instanceof DocaError)) throw err; // DRIVER: the DPA failed, looked at above
      }
    }
    await tick();
  }
  if (error) totals.crashes.push(error.message);
  totals.completed += Number(done.get());
  if (error) owedLaunches += inFlight(); // the crash took them: the next life launches them again
  done.stop();
  done.destroy();
  dpa.destroy();
  await dpa.exited();
}

await Promise.all([
  (async () => {
    // Once finishing, a few more lives at most for what a crash left owed (the plan is cleared by then).
    for (let after = 0; !finishing || (totals.answered < totals.sent && after++ < 3); ) await pingPongLife();
  })(),
  (async () => {
    for (let after = 0; !finishing || (owedLaunches > 0 && after++ < 3); ) await kernelLife();
  })(),
]);
process.stdout.write(JSON.stringify(totals) + '\n');
process.exit(0);
