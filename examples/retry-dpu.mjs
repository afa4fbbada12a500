// The DPU side of examples/retry-host.mjs: a comch echo server on Arm device 03:00.0 for host function
// b1:00.0, serving until SIGINT or SIGTERM (or until a fault plan kills it: docs/faults.md).
import { ComchServer, DevinfoRepFilter, ProgressEngine, openDeviceByPci, openRepresentorByPci } from 'softdpu';

const arm = openDeviceByPci('03:00.0');
const rep = openRepresentorByPci(arm, DevinfoRepFilter.NET, 'b1:00.0');
const pe = ProgressEngine.create();
const server = ComchServer.create(arm, rep, 'retry');
pe.connectCtx(server);
server.taskSendSetConf(() => {}, () => {}, 16);
server.start();
const stop = new AbortController();
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => stop.abort());
const driving = pe.run({ signal: stop.signal, until: () => false });
try {
  for await (const { connection, data } of server.messages({ signal: stop.signal })) {
    await connection.send(data).catch(() => {}); // that client is gone: serve the next one
  }
} catch (err) {
  if (!stop.signal.aborted) throw err;
}
await driving;
await server[Symbol.asyncDispose]();
