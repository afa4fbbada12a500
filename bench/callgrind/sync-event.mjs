/**
 * Callgrind workload, sync event: two events created on the DPU's Arm device and exported to the host,
 * whose handles (imported from the export blobs) answer: the creator sets e1 = i, the host waits for
 * e1 == i and sets e2 = i, the creator waits for e2 == i (synchronous update_set and wait_eq). One
 * operation is one such pair of update+wait pairs, in this one process.
 */
import { ARM, HOST, measure, N, sd } from './common.mjs';

const arm = sd.openDeviceByPci(ARM);
const host = sd.openDeviceByPci(HOST);
const created = [0, 1].map(() => {
  const e = sd.SyncEvent.create();
  e.addPublisherLocationRemotePci();
  e.addSubscriberLocationCpu(arm);
  e.start();
  return e;
});
const imported = created.map((e) => {
  const h = sd.SyncEvent.createFromExport(host, e.exportToRemotePci(arm));
  h.start();
  return h;
});
const [e1, e2] = created;
const [h1, h2] = imported;
await measure((i) => {
  const v = BigInt(i + 1);
  e1.updateSet(v);
  h1.waitEq(v);
  h2.updateSet(v);
  e2.waitEq(v);
});
const value = e2.get();
for (const e of [...imported, ...created]) {
  e.stop();
  e.destroy();
}
console.log(JSON.stringify({ workload: 'sync-event', ops: N, value: Number(value) }));
