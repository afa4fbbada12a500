/**
 * Callgrind workload, comch fast path: a producer on the client's connection sends a 64-byte buffer
 * (with 32 bytes of immediate data) to a consumer on the server's, whose post-recv task completes and
 * is posted again, and the producer's send task completes and is submitted again; one operation is one
 * buffer through, both sides busy-polling in this one process.
 */
import { comchPair, measure, N, sd, settle, spin } from './common.mjs';

const SIZE = 64;
const POSTED = 16;
const { arm, host, spe, cpe, server, client } = await comchPair('cg-fast');
const peerConsumers = [];
client.eventConsumerRegister((_e, _c, id) => peerConsumers.push(id), () => {});
for (const ctx of [server, client]) ctx.taskSendSetConf((t) => t.free(), (t) => t.free(), 4);
server.start();
client.start();
const engines = [cpe, spe];
await settle(engines, () => client.state === 'RUNNING' && server.connections.length > 0);

/** `count` buffers of SIZE bytes in one started map of shared memory that `dev` reaches. */
function buffers(dev, count) {
  const mem = sd.allocSharedMemory(SIZE * count);
  mem.fill(0x5a);
  const map = sd.Mmap.create();
  map.setMemrange(mem);
  map.setPermissions(sd.AccessFlag.LOCAL_READ_WRITE | sd.AccessFlag.PCI_READ_WRITE);
  map.addDev(dev);
  map.start();
  const inv = sd.BufInventory.create(count);
  inv.start();
  const range = (i) => mem.subarray(i * SIZE, (i + 1) * SIZE);
  return { map, inv, empty: (i) => inv.bufGetByAddr(map, range(i)), full: (i) => inv.bufGetByData(map, range(i)) };
}

let received = 0;
let sent = 0;
const fail = (t) => {
  throw new Error(`fast path task failed: ${t.getStatus()} ${t.error?.message}`);
};
const dst = buffers(arm, POSTED);
const consumerPe = sd.ProgressEngine.create();
const consumer = sd.ComchConsumer.create(server.connections[0], dst.map);
consumer.setImmDataLen(32);
consumer.taskPostRecvSetConf((t) => (received++, t.submit()), (t) => t.free(), POSTED);
consumerPe.connectCtx(consumer);
consumer.start();
await settle([spe, consumerPe, cpe], () => consumer.state === 'RUNNING' && peerConsumers.length === 1);
for (let i = 0; i < POSTED; i++) consumer.taskPostRecvAllocInit(dst.empty(i)).submit();

const src = buffers(host, 1);
const producerPe = sd.ProgressEngine.create();
const producer = sd.ComchProducer.create(client.getConnection());
producer.taskSendSetConf(() => sent++, fail, 4);
producerPe.connectCtx(producer);
producer.start();
await settle([producerPe, cpe], () => producer.state === 'RUNNING');
const task = producer.taskSendAllocInit(src.full(0), new Uint8Array(32).fill(7), peerConsumers[0]);

const hot = [producerPe, consumerPe];
await measure((i) => {
  task.submit();
  spin(hot, () => received > i && sent > i);
});
task.free();
await producer.stopAndWait();
await consumer.stopAndWait({ timeoutMs: 5000 }).catch(() => {}); // posted buffers come back flushed
await client.stopTree({ timeoutMs: 5000 });
await server.stopTree({ timeoutMs: 5000 });
console.log(JSON.stringify({ workload: 'comch-fastpath', ops: N, received }));
