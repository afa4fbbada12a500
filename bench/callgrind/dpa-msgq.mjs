/**
 * Callgrind workload, DPA MsgQ ping-pong: the CPU sends 32 bytes of immediate data over a comch MsgQ
 * to a DPA thread (dpa-app.mjs, on a worker thread of this process), which sends them back over a
 * second MsgQ; one operation is one round trip. The DPA thread is activated by each completion and the
 * CPU sleeps on its engine (pe.run) until the answer: a busy-polling CPU would spin for as long as the
 * worker thread is descheduled, which no instruction count can repeat.
 */
import { ARM, CHECKOUT, measure, N, sd } from './common.mjs';

const Q = 16;
const IMM = 32;
const dev = sd.openDeviceByPci(ARM);
const dpa = sd.Dpa.create(dev);
process.env.SOFTDPU_CHECKOUT = CHECKOUT; // for the application's import (workers inherit the environment)
dpa.setApp(sd.DpaApp.create(new URL('./dpa-app.mjs', import.meta.url)));
dpa.start();
const args = dpa.memAlloc(40);
const thread = sd.DpaThread.create(dpa);
thread.setFuncArg('pong', args);
const cc = sd.ComchConsumerCompletion.create(dpa);
cc.setDpaThread(thread);
cc.setMaxNumConsumers(1);
cc.setMaxNumRecv(Q);
cc.setImmDataLen(IMM);
cc.start();
const sent = sd.DpaCompletion.create(dpa, Q);
sent.start();
const toDpa = sd.ComchMsgq.create(dev);
toDpa.setDpaConsumer(dpa);
toDpa.start();
const dpaConsumer = sd.ComchDpaConsumer.create(toDpa);
dpaConsumer.setDatapathOnDpa(dpa);
dpaConsumer.setCompletion(cc);
dpaConsumer.setDevMaxNumRecv(Q);
dpaConsumer.setImmDataLen(IMM);
dpaConsumer.start();
const fromDpa = sd.ComchMsgq.create(dev);
fromDpa.setDpaProducer(dpa);
fromDpa.start();
const dpaProducer = sd.ComchDpaProducer.create(fromDpa);
dpaProducer.setDatapathOnDpa(dpa);
dpaProducer.dpaCompletionAttach(sent);
dpaProducer.setDevMaxNumSend(Q);
dpaProducer.start();

const pe = sd.ProgressEngine.create();
const free = (t) => t.free();
const producer = toDpa.producerCreate();
pe.connectCtx(producer);
producer.taskSendSetConf(free, free, Q);
producer.start();
const consumer = fromDpa.consumerCreate();
pe.connectCtx(consumer);
consumer.setImmDataLen(IMM);
let replies = 0;
consumer.taskPostRecvSetConf((t) => (replies++, consumer.state === 'RUNNING' ? t.submit() : t.free()), free, Q);
consumer.start();
for (let i = 0; i < Q; i++) consumer.taskPostRecvAllocInit().submit();
const a = new DataView(new ArrayBuffer(40));
[cc.getDpaHandle(), dpaConsumer.getDpaHandle(), dpaProducer.getDpaHandle(), sent.getDpaHandle(), BigInt(consumer.getId())].forEach((v, i) => a.setBigUint64(i * 8, v, true));
dpa.h2dMemcpy(args, new Uint8Array(a.buffer));
thread.start();
thread.run();
dpa.rpc('pong_init', dpaConsumer.getDpaHandle(), BigInt(Q));

const imm = new Uint8Array(IMM).fill(3);
await measure((i) => {
  producer.taskSendAllocInit(undefined, imm, dpaConsumer.getId()).submit();
  return pe.run({ until: () => replies > i });
});
await producer.stopAndWait({ timeoutMs: 5000 });
await consumer.stopAndWait({ timeoutMs: 5000 });
// Children first: CPU endpoints, DPA endpoints, queues, completions, the thread, the engine, the DPA.
for (const undo of [
  () => producer.destroy(),
  () => consumer.destroy(),
  () => dpaProducer.stop(),
  () => dpaProducer.destroy(),
  () => dpaConsumer.stop(),
  () => dpaConsumer.destroy(),
  () => fromDpa.destroy(),
  () => toDpa.destroy(),
  () => sent.stop(),
  () => sent.destroy(),
  () => cc.stop(),
  () => cc.destroy(),
  () => thread.stop(),
  () => thread.destroy(),
  () => pe.destroy(),
  () => dpa.destroy(),
]) {
  try {
    undo();
  } catch (err) {
    if (!sd.DocaError.is(err, 'BAD_STATE')) throw err; // already stopped
  }
}
await dpa.exited();
console.log(JSON.stringify({ workload: 'dpa-msgq', ops: N, replies }));
