/**
 * Callgrind workload, comch control path: a client sends a 64-byte message (send task alloc, submit)
 * over its connection, the server's recv event takes it and the client's completion frees the task;
 * one operation is one message, sent and received, both sides busy-polling in this one process.
 */
import { comchPair, measure, N, sd, settle, spin } from './common.mjs';

const MSG = new Uint8Array(64).fill(0x61);
const { spe, cpe, server, client } = await comchPair('cg-ctrl');
let received = 0;
let completed = 0;
server.eventMsgRecvRegister(() => received++);
server.taskSendSetConf((t) => t.free(), (t) => t.free(), 16);
client.taskSendSetConf(
  (t) => (completed++, t.free()),
  (t) => {
    throw new Error(`send failed: ${t.error?.message}`);
  },
  16,
);
server.start();
client.start();
const engines = [cpe, spe];
await settle(engines, () => client.state === 'RUNNING' && server.connections.length > 0);
const conn = client.getConnection();
await measure((i) => {
  client.taskSendAllocInit(conn, MSG).submit();
  spin(engines, () => received > i && completed > i);
});
await client.stopAndWait();
await settle(engines, () => server.connections.length === 0);
await server.stopAndWait();
console.log(JSON.stringify({ workload: 'comch-ctrl', ops: N, received }));
