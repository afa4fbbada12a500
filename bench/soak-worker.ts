/**
 * The soak client's worker thread (bench/soak-peer.ts): a producer on the shared connection that sends
 * numbered messages as fast as it can and counts each completed send in shared memory, so that the
 * count survives the thread being crashed by the fault plan.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { ComchConnectionRef } from '../src/comch/endpoint-table.js';
import { ComchProducer } from '../src/comch/producer.js';
import { openDeviceByPci } from '../src/core/dev.js';
import { DocaError } from '../src/core/error.js';
import { ProgressEngine } from '../src/core/pe.js';
import { HOST, sharedBuffers } from './peer-lib.js';

const { ref, consumer, counts, index } = workerData as { ref: ComchConnectionRef; consumer: number; counts: Int32Array; index: number };
const MSG = 64;
const pe = ProgressEngine.create();
const producer = ComchProducer.create(ref);
const src = sharedBuffers(openDeviceByPci(HOST), MSG, 16);
const bufs = Array.from({ length: 16 }, (_, i) => src.full(i));
let next = 0;
let inFlight = 0;
producer.taskSendSetConf(
  (t) => {
    Atomics.add(counts, index, 1);
    inFlight--;
    t.free();
  },
  (t) => {
    inFlight--;
    t.free();
  },
  16,
);
pe.connectCtx(producer);
producer.start();
let finishing = false;
parentPort!.on('message', () => (finishing = true));
while (!finishing || inFlight > 0) {
  for (let i = 0; i < 1024; i++) {
    if (!finishing && inFlight < 8 && producer.state === 'RUNNING') {
      const buf = bufs[next % 16]!;
      new DataView(buf.getData().buffer, buf.getData().byteOffset).setUint32(0, next, true);
      const t = producer.taskSendAllocInit(buf, undefined, consumer);
      try {
        t.submit();
        next++;
        inFlight++;
      } catch (err) {
        t.free();
        if (!DocaError.is(err, 'AGAIN')) throw err;
      }
    }
    pe.progress();
  }
  if (producer.state !== 'RUNNING') break;
  await new Promise((r) => setImmediate(r));
}
await producer.stopAndWait({ timeoutMs: 5000 }).catch(() => {});
producer.destroy();
process.exit(0);
